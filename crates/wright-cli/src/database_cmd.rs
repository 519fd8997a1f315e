//! The database store from the command line: where it is (`--database URL`, the password
//! from `PGPASSWORD` or `--database-password-file`, never in the URL), its users
//! (`wright user add NAME` prints a new key once; `allow`, `disallow`, `limit` set what
//! the admin lets them, `show` says it), and conversations moved between their
//! log files and the database (`wright database import|export ID`).

use anyhow::Context;
use anyhow::Result;
use clap::Args;
use clap::Subcommand;
use std::path::PathBuf;
use wright_session::database::Database;
use wright_session::database::Owner;
use wright_session::database::Password;
use wright_session::database::Store;

/// Where the database is.
#[derive(Args, Clone, Default)]
pub struct DatabaseArgs {
    /// The PostgreSQL database (`postgres://USER@HOST:PORT/NAME`): conversations' events,
    /// users and keys are kept there (default: `server.database` of your configuration
    /// file). A URL holding a password is refused: give it in PGPASSWORD or
    /// --database-password-file.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// A file whose first line is the database password (else PGPASSWORD, else none).
    #[arg(long, value_name = "FILE")]
    pub database_password_file: Option<PathBuf>,
}

impl DatabaseArgs {
    /// The database's URL: `--database`, else `server.database` of the user's file.
    pub fn url(&self) -> Result<Option<String>> {
        if let Some(url) = &self.database {
            return Ok(Some(url.clone()));
        }
        match wright_config::Config::user_file() {
            Some(path) => Ok(wright_config::server::database(&path)?),
            None => Ok(None),
        }
    }

