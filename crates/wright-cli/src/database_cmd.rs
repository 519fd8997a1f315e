//! The database store from the command line: where it is (`--database URL`, the password
//! from `PGPASSWORD` or `--database-password-file`, never in the URL), its users
//! (`wright user add NAME` prints a new key once), and conversations moved between their
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
    Ls {
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
