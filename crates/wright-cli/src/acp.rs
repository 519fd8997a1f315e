//! `wright acp`: wright as an agent of the Agent Client Protocol on stdin and stdout, for
//! editors (`wright_acp`), with this program's settings: each session's are resolved as
//! `wright run` resolves them (the command's flags are every session's), asking before
//! risky actions by default (the editor answers). Nothing but the protocol goes to stdout; what is said besides goes to
//! stderr, which editors keep as the agent's log.

use crate::settings::CommonArgs;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::sync::Arc;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_session::Front;
use wright_session::Session;

#[derive(Args)]
pub struct AcpArgs {
    /// The settings of every session, as for `wright run`.
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn acp(args: AcpArgs) -> Result<u8> {
    // Not dumpable: no command of an agent (same user, no capabilities) reads this
    // process's memory or environment, where the API key may be.
    let _ = nix::sys::prctl::set_dumpable(false);
    let mut defaults = args.common;
    // Nobody is at a terminal for the sessions, and stdout is the protocol's.
    defaults.json = true;
    defaults.check()?;
    let status = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let seen = status.clone();
    let signal = async move {
        let (why, code) = crate::signals::first_stop_signal().await;
        seen.store(code, std::sync::atomic::Ordering::SeqCst);
        why
    };
    wright_acp::serve_stdio(Arc::new(EditorStarter { defaults }), signal).await?;
    // The editor closed the connection (0), or a signal came: either way every run
    // ended after logging its step, and handed its changes over.
    Ok(status.load(std::sync::atomic::Ordering::SeqCst))
}

/// Sessions as `wright run` and `wright resume` prepare them, for an editor.
struct EditorStarter {
    defaults: CommonArgs,
}

#[async_trait::async_trait]
impl wright_acp::Starter for EditorStarter {
    fn check(&self, workspace: &Path, front: &dyn Front) -> Result<()> {
        crate::unattended::check(&self.defaults, workspace, front)
    }

    async fn prepare(&self, id: String, workspace: &Path, front: &dyn Front) -> Result<Session> {
        // The editor answers permission requests: asks before risky actions unless the
        // flags or the configuration say otherwise (a reopened one keeps its last mode).
        crate::unattended::prepare(
            &self.defaults,
            id,
            workspace,
            Some(wright_protocol::ConfirmMode::Risky),
            front,
        )
        .await
    }

    async fn reopen(
        &self,
        dir: &Path,
        front: &dyn Front,
    ) -> Result<(Session, Conversation, ResumeNotes)> {
        crate::unattended::reopen(
            &self.defaults,
            dir,
            None,
            crate::going_on::Naming::Flags,
            front,
        )
        .await
    }

    fn diagnostic(&self, line: &str) {
        tell!("{line}");
    }
}
