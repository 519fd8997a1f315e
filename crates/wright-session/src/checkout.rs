//! The agent's clone checked out while the first model request is made: the request needs
//! the prompt, which is read from the user's repository (its objects), not the clone's
//! work tree. The checkout runs in the sandbox on a thread of its own, once the sandbox's
//! check has said yes.
//!
//! What it guarantees: nothing touches the workspace before the checkout is done. The
//! sandbox the tools get waits for it as it waits for its check (`Sandbox::awaiting`:
//! every command, shell, hook, MCP server, git of wright's in the clone), the conversation
//! waits for it before anything of its first reply runs (`Conversation::wait_for_workspace`:
//! wright's in-process tools), and the disk guard measures the start after it. A checkout
//! that fails (or a check that refuses) fails every one of them with its words; the
//! session's end then removes the clone, in which nothing ran. Dropped, it waits for the
//! thread, so the clone is never removed under a checkout still writing it.

use crate::sandbox_setup::SandboxSetup;
use crate::working_copy::AgentClone;
use anyhow::Context;
use std::thread::JoinHandle;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::Verdict;

pub struct CheckingOut {
    thread: Option<JoinHandle<()>>,
    ready: Verdict,
}

impl CheckingOut {
    /// Starts checking `clone` out in `setup`'s sandbox, and makes that sandbox wait for
    /// it: what the tools get from `setup` afterwards starts nothing before it is done.
    pub fn start(clone: &AgentClone, setup: &mut SandboxSetup) -> anyhow::Result<Self> {
        let (ready, settler) = Verdict::settled_later();
        // This one waits for the check only: the checkout itself runs in it.
        let sandbox = setup.sandbox.clone();
        let env = setup.env.clone();
        let (root, branch, base) = (
            clone.clone_root.clone(),
            clone.branch.clone(),
            clone.base.clone(),
        );
        let thread = std::thread::Builder::new()
            .name("checkout".into())
            .spawn(move || {
                // A refusing check is said in its own words.
                let outcome = sandbox
                    .ready_blocking()
                    .map_err(|err| err.to_string())
                    .and_then(|()| {
                        AgentRepo::new(&sandbox, &env, &root)
                            .check_out_new_branch(&branch, &base)
                            .context("cannot check out the agent's clone")
                            .map_err(|err| format!("{err:#}"))
                    });
                settler.settle(outcome);
            })
            .context("cannot start the checkout of the agent's clone")?;
        setup.sandbox = setup.sandbox.clone().awaiting(ready.clone());
        Ok(Self {
            thread: Some(thread),
            ready,
        })
    }

    /// What waits for the checkout: yes once it is done, or its error.
    pub fn ready(&self) -> Verdict {
        self.ready.clone()
    }

    /// Waits for the checkout: its error, if it failed.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.ready.wait().map_err(|err| err.to_string())
    }
}

impl Drop for CheckingOut {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
