//! `wright fork ID [--at EVENT] [MESSAGE]`: a new conversation from a prefix of another,
//! to try a second approach without touching the first (`wright_session::fork` makes
//! it: its own clone, its own branch, the files as they were at EVENT). With a MESSAGE it
//! goes on at once, as `wright resume` would.

use crate::history_cmds::conversation_dir;
use crate::resume::resume;
use crate::resume::ResumeArgs;
use crate::settings::CommonArgs;
use crate::settings::RepoConfigSource;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct ForkArgs {
    /// The conversation to fork (an id, or a unique prefix of one).
    id: String,
    /// Keep the events up to and including this one (default: all), and the files as
    /// they were then (an action is logged before it runs: at one, before it ran).
    #[arg(long)]
    at: Option<u64>,
    /// Go on at once with this message.
    message: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    net: crate::settings::NetArgs,
}

pub async fn fork(mut args: ForkArgs) -> Result<u8> {
    args.common.allow_hosts = std::mem::take(&mut args.net.allow_hosts);
    args.common.check()?;
    if let Some(message) = &args.message {
        crate::settings::check_text(
            message,
            "message",
            &format!("wright fork {} \"try another approach\"", args.id),
        )?;
    }
    let source_dir = conversation_dir(&args.id)?;
    let front = crate::drive::Terminal {
        json: args.common.json,
    };
    let sandbox_for = |source: &RepoConfigSource| {
        SessionSettings::resolve(&args.common, Some(source))?.sandbox_choice()
    };
    let forked =
        wright_session::fork::fork(&source_dir, args.at, &sandbox_for, &front).map_err(|err| {
            match err {
                wright_session::fork::ForkError::Refused(refused) => anyhow::Error::new(refused),
                wright_session::fork::ForkError::Failed(err) => err,
            }
        })?;
    say!(
        "forked {} at event {} as {}",
        forked.from,
        forked.at,
        forked.id
    );
    say!("files: {}", forked.describe_files());
    match args.message {
        Some(message) => {
            let allow_hosts = std::mem::take(&mut args.common.allow_hosts);
            resume(ResumeArgs {
                id: forked.id,
                message: Some(message),
                common: args.common,
                net: crate::settings::NetArgs { allow_hosts },
            })
            .await
        }
        None => {
            say!("go on with: wright resume {} \"what to try\"", forked.id);
            Ok(0)
        }
    }
}
