//! `wright serve`: the agent server (`wright_server`) with this command's flags as every
//! conversation's defaults (the server's `SettingsStarter` resolves each conversation's
//! settings as `wright run` does; a request may change a few; nobody is ever asked
//! anything). Prints where it listens and, when it made one, the key.

use crate::settings::CommonArgs;
use anyhow::Result;
use clap::Args;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// The address to listen on; one that is not loopback needs WRIGHT_SERVER_KEY.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on (0: any free one, printed).
    #[arg(long, default_value_t = 3000)]
    port: u16,
    /// Most conversations running at once; the others wait, queued.
    #[arg(long, default_value_t = 2)]
    max_runs: usize,
    /// A host name requests may name besides the loopback ones and --host (behind a
    /// proxy, say); repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// The repository the OpenAI-compatible endpoint (/v1/chat/completions) works on.
    #[arg(long, value_name = "DIR")]
    workspace: Option<std::path::PathBuf>,
    /// Keep every conversation's events (and the users) in a PostgreSQL database too.
    #[command(flatten)]
    database: crate::database_cmd::DatabaseArgs,
    /// With --database: how long a run's lease on its conversation lasts unrenewed; a
    /// run whose replica died is taken over by another replica within about this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    lease_seconds: u64,
    /// A directory every replica reaches (shared storage): each step's files are pushed
    /// there, in the background, so that a replica taking a conversation over without
    /// its clone makes it again with the files of the last step pushed. Default:
    /// server.git_store of the configuration, else none.
    #[arg(long, value_name = "DIR")]
    git_store: Option<std::path::PathBuf>,
    /// With --database: give users' conversations this secret of the server's (stored
    /// with `wright secrets set NAME`) beside their own; repeatable. Without it a user's
    /// conversation gets only the user's own secrets.
    #[arg(long = "share-secret", value_name = "NAME")]
    share_secrets: Vec<String>,
    /// The settings of every conversation, as for `wright run` (a request may set its
    /// model, server, profile, sandbox, limits, tool calling and tools).
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn serve(args: ServeArgs) -> Result<u8> {
    // Not dumpable: no command of an agent (same user, no capabilities) reads this
    // process's memory or environment, where the key is.
    let _ = nix::sys::prctl::set_dumpable(false);
    // Nobody is at a terminal for the conversations: nothing is asked.
    let doctor: wright_server::DoctorReport = Arc::new(|args: CommonArgs| {
        Box::pin(async move { crate::doctor::json_report(&args).await })
    });
    let starter = wright_server::SettingsStarter::new(args.common.clone(), doctor)?
        .sharing(args.share_secrets.clone())?;
    // An embedded engine gives each run at once a cache of its own, and one more for
    // side requests (summaries, questions asked aside).
    wright_session::embedded::set_conversations(args.max_runs + 1);
    let database = args.database.connect().await?;
    let database_shown = database
        .as_ref()
        .map(|store| store.database().shown().to_string());
    let key = std::env::var("WRIGHT_SERVER_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    // The automations of the user's file, checked whole before anything listens.
    let (automations, waiting) = match wright_config::Config::user_file() {
        Some(path) => {
            let mut automations = wright_config::automations::load(&path)?;
            // A repository's, allowed: defined too (a name the user's file has is
            // refused, so neither replaces the other).
            let (from_repository, waiting) = crate::repo_automations::load(&path)?;
            for automation in from_repository {
                if automations.iter().any(|a| a.name == automation.name) {
                    anyhow::bail!(
                        "automation '{}' is defined both in {} and in the repository's {}",
                        automation.name,
                        path.display(),
                        wright_config::automations::REPO_AUTOMATIONS_FILE
                    );
                }
                automations.push(automation);
            }
            (automations, waiting)
        }
        None => (Vec::new(), None),
    };
    let listed: Vec<String> = automations
        .iter()
        .map(|a| match &a.trigger {
            wright_config::automations::Trigger::Webhook { .. } => {
                format!("{} (webhook POST /hooks/{})", a.name, a.name)
            }
            wright_config::automations::Trigger::Schedule { cron, timezone, .. } => {
                format!("{} (schedule {cron}, {timezone})", a.name)
            }
        })
        .collect();
    let git_store = match args.git_store {
        Some(dir) => Some(dir),
        None => match wright_config::Config::user_file() {
            Some(path) => wright_config::server::git_store(&path)?,
            None => None,
        },
    };
    let git_store = git_store.map(|dir| std::path::absolute(&dir)).transpose()?;
    if let Some(dir) = &git_store {
        std::fs::create_dir_all(dir).map_err(|err| {
            anyhow::anyhow!("the git store {} cannot be made: {err}", dir.display())
        })?;
    }
    let options = wright_server::Options {
        host: args.host,
        port: args.port,
        key,
        max_runs: args.max_runs,
        allowed_hosts: args.allow_hosts,
        workspace: args
            .workspace
            .map(|dir| std::path::absolute(&dir))
            .transpose()?,
        automations,
        waiting_automations: waiting.clone(),
        database,
        lease: std::time::Duration::from_secs(args.lease_seconds),
        git_store: git_store.clone(),
    };
    let bound = wright_server::Bound::bind(options, Arc::new(starter)).await?;
    let address = bound.address();
    say!("wright serve: listening on http://{address}");
    if let Some(store) = &database_shown {
        say!("  events and users kept in the database {store}");
    }
    if let Some(dir) = &git_store {
        say!(
            "  each step's files pushed to the git store {}",
            dir.display()
        );
    }
    if bound.key().generated() {
        say!(
            "  key {} (made for this run; set WRIGHT_SERVER_KEY to choose one)",
            bound.key().as_str()
        );
    } else {
        say!("  key from WRIGHT_SERVER_KEY");
    }
    say!("  send it as `Authorization: Bearer KEY` or `X-Session-API-Key: KEY`; the API is at /openapi.json");
    if !listed.is_empty() {
        say!("  automations: {}", listed.join("; "));
    }
    if let Some(waiting) = &waiting {
        say!(
            "  {} of {} (branch {}, sha256 {}) waits for your approval, none of it runs: {}",
            waiting.file,
            waiting.repository,
            waiting.branch,
            waiting.hash,
            waiting.allow
        );
    }
    say!("  in a browser, open once: {}", bound.browser_url());
    let stopped = bound.serve().await?;
    say!(
        "wright serve: stopped ({} stopped after logging the step in flight; a message goes on with each)",
        wright_protocol::count(stopped as u64, "run")
    );
    Ok(0)
}