    /// The database named, connected and migrated; `None` when none is named.
    pub async fn connect(&self) -> Result<Option<Store>> {
        let Some(url) = self.url()? else {
            if self.database_password_file.is_some() {
                anyhow::bail!("--database-password-file needs a database: --database URL, or server.database in your configuration file");
            }
            return Ok(None);
        };
        let url = &url;
        let from_env = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty());
        let password = match (&self.database_password_file, from_env) {
            (Some(file), _) => Password::File(file),
            (None, Some(text)) => Password::Given(text),
            (None, None) => Password::None,
        };
        let database = Database::new(url, password)?;
        let store = Store::connect(&database)
            .await
            .with_context(|| format!("the database {}", database.shown()))?;
        Ok(Some(store))
    }

    /// The database named, which this command needs.
    async fn required(&self) -> Result<Store> {
        self.connect()
            .await?
            .context("this command needs the database: --database postgres://USER@HOST/NAME")
    }
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Make a user and print their key, once (the database keeps only its SHA-256).
    Add {
        /// Letters, digits, dots, dashes, underscores.
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List the users.
    #[command(alias = "list")]
    Ls {
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Show a user: their roots and their run limit.
    Show {
        /// The user's name.
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Let a user's conversations work in directories under DIR on this server (made
    /// absolute and canonical now: a symbolic link is followed once, here).
    Allow {
        /// The user's name.
        name: String,
        /// A directory their conversations may work under (again for more).
        #[arg(long, value_name = "DIR", required = true)]
        root: Vec<PathBuf>,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Take roots from a user (as `wright user show` lists them); their conversations
    /// made there stay theirs, no new one is made there.
    Disallow {
        /// The user's name.
        name: String,
        /// A root to take away, as `wright user show` lists it (again for more).
        #[arg(long, value_name = "DIR", required = true)]
        root: Vec<String>,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Limit how many of a user's conversations run at once, across every replica.
    Limit {
        /// The user's name.
        name: String,
        /// At most N at once (0: none may run); `none` lifts the limit.
        #[arg(long, value_name = "N|none")]
        max_running: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

pub async fn user(command: UserCommand) -> Result<()> {
    match command {
        UserCommand::Add { name, database } => {
            let made = database.required().await?.add_user(&name).await?;
            say!("{}", made.key);
            tell!(
                "wright: user {} made; the key above is shown this once (send it as `Authorization: Bearer KEY`)",
                made.user.name
            );
        }
        UserCommand::Ls { database } => {
            for user in database.required().await?.users().await? {
                say!("{}", user.name);
            }
        }
        UserCommand::Show { name, database } => {
            let rights = database.required().await?.rights(&name).await?;
            say!("{}", rights.user.name);
            match rights.max_running {
                Some(limit) => say!("  runs at once: at most {limit}"),
                None => say!("  runs at once: no limit"),
            }
            if rights.roots.is_empty() {
                say!("  roots: none (repository_url only)");
            }
            for root in rights.roots {
                say!("  root: {root}");
            }
        }
        UserCommand::Allow {
            name,
            root,
            database,
        } => {
            let store = database.required().await?;
            for dir in root {
                let canonical = std::fs::canonicalize(&dir)
                    .with_context(|| format!("the root {}", dir.display()))?;
                if !canonical.is_dir() {
                    anyhow::bail!("the root {} is not a directory", dir.display());
                }
                let text = canonical
                    .to_str()
                    .with_context(|| format!("the root {} is not UTF-8", canonical.display()))?;
                store.allow_root(&name, text).await?;
                tell!("wright: {name} may work under {text}");
            }
        }
        UserCommand::Disallow {
            name,
            root,
            database,
        } => {
            let store = database.required().await?;
            for dir in root {
                // As listed; else the path as it resolves now.
                let mut removed = store.disallow_root(&name, &dir).await?;
                if !removed {
                    if let Some(text) = std::fs::canonicalize(&dir)
                        .ok()
                        .and_then(|path| path.to_str().map(str::to_string))
                    {
                        removed = store.disallow_root(&name, &text).await?;
                    }
                }
                if !removed {
                    anyhow::bail!("{dir} is not a root of {name}'s (wright user show {name})");
                }
                tell!("wright: {name} may no longer start work under {dir}");
            }
        }
        UserCommand::Limit {
            name,
            max_running,
            database,
        } => {
            let limit = match max_running.as_str() {
                "none" => None,
                text => Some(text.parse::<i32>().ok().filter(|n| *n >= 0).with_context(
                    || format!("--max-running is a number of runs (0 or more) or `none`, not {text:?}"),
                )?),
            };
            database
                .required()
                .await?
                .set_max_running(&name, limit)
                .await?;
        }
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum DatabaseCommand {
    /// Copy a conversation's log file into the database (the admin's); what the database
    /// holds already must be the same events.
    Import {
        /// The conversation (an id, or a unique prefix of one).
        id: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Write a conversation's events from the database into its log file (which must not
    /// exist yet).
    Export {
        /// The conversation's id.
        id: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

pub async fn database(command: DatabaseCommand) -> Result<()> {
    match command {
        DatabaseCommand::Import { id, database } => {
            let store = database.required().await?;
            let id = crate::history_cmds::resolve_id(&id)?;
            let dir = wright_session::stored::conversation_dir(&id);
            let count = wright_session::database::import(&store, &id, &dir, Owner::Admin).await?;
            say!(
                "{id}: {} in the database",
                wright_protocol::count(count as u64, "event")
            );
        }
        DatabaseCommand::Export { id, database } => {
            let store = database.required().await?;
            let dir = wright_session::stored::conversation_dir(&id);
            let count = wright_session::database::export(&store, &id, &dir).await?;
            say!(
                "{id}: {} written to {}",
                wright_protocol::count(count as u64, "event"),
                dir.join("events.jsonl").display()
            );
        }
    }
    Ok(())
}

/// `wright show ID --database URL`: the conversation as the database holds it.
pub async fn show(id: &str, full: bool, database: &DatabaseArgs) -> Result<()> {
    let store = database.required().await?;
    let text = store.log_text(id).await?;
    let parsed = wright_protocol::parse_log(&text).map_err(|(line, message)| {
        anyhow::anyhow!("event {line} of {id} does not parse: {message}")
    })?;
    crate::history_cmds::show_log(id, parsed, full)
}
