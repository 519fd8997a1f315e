//! `wright`: a coding agent for local models. This file only parses the command line and
//! hands over to one module per subcommand; errors reach the user as one sentence.

#[macro_use]
mod screen;

mod acp;
mod ask;
mod chat;
mod config_cmds;
mod confirm;
mod database_cmd;
mod doctor;
mod drive;
mod eval;
mod fork;
mod hints;
mod history_cmds;
mod housekeeping;
mod listing;
mod live;
mod mcp_cmd;
mod model_cmd;
mod parallel;
mod parallel_table;
mod progress;
#[cfg(test)]
mod reference;
mod repo_automations;
mod report;
mod resume;
mod run;
mod secrets_cmd;
mod serve;
mod settings;
mod signals;
mod wording;

use clap::Parser;
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "wright", version, about = "A coding agent for local models", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Do a task in the workspace and stop: `wright run "the test test_x fails, fix it"`.
    Run(Box<run::RunArgs>),
    /// Work with the agent over many turns (also `wright` alone in a terminal).
    Chat(Box<chat::ChatArgs>),
    /// Check the setup: server, model, context window, tool calling, speed, sandbox.
    Doctor(doctor::DoctorArgs),
    /// Run a suite of tasks, each in a fresh repository judged by its own check, and
    /// report pass rate, steps, tokens and time per setting (`--compare` side by side).
    Eval(Box<eval::EvalArgs>),
    /// (Used by `wright eval`) one attempt's check in the sandbox: a JSON spec on stdin,
    /// the outcome on stdout.
    #[command(hide = true)]
    EvalCheck(eval::EvalCheckArgs),
    /// Continue a stopped or crashed conversation, optionally with a new message.
    Resume(Box<resume::ResumeArgs>),
    /// The agent server: conversations over HTTP and WebSocket, behind a key (see
    /// docs/server.md).
    Serve(Box<serve::ServeArgs>),
    /// The Agent Client Protocol on stdin and stdout, for editors (Zed, JetBrains,
    /// Neovim): sessions, prompts, streamed updates (see docs/server.md, "Editors (ACP)").
    Acp(Box<acp::AcpArgs>),
    /// Start a new conversation from a prefix of another, in its own clone.
    Fork(Box<fork::ForkArgs>),
    /// Take a conversation's branch into your current branch (merge, or --cherry-pick);
    /// without an id, the latest conversation on this repository.
    Apply {
        /// The conversation (an id, or a unique prefix of one); without one, the latest
        /// conversation on this repository.
        id: Option<String>,
        /// Pick the branch's commits instead of merging it.
        #[arg(long)]
        cherry_pick: bool,
        /// Take it even though it changes files that configure git or git-lfs
        /// (`.gitattributes`, `.gitmodules`, `.lfsconfig`), once you have read them.
        #[arg(long)]
        with_git_config: bool,
    },
    /// The configuration: `show` (merged, with where each value came from), `path`.
    Config {
        #[command(subcommand)]
        command: config_cmds::ConfigCommand,
    },
    /// Allow what a repository asks for: `repo-config` (its .wright/config.toml as it is
    /// now), `egress SERVER` (its code going to that server); `--list` shows all.
    Allow(config_cmds::AllowArgs),
    /// MCP servers: `list` starts those a conversation here would have and shows each
    /// one's state and tools.
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
    },
    /// Your secrets, given to a run's shell with --secret NAME: `set NAME` (the value from
    /// standard input), `ls` (names only), `rm NAME`.
    Secrets {
        #[command(subcommand)]
        command: secrets_cmd::SecretsCommand,
    },
    /// The embedded engine's GGUF models: `ls`, `add PATH`, `rm NAME`, `pull NAME|URL`
    /// (run one with --model-file NAME).
    Model {
        #[command(subcommand)]
        command: model_cmd::ModelCommand,
    },
    /// Take back what `wright allow` allowed.
    Deny {
        #[command(subcommand)]
        what: config_cmds::Grantable,
    },
    /// Drop a conversation's branch and the agent's clone (or, outside git, put the
    /// directory back as it was).
    Discard {
        /// The conversation (an id, or a unique prefix of one).
        id: String,
    },
    /// Print the change a conversation handed over (its branch against the commit it
    /// started from); without an id, the latest conversation on this repository.
    Diff {
        /// The conversation (an id, or a unique prefix of one).
        id: Option<String>,
    },
    /// Remove conversations: log, clone, branch, scratch (refused for changes nobody took,
    /// unless --force).
    Rm(housekeeping::RmArgs),
    /// Remove what is no longer needed: scratch of ended runs, and conversations ended
    /// long ago whose changes were applied, discarded or never made.
    Gc(housekeeping::GcArgs),
    /// List conversations, newest first: state, age, repository, steps, changes, task.
    Ls(listing::LsArgs),
    /// Print a conversation readably (an id, or a unique prefix of one).
    Show {
        /// The conversation (an id, or a unique prefix of one).
        id: String,
        /// Print every output whole (otherwise long ones keep their first and last lines).
        #[arg(long)]
        full: bool,
        /// Read it from this database (`wright serve --database`) instead of its file.
        #[command(flatten)]
        database: database_cmd::DatabaseArgs,
    },
    /// The server's users, in its database: `add NAME` (prints the new key, once), `ls`,
    /// `show NAME`, `allow`/`disallow NAME --root DIR`, `limit NAME --max-running N`.
    User {
        #[command(subcommand)]
        command: database_cmd::UserCommand,
    },
    /// Move a conversation between its log file and the database: `import ID`, `export ID`.
    Database {
        #[command(subcommand)]
        command: database_cmd::DatabaseCommand,
    },
}

