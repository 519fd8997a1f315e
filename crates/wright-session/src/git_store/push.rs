//! Pushing a conversation's step commits to the git store, on a thread of its own: a
//! step offers its commit and goes on; the thread pushes the last one offered (see the
//! parent module for what it guarantees).

use super::GitStore;
use super::Pushed;
use super::REF;
use crate::working_copy::steps;
use crate::working_copy::steps::Kept;
use crate::working_copy::steps::Saved;
use anyhow::Context;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::time::Duration;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;
use wright_sandbox::Sandbox;

/// The most a push may send (the first sends the repository's history as well).
const MAX_PACK: u64 = 4 << 30;
/// How long the end of a run waits for the push under way.
const SETTLE: Duration = Duration::from_secs(120);

/// Pushes the step commits of one conversation, in the background.
pub(crate) struct Pusher {
    inner: Arc<Inner>,
}

struct Inner {
    store: GitStore,
    id: String,
    sandbox: Sandbox,
    env: Vec<(String, String)>,
    clone_root: PathBuf,
    /// The user's repository: the store's object format is its.
    like: UserRepo,
    /// Where failed pushes are written (`git-store.log` in the conversation's directory).
    log: PathBuf,
    state: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    /// The last step offered and not pushed yet.
    next: Option<Pushed>,
    /// A push is under way.
    busy: bool,
    /// The conversation is gone: the thread ends.
    closed: bool,
}

impl Pusher {
    pub(crate) fn start(
        store: &GitStore,
        id: &str,
        sandbox: &Sandbox,
        env: &[(String, String)],
        clone_root: &Path,
        like: &UserRepo,
        conversation_dir: &Path,
    ) -> Option<Self> {
        let log = conversation_dir.join("git-store.log");
        let inner = Arc::new(Inner {
            store: store.clone(),
            id: id.to_string(),
            sandbox: sandbox.clone(),
            env: env.to_vec(),
            clone_root: clone_root.to_path_buf(),
            like: like.clone(),
            log: log.clone(),
            state: Mutex::default(),
            changed: Condvar::new(),
        });
        let worker = inner.clone();
        let spawned = std::thread::Builder::new()
            .name("wright-git-store".into())
            .spawn(move || worker.work());
        match spawned {
            Ok(_) => Some(Self { inner }),
            Err(err) => {
                write_log(&log, &format!("no thread to push the steps' files: {err}"));
                None
            }
        }
    }

    /// Queues the step's files for the store (a later offer replaces one not pushed yet).
    pub(crate) fn offer(&self, kept: &Kept) {
        let Saved::Commit(commit) = &kept.saved else {
            return;
        };
        // This clone now holds that step's files, pushed or not.
        crate::clone_step::mark(&self.inner.clone_root, kept.last);
        if let Ok(mut queue) = self.inner.state.lock() {
            queue.next = Some(Pushed {
                first: kept.first,
                last: kept.last,
                commit: commit.clone(),
            });
            self.inner.changed.notify_all();
        }
    }

    /// Waits until what was offered is pushed (or failed), at most `SETTLE`.
    pub(crate) fn settle(&self) {
        let Ok(queue) = self.inner.state.lock() else {
            return;
        };
        let _ = self
            .inner
            .changed
            .wait_timeout_while(queue, SETTLE, |q| q.next.is_some() || q.busy);
    }
}

impl Drop for Pusher {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.inner.state.lock() {
            queue.closed = true;
            self.inner.changed.notify_all();
        }
    }
}

impl Inner {
    fn work(&self) {
        loop {
            let next = {
                let Ok(queue) = self.state.lock() else {
                    return;
                };
                let Ok(mut queue) = self
                    .changed
                    .wait_while(queue, |q| q.next.is_none() && !q.closed)
                else {
                    return;
                };
                let Some(next) = queue.next.take() else {
                    return;
                };
                queue.busy = true;
                next
            };
            if let Err(err) = self.push(&next) {
                write_log(
                    &self.log,
                    &format!(
                        "the files after event {} did not reach the git store {} (a takeover would lose them): {err:#}",
                        next.last,
                        self.store.root.display()
                    ),
                );
            }
            if let Ok(mut queue) = self.state.lock() {
                queue.busy = false;
                self.changed.notify_all();
            }
        }
    }

    fn push(&self, pushed: &Pushed) -> anyhow::Result<()> {
        let commit = Oid::parse(&pushed.commit).context("not a commit id")?;
        // A replica that lost the conversation's lease may still be pushing its last
        // step: the run that took it over logs later events, and is never set back.
        if self
            .store
            .pushed(&self.id)
            .is_some_and(|current| current.last > pushed.last)
        {
            return Ok(());
        }
        let store = UserRepo::bare_store(&self.store.repository(&self.id), &self.like)?;
        if store.reference(REF).as_ref() != Some(&commit) {
            let git = AgentRepo::new(&self.sandbox, &self.env, &self.clone_root);
            let empty = self.like.empty_tree_id();
            let sent = match store.reference(REF) {
                // Only what the store lacks: the commits after the last one pushed.
                Some(base) => git
                    .send_objects(&commit, &base, None, &store, MAX_PACK)
                    .or_else(|_| git.send_objects(&commit, &empty, None, &store, MAX_PACK)),
                None => git.send_objects(&commit, &empty, None, &store, MAX_PACK),
            };
            sent?;
            store.set_reference(REF, &commit)?;
        }
        self.store.write_pushed(&self.id, pushed)?;
        Ok(())
    }
}

impl crate::Session {
    /// From now on, the files of each step of `conversation` (in a clone: others keep
    /// none) are pushed to `store` after they are kept, in the background.
    pub fn keep_steps_in(&self, conversation: &mut crate::Running, store: &GitStore) {
        let crate::working_copy::WorkingCopy::Clone(clone) = &self.working_copy else {
            return;
        };
        let setup = &self.tools.setup;
        let Some(pusher) = Pusher::start(
            store,
            &self.id,
            &setup.sandbox,
            &setup.env,
            &clone.clone_root,
            &clone.repo,
            &self.conversation_dir,
        ) else {
            return;
        };
        let keeper = steps::StepFiles::pushing(clone, setup, &self.conversation_dir, pusher);
        conversation
            .conversation
            .set_step_snapshot(Arc::new(keeper));
    }
}

/// Appends `line` to the push log at `path`, with the time (a log that cannot be written
/// loses the line: pushing goes on).
fn write_log(path: &Path, line: &str) {
    use std::io::Write;
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "{now} {line}"));
}
