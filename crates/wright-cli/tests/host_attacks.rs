//! Attacks on wright's own host-side work: what the agent plants in the workspace, its
//! `.git`, its scratch files and its output, waiting for a process outside the sandbox to
//! follow, parse or run it. Each test plants through the real tools under the default
//! sandbox and checks that nothing outside was touched, read or run.

mod injection;