fn main() -> ExitCode {
    // The sandbox launcher (wright is its own): single-threaded, before anything else.
    wright_session::launch_if_asked();
    // Orphans of the agent's commands become wright's, so none outlives its run.
    wright_sandbox::become_subreaper();
    let cli = Cli::parse();
    // Settings resolution asks at this terminal, where someone is there to answer.
    wright_session::settings::console::set_console(Box::new(settings::TerminalConsole));
    // The server (and an editor over ACP) runs many sessions, whose preparation blocks on
    // git: threads of their own; every other command is one conversation on one thread.
    let mut builder = match cli.command {
        Some(Command::Serve(_) | Command::Acp(_)) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            tell!("wright: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        let command = match cli.command {
            Some(command) => command,
            // `wright` alone: a chat in a terminal, the help elsewhere.
            None if std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
                match Cli::parse_from(["wright", "chat"]).command {
                    Some(command) => command,
                    None => return Ok(2),
                }
            }
            None => {
                let _ = <Cli as clap::CommandFactory>::command().print_help();
                return Ok(2);
            }
        };
        match command {
            Command::Chat(args) => chat::chat(*args).await,
            Command::Run(args) => run::run(*args).await,
            Command::Serve(args) => serve::serve(*args).await,
            Command::Acp(args) => acp::acp(*args).await,
            Command::Resume(args) => resume::resume(*args).await,
            Command::Fork(args) => fork::fork(*args).await,
            Command::Doctor(args) => doctor::doctor(args).await,
            Command::Eval(args) => eval::eval(*args).await,
            Command::EvalCheck(args) => eval::eval_check(args),
            Command::Apply {
                id,
                cherry_pick,
                with_git_config,
            } => history_cmds::pick(id.as_deref())
                .and_then(|dir| {
                    let front = drive::Terminal { json: false };
                    wright_session::working_copy::apply(&dir, cherry_pick, with_git_config, &front)
                })
                .map(|()| 0),
            Command::Discard { id } => history_cmds::conversation_dir(&id)
                .and_then(|dir| {
                    wright_session::working_copy::discard(&dir, &drive::Terminal { json: false })
                })
                .map(|()| 0),
            Command::Config { command } => config_cmds::config(command).map(|()| 0),
            Command::Allow(args) => config_cmds::allow(args).map(|()| 0),
            Command::Deny { what } => config_cmds::deny(what).map(|()| 0),
            Command::Mcp { command } => mcp_cmd::mcp(command).await,
            Command::Secrets { command } => secrets_cmd::secrets(command).map(|()| 0),
            Command::Model { command } => model_cmd::model(command).await.map(|()| 0),
            Command::Diff { id } => history_cmds::diff(id.as_deref()).map(|()| 0),
            Command::Rm(args) => housekeeping::rm(args),
            Command::Gc(args) => housekeeping::gc(args).map(|()| 0),
            Command::Ls(args) => listing::list(args).map(|()| 0),
            Command::Show { id, full, database } => match database.database {
                Some(_) => database_cmd::show(&id, full, &database).await.map(|()| 0),
                None => history_cmds::show(&id, full).map(|()| 0),
            },
            Command::User { command } => database_cmd::user(command).await.map(|()| 0),
            Command::Database { command } => database_cmd::database(command).await.map(|()| 0),
        }
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            tell!(
                "wright: {}",
                wording::worded(&err, wording::Audience::CommandLine)
            );
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of every subcommand says what it is for in `--help`.
    #[test]
    fn every_argument_has_a_help_text() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    missing.push(format!("{path} {} (the subcommand)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "wright", &mut missing);
        assert_eq!(
            missing,
            Vec::<String>::new(),
            "arguments without a help text"
        );
    }
}
