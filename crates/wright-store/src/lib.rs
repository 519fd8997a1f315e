//! wright's PostgreSQL store, for `wright serve --database`: conversations and their
//! events (one row per event, in the log's own JSON, append-only and unique per
//! conversation by the database's own constraints), users and their keys (SHA-256 only),
//! what the admin lets each user (roots, a run quota) and users' own secrets.
//! The schema is in `migrations/`, applied at connect under an advisory lock, so replicas
//! starting together on an empty database apply it once.
//!
//! Without a database nothing here is used: the files stay the store.

mod appender;
mod connect;
mod events;
mod firings;
mod leases;
mod listen;
mod migrate;
mod quota;
mod rights;
mod user_secrets;
mod users;

pub use appender::Appender;
pub use connect::Database;
pub use connect::Password;
pub use events::Owner;
pub use leases::Lease;
pub use leases::Renewal;
pub use leases::Renewer;
pub use listen::Notice;
pub use quota::Admission;
pub use rights::Rights;
pub use user_secrets::valid_secret_name;
pub use users::NewUser;
pub use users::User;

/// What the store refuses or fails at, each said so a person can act on it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the database URL holds a password: it would be readable by every local user (in /proc/*/cmdline, the configuration); give it in PGPASSWORD or a password file instead")]
    PasswordInUrl,
    #[error("the database URL is not one PostgreSQL reads ({0})")]
    BadUrl(String),
    #[error("cannot read the database password file {path}: {source}")]
    PasswordFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the database password file {0} is empty")]
    EmptyPasswordFile(String),
    #[error("cannot reach the database: {0}")]
    Connect(String),
    #[error("the database refused: {0}")]
    Database(String),
    #[error("cannot migrate the database: {0}")]
    Migrate(String),
    #[error("the database was migrated by a newer wright (schema version {found}; this one knows up to {known})")]
    NewerSchema { found: i32, known: i32 },
    #[error("event {got} of conversation {conversation} is out of order: the database holds {held} events")]
    OutOfOrder {
        conversation: String,
        got: u64,
        held: u64,
    },
    #[error("conversation {conversation} is no longer this run's (its lease at epoch {epoch} was lost{}): the event was not written", match held { Some(held) if held != epoch => format!("; epoch {held} holds it now"), _ => String::from(", expired") })]
    LeaseLost {
        conversation: String,
        epoch: i64,
        held: Option<i64>,
    },
    #[error("conversation {0} is not in the database")]
    NoConversation(String),
    #[error("conversation {conversation} in the database differs from its log at event {at}")]
    Diverged { conversation: String, at: u64 },
    #[error("the events of conversation {conversation} in the database do not parse at event {line}: {message}")]
    Corrupt {
        conversation: String,
        line: usize,
        message: String,
    },
    #[error("a user's name is 1 to 64 letters, digits, dots, dashes and underscores, beginning with a letter or digit: {0:?} is not")]
    BadUserName(String),
    #[error("a user named {0} exists already")]
    UserExists(String),
    #[error("there is no user named {0}")]
    NoUser(String),
    #[error("a root is an absolute directory: {0:?} is not")]
    BadRoot(String),
    #[error("a secret's name is an environment variable's (letters, digits, underscores, not a digit first, at most 128): {0:?} is not")]
    BadSecretName(String),
    #[error("there is no secret named {name}; stored: {}", if stored.is_empty() { "none".to_string() } else { stored.join(", ") })]
    NoSecret { name: String, stored: Vec<String> },
    #[error("cannot make a random key: {0}")]
    Random(std::io::Error),
    #[error("cannot encode an event: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("the database writer stopped")]
    WriterGone,
}

impl From<tokio_postgres::Error> for StoreError {
    /// The server's own words (`db error` alone says nothing), else the cause's.
    fn from(err: tokio_postgres::Error) -> Self {
        let said = match err.as_db_error() {
            Some(db) => format!("{}: {}", db.severity(), db.message()),
            None => match std::error::Error::source(&err) {
                Some(cause) => format!("{err}: {cause}"),
                None => err.to_string(),
            },
        };
        StoreError::Database(said)
    }
}

/// A connected store: a pool of connections to a migrated database.
#[derive(Clone)]
pub struct Store {
    pool: deadpool_postgres::Pool,
    database: Database,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.database.shown())
    }
}

impl Store {
    /// Connects to `database` and brings its schema up to date (see `migrate`).
    pub async fn connect(database: &Database) -> Result<Self, StoreError> {
        let manager = deadpool_postgres::Manager::from_config(
            database.config().clone(),
            tokio_postgres::NoTls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(16)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|err| StoreError::Connect(err.to_string()))?;
        let store = Self {
            pool,
            database: database.clone(),
        };
        let mut client = store.client().await?;
        migrate::run(&mut client).await?;
        Ok(store)
    }

    /// The database it is connected to, as shown to people (no password).
    pub fn database(&self) -> &Database {
        &self.database
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(|err| match err {
            deadpool_postgres::PoolError::Backend(err) => err.into(),
            other => StoreError::Connect(other.to_string()),
        })
    }
}
