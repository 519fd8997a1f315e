//! The browser UI that `wright serve` serves, in a real headless Chromium: a
//! conversation started from the form, watched as it streams, stopped, messaged, forked,
//! its diff opened and applied — on a laptop's window and on a phone's screen, with a
//! screenshot of each page (under the build's `tmp/ui-screenshots/`); and what the agent
//! writes (a file name, a diff, a command's output, its own words) shown as text, never
//! run. Skipped loudly when Chromium is not installed.

mod agent;
mod agent_permission;
mod automations;
pub mod browser;
mod confirm;
mod flows;
mod hostile;
mod kinds;
mod live;
mod long;
mod screenshots;
mod settings;
mod signin;
mod steering;
mod workspace;
