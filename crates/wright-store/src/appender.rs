//! Appending one conversation's events from synchronous code: the event log's `append`
//! is called by the loop without awaiting, and must return only once the event is
//! committed (an event is logged before it takes effect). The appender owns a thread with
//! its own connection and runtime; each append is sent to it and the caller waits for
//! the commit. Its own runtime, not the caller's: a caller blocking a single-threaded
//! runtime could otherwise wait on a connection task that runtime never gets to run.

use crate::events::append_with;
use crate::events::count_with;
use crate::Lease;
use crate::Owner;
use crate::Store;
use crate::StoreError;
use std::sync::mpsc;
use wright_protocol::Event;

type Reply = mpsc::SyncSender<Result<(), StoreError>>;

enum Request {
    Append(Box<Event>, Reply),
    CatchUp(Vec<Event>, Reply),
}

/// The writer of one conversation's events.
pub struct Appender {
    conversation: String,
    requests: mpsc::Sender<Request>,
}

impl std::fmt::Debug for Appender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Appender({})", self.conversation)
    }
}

impl Appender {
    /// Connects a writer for conversation `id`, recorded as `owner`'s when new (an
    /// existing conversation keeps its owner). Blocks until connected.
    pub fn open(store: &Store, id: &str, owner: Owner) -> Result<Self, StoreError> {
        Self::open_fenced(store, id, owner, None)
    }

    /// As `open`, for the run holding `lease` on conversation `id`: each append is
    /// refused (`LeaseLost`) once that lease is lost.
    pub fn open_leased(store: &Store, lease: &Lease, owner: Owner) -> Result<Self, StoreError> {
        Self::open_fenced(store, &lease.conversation, owner, Some(lease.epoch))
    }

    fn open_fenced(
        store: &Store,
        id: &str,
        owner: Owner,
        fence: Option<i64>,
    ) -> Result<Self, StoreError> {
        let (requests, inbox) = mpsc::channel();
        let (ready, started) = mpsc::sync_channel(1);
        let config = store.database().config().clone();
        let conversation = id.to_string();
        std::thread::Builder::new()
            .name(format!("wright-db-{id}"))
            .spawn(move || serve(config, conversation, owner, fence, inbox, ready))
            .map_err(|err| StoreError::Connect(err.to_string()))?;
        started.recv().map_err(|_| StoreError::WriterGone)??;
        Ok(Self {
            conversation: id.to_string(),
            requests,
        })
    }

    /// Makes the database hold exactly `events` so far: those it lacks are appended (in
    /// order); it is an error when it holds others or more (`Diverged`).
    pub fn catch_up(&self, events: &[Event]) -> Result<(), StoreError> {
        self.ask(|reply| Request::CatchUp(events.to_vec(), reply))
    }

    /// Appends `event`, committed when this returns.
    pub fn append(&self, event: &Event) -> Result<(), StoreError> {
        self.ask(|reply| Request::Append(Box::new(event.clone()), reply))
    }

    fn ask(&self, request: impl FnOnce(Reply) -> Request) -> Result<(), StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.requests
            .send(request(reply))
            .map_err(|_| StoreError::WriterGone)?;
        answer.recv().map_err(|_| StoreError::WriterGone)?
    }
}

/// The writer thread: connects, says so on `ready`, then answers requests until the
/// appender is dropped.
fn serve(
    config: tokio_postgres::Config,
    conversation: String,
    owner: Owner,
    fence: Option<i64>,
    inbox: mpsc::Receiver<Request>,
    ready: mpsc::SyncSender<Result<(), StoreError>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = ready.send(Err(StoreError::Connect(err.to_string())));
            return;
        }
    };
    runtime.block_on(async move {
        let client = match connect(&config, &conversation, owner).await {
            Ok(client) => client,
            Err(err) => {
                let _ = ready.send(Err(err));
                return;
            }
        };
        let _ = ready.send(Ok(()));
        // Blocking receives are fine here: this thread has nothing else to run but the
        // connection task, which the awaits below drive.
        while let Ok(request) = inbox.recv() {
            match request {
                Request::Append(event, reply) => {
                    let _ = reply.send(append_with(&client, &conversation, &event, fence).await);
                }
                Request::CatchUp(events, reply) => {
                    let _ = reply.send(catch_up(&client, &conversation, &events, fence).await);
                }
            }
        }
    });
}

async fn connect(
    config: &tokio_postgres::Config,
    conversation: &str,
    owner: Owner,
) -> Result<tokio_postgres::Client, StoreError> {
    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let owner = match owner {
        Owner::Admin => None,
        Owner::User(id) => Some(id),
    };
    client
        .execute(
            "INSERT INTO conversations (id, owner) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            &[&conversation, &owner],
        )
        .await?;
    Ok(client)
}

async fn catch_up(
    client: &tokio_postgres::Client,
    conversation: &str,
    events: &[Event],
    fence: Option<i64>,
) -> Result<(), StoreError> {
    let rows = client
        .query(
            "SELECT id, event::text FROM events WHERE conversation_id = $1 ORDER BY id",
            &[&conversation],
        )
        .await?;
    if rows.len() > events.len() {
        return Err(StoreError::Diverged {
            conversation: conversation.to_string(),
            at: events.len() as u64,
        });
    }
    for (row, event) in rows.iter().zip(events) {
        // Compared as events, not as text: a log read back and written again need not
        // be the same bytes (a field's default left out, a number's spelling).
        let held: Event = serde_json::from_str(row.get::<_, &str>(1))?;
        if &held != event {
            return Err(StoreError::Diverged {
                conversation: conversation.to_string(),
                at: event.id,
            });
        }
    }
    let held = count_with(client, conversation).await?;
    for event in events.iter().skip(held as usize) {
        append_with(client, conversation, event, fence).await?;
    }
    Ok(())
}
