//! `wright acp`: wright as an agent of the Agent Client Protocol on stdin and stdout, for
//! editors (`wright_acp`), with this program's settings: each session's are resolved as
//! `wright run` resolves them (the command's flags are every session's), asking before
//! risky actions by default (the editor answers). Nothing but the protocol goes to stdout; what is said besides goes to
//! stderr, which editors keep as the agent's log.

use crate::settings::CommonArgs;
use anyhow::Result;
use clap::Args;
use std::sync::Arc;

#[derive(Args)]
pub struct AcpArgs {
    /// The settings of every session, as for `wright run`.
    #[command(flatten)]
    common: CommonArgs,
    /// Work in the directory the client names (`cwd`), uncommitted changes and all,
    /// instead of a clone on a new branch: for a client that already isolated the work
    /// (wright driving `wright acp` as an external agent, an editor's worktree).
    #[arg(long)]
    in_place: bool,
}

pub async fn acp(args: AcpArgs) -> Result<u8> {
    // Not dumpable: no command of an agent (same user, no capabilities) reads this
    // process's memory or environment, where the API key may be.
    let _ = nix::sys::prctl::set_dumpable(false);
    // Nobody is at a terminal for the sessions, and stdout is the protocol's.
    let place = match args.in_place {
        true => wright_session::settings::unattended::WorkPlace::InPlace,
        false => wright_session::settings::unattended::WorkPlace::Clone,
    };
    let starter = wright_acp::SettingsStarter::new(args.common)?.working(place);
    let status = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let seen = status.clone();
    let signal = async move {
        let (why, code) = crate::signals::first_stop_signal().await;
        seen.store(code, std::sync::atomic::Ordering::SeqCst);
        why
    };
    wright_acp::serve_stdio(Arc::new(starter), signal).await?;
    // The editor closed the connection (0), or a signal came: either way every run
    // ended after logging its step, and handed its changes over.
    Ok(status.load(std::sync::atomic::Ordering::SeqCst))
}
