//! The store against a real PostgreSQL (a cluster of its own per test, from
//! `wright_testkit::postgres`): migrations, events, users, the appender.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_store::Appender;
use wright_store::Database;
use wright_store::Owner;
use wright_store::Password;
use wright_store::Renewal;
use wright_store::Store;
use wright_store::StoreError;
use wright_testkit::postgres::Postgres;
use wright_testkit::postgres::PASSWORD;

fn database(cluster: &Postgres, name: &str) -> Database {
    cluster.create_database(name);
    Database::new(&cluster.url(name), Password::Given(PASSWORD.into())).unwrap()
}

async fn raw(cluster: &Postgres, name: &str) -> tokio_postgres::Client {
    let url = format!("{} password={PASSWORD}", key_value(cluster, name));
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

fn key_value(cluster: &Postgres, name: &str) -> String {
    format!(
        "host=127.0.0.1 port={} user=wright dbname={name}",
        cluster.port()
    )
}

fn message(id: u64, text: &str) -> Event {
    Event::new(
        id,
        Source::User,
        EventBody::Message {
            text: text.into(),
            step: None,
            reasoning: None,
            raw: None,
        },
    )
}

#[test]
fn a_url_holding_a_password_is_refused() {
    for url in [
        "postgres://wright:secret@127.0.0.1/wright",
        "host=127.0.0.1 user=wright password=secret dbname=wright",
    ] {
        let refused = Database::new(url, Password::Given("other".into())).unwrap_err();
        assert!(
            matches!(refused, StoreError::PasswordInUrl),
            "{url}: {refused}"
        );
        assert!(refused.to_string().contains("PGPASSWORD"));
    }
    let bad = Database::new("mysql://nowhere", Password::None).unwrap_err();
    assert!(matches!(bad, StoreError::BadUrl(_)), "{bad}");
    let dir = std::env::temp_dir().join(format!("wright-pw-{}", std::process::id()));
    std::fs::write(&dir, "").unwrap();
    let empty = Database::new("postgres://wright@127.0.0.1/wright", Password::File(&dir));
    std::fs::remove_file(&dir).unwrap();
    assert!(matches!(empty, Err(StoreError::EmptyPasswordFile(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_on_an_empty_database_migrate_it_once() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let database = database(&cluster, "fresh");
    let starts: Vec<_> = (0..6)
        .map(|_| {
            let database = database.clone();
            tokio::spawn(async move { Store::connect(&database).await })
        })
        .collect();
    for start in starts {
        start.await.unwrap().unwrap();
    }
    let client = raw(&cluster, "fresh").await;
    let versions: Vec<i32> = client
        .query(
            "SELECT version FROM wright_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, vec![1, 2, 3, 4, 5]);
    // And a later start finds nothing left to do.
    Store::connect(&database).await.unwrap();
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_error() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    cluster.create_database("locked");
    let database = Database::new(
        &cluster.url("locked"),
        Password::Given("not-the-password".into()),
    )
    .unwrap();
    let refused = Store::connect(&database).await.unwrap_err().to_string();
    assert!(
        refused.contains("password authentication failed"),
        "{refused}"
    );
}

#[tokio::test]
async fn events_go_in_once_in_order_and_are_never_changed() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "events")).await.unwrap();
    store.add_conversation("c1", Owner::Admin).await.unwrap();
    let first = message(0, "fix the bug \u{202e} with \"quotes\" and é");
    let second = message(1, "and the test");
    store.append("c1", &first).await.unwrap();
    store.append("c1", &second).await.unwrap();
    // A repeat and a gap are refused by the database, whatever the caller believes.
    for wrong in [message(1, "again"), message(0, "again"), message(3, "gap")] {
        let refused = store.append("c1", &wrong).await.unwrap_err();
        assert!(
            matches!(refused, StoreError::OutOfOrder { held: 2, .. }),
            "{refused}"
        );
    }
    let unknown = store.append("nobody", &message(0, "x")).await.unwrap_err();
    assert!(
        matches!(unknown, StoreError::NoConversation(_)),
        "{unknown}"
    );
    // The events read back are those written, in the log's own text.
    assert_eq!(
        store.events("c1").await.unwrap(),
        vec![first.clone(), second.clone()]
    );
    assert_eq!(
        store.log_text("c1").await.unwrap(),
        first.to_line().unwrap() + &second.to_line().unwrap()
    );
    // The database itself refuses to change or remove one.
    let client = raw(&cluster, "events").await;
    for statement in [
        "UPDATE events SET event = '{}' WHERE conversation_id = 'c1'",
        "DELETE FROM events WHERE conversation_id = 'c1'",
        "TRUNCATE events CASCADE",
        "INSERT INTO events (conversation_id, id, event) VALUES ('c1', 1, '{}')",
    ] {
        let refused = client.batch_execute(statement).await;
        assert!(refused.is_err(), "{statement} went through");
    }
    assert_eq!(store.count("c1").await.unwrap(), 2);
}

#[tokio::test]
async fn the_appender_commits_each_event_before_returning_even_on_a_single_thread() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "appender"))
        .await
        .unwrap();
    // Called from this current-thread runtime, blocking it, as the loop calls `append`.
    let appender = Appender::open(&store, "c2", Owner::Admin).unwrap();
    let log = vec![message(0, "one"), message(1, "two")];
    appender.catch_up(&log).unwrap();
    // Caught up twice: nothing more to copy.
    appender.catch_up(&log).unwrap();
    appender.append(&message(2, "three")).unwrap();
    assert_eq!(store.count("c2").await.unwrap(), 3);
    // A log that differs from what the database holds is refused, not merged.
    let other = vec![message(0, "one"), message(1, "not two")];
    let refused = Appender::open(&store, "c2", Owner::Admin)
        .unwrap()
        .catch_up(&other)
        .unwrap_err();
    assert!(matches!(refused, StoreError::Diverged { .. }), "{refused}");
    let shorter = Appender::open(&store, "c2", Owner::Admin)
        .unwrap()
        .catch_up(&log)
        .unwrap_err();
    assert!(
        matches!(shorter, StoreError::Diverged { at: 2, .. }),
        "{shorter}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_writers_of_the_same_event_id_one_wins() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "race")).await.unwrap();
    store.add_conversation("c3", Owner::Admin).await.unwrap();
    for id in 0..20 {
        let writers: Vec<_> = (0..2)
            .map(|writer| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .append("c3", &message(id, &format!("writer {writer}")))
                        .await
                })
            })
            .collect();
        let mut won = 0;
        for writer in writers {
            match writer.await.unwrap() {
                Ok(()) => won += 1,
                Err(StoreError::OutOfOrder { .. }) => {}
                Err(other) => panic!("{other}"),
            }
        }
        assert_eq!(won, 1, "event {id}");
    }
    assert_eq!(store.count("c3").await.unwrap(), 20);
}

#[tokio::test]
async fn users_keys_and_whose_conversations() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "users")).await.unwrap();
    let alice = store.add_user("alice").await.unwrap();
    let bob = store.add_user("bob").await.unwrap();
    assert_eq!(alice.key.len(), 64);
    assert_ne!(alice.key, bob.key);
    assert_eq!(
        store.user_by_key(&alice.key).await.unwrap(),
        Some(alice.user.clone())
    );
    assert_eq!(
        store.user_by_key(&bob.key).await.unwrap(),
        Some(bob.user.clone())
    );
    assert_eq!(store.user_by_key(&alice.key[1..]).await.unwrap(), None);
    assert!(matches!(
        store.add_user("alice").await,
        Err(StoreError::UserExists(_))
    ));
    for bad in ["", "-alice", "a b", "a/b", &"x".repeat(65)] {
        assert!(
            matches!(store.add_user(bad).await, Err(StoreError::BadUserName(_))),
            "{bad:?}"
        );
    }
    // Only the key's digest is kept.
    let client = raw(&cluster, "users").await;
    let kept: Vec<String> = client
        .query("SELECT encode(digest, 'hex') FROM keys", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(kept.len(), 2);
    assert!(!kept.contains(&alice.key) && !kept.contains(&bob.key));
    // Conversations are their owner's; the admin sees all; an owner is never replaced.
    let alices = Owner::User(alice.user.id);
    store.add_conversation("a1", alices).await.unwrap();
    store
        .add_conversation("b1", Owner::User(bob.user.id))
        .await
        .unwrap();
    store.add_conversation("x1", Owner::Admin).await.unwrap();
    assert_eq!(
        store
            .add_conversation("a1", Owner::User(bob.user.id))
            .await
            .unwrap(),
        alices
    );
    assert_eq!(store.conversations(alices).await.unwrap(), vec!["a1"]);
    assert_eq!(
        store.conversations(Owner::Admin).await.unwrap(),
        vec!["a1", "b1", "x1"]
    );
    assert_eq!(
        store.owner("b1").await.unwrap(),
        Some(Owner::User(bob.user.id))
    );
    assert_eq!(store.owner("zz").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lease_is_held_by_one_and_a_stale_epoch_cannot_append() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "leases")).await.unwrap();
    store.add_conversation("c4", Owner::Admin).await.unwrap();
    store.add_conversation("c5", Owner::Admin).await.unwrap();
    let long = std::time::Duration::from_secs(60);
    let short = std::time::Duration::from_secs(2);
    // Taken by one of several replicas racing for it.
    let takers: Vec<_> = (0..4)
        .map(|replica| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .take_lease("c4", &format!("replica-{replica}"), long)
                    .await
            })
        })
        .collect();
    let mut taken = Vec::new();
    for taker in takers {
        taken.extend(taker.await.unwrap().unwrap());
    }
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(
        store.take_lease("c4", "replica-9", long).await.unwrap(),
        None
    );
    let first = store
        .take_lease("c5", "replica-0", short)
        .await
        .unwrap()
        .unwrap();
    store
        .append_leased(&first, &message(0, "one"))
        .await
        .unwrap();
    assert_eq!(
        store.renew_lease(&first, short).await.unwrap(),
        Renewal::Renewed
    );
    // Nobody renews: it expires, it is a cut-off run, and another replica takes it with
    // the next epoch.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(store.cut_off().await.unwrap(), vec!["c5".to_string()]);
    // Its holder letting it go once expired (its run stopped by an append refused for
    // it) leaves it cut off: released, nobody would go on with the run.
    store.release_lease(&first).await.unwrap();
    assert_eq!(store.cut_off().await.unwrap(), vec!["c5".to_string()]);
    let expired = store.append_leased(&first, &message(1, "late")).await;
    assert!(
        matches!(expired, Err(StoreError::LeaseLost { epoch, held: Some(held), .. }) if epoch == first.epoch && held == first.epoch),
        "{expired:?}"
    );
    let second = store
        .take_lease("c5", "replica-9", long)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.epoch, first.epoch + 1);
    assert!(store.cut_off().await.unwrap().is_empty());
    // The old holder's append, renewal and release change nothing; the new one writes.
    let stale = store.append_leased(&first, &message(1, "stale")).await;
    match stale {
        Err(err @ StoreError::LeaseLost { .. }) => {
            assert!(err.to_string().contains("epoch 2 holds it now"), "{err}")
        }
        other => panic!("a stale epoch appended: {other:?}"),
    }
    assert_eq!(
        store.renew_lease(&first, long).await.unwrap(),
        Renewal::Lost
    );
    store.release_lease(&first).await.unwrap();
    // Through the appender (the session's sink) as well.
    let old_writer = Appender::open_leased(&store, &first, Owner::Admin).unwrap();
    let refused = tokio::task::spawn_blocking(move || old_writer.append(&message(1, "stale")))
        .await
        .unwrap();
    assert!(
        matches!(refused, Err(StoreError::LeaseLost { .. })),
        "{refused:?}"
    );
    store
        .append_leased(&second, &message(1, "two"))
        .await
        .unwrap();
    assert_eq!(store.count("c5").await.unwrap(), 2);
    // Released: free for anyone, and not a cut-off run.
    store.release_lease(&second).await.unwrap();
    assert!(store.cut_off().await.unwrap().is_empty());
    let third = store
        .take_lease("c5", "replica-1", long)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third.epoch, second.epoch + 1);
    assert!(matches!(
        store.take_lease("nobody", "replica-1", long).await,
        Err(StoreError::NoConversation(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_import_lease_keeps_runs_off_and_is_refused_while_a_run_holds_or_lost_one() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let store = Store::connect(&database(&cluster, "imports"))
        .await
        .unwrap();
    store.add_conversation("c6", Owner::Admin).await.unwrap();
    store.add_conversation("c7", Owner::Admin).await.unwrap();
    let long = std::time::Duration::from_secs(60);
    let short = std::time::Duration::from_secs(2);
    // A run on c7 whose replica dies: cut off once its lease expires.
    store
        .take_lease("c7", "replica-0", short)
        .await
        .unwrap()
        .unwrap();
    // An import holds c6: no run takes it, nor another import; it is no cut-off run;
    // its appends are taken.
    let import = store
        .take_import_lease("c6", "import-1", short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.take_lease("c6", "replica-0", long).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .take_import_lease("c6", "import-2", long)
            .await
            .unwrap(),
        None
    );
    store
        .append_leased(&import, &message(0, "imported"))
        .await
        .unwrap();
    assert_eq!(
        store.renew_lease(&import, short).await.unwrap(),
        Renewal::Renewed
    );
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    // The importer died: its lease expired, and it never counts as a run cut off (c7 does).
    assert_eq!(store.cut_off().await.unwrap(), vec!["c7".to_string()]);
    // A cut-off run is for a replica to take over, not for an import.
    assert_eq!(
        store
            .take_import_lease("c7", "import-3", long)
            .await
            .unwrap(),
        None
    );
    // The dead import's conversation is free for a run, whose lease an import then
    // waits for; the import's appends are refused.
    let run = store
        .take_lease("c6", "replica-1", long)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        store.append_leased(&import, &message(1, "late")).await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert_eq!(
        store
            .take_import_lease("c6", "import-4", long)
            .await
            .unwrap(),
        None
    );
    // Let go by the run: an import takes it; let go by the import: a run takes it.
    store.release_lease(&run).await.unwrap();
    let again = store
        .take_import_lease("c6", "import-5", long)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.epoch, run.epoch + 1);
    store.release_lease(&again).await.unwrap();
    assert!(store
        .take_lease("c6", "replica-2", long)
        .await
        .unwrap()
        .is_some());
    assert_eq!(store.count("c6").await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_schedules_time_is_claimed_by_one_replica() {
    let Some(cluster) = Postgres::start() else {
        return;
    };
    let database = database(&cluster, "firings");
    let (a, b) = (
        Store::connect(&database).await.unwrap(),
        Store::connect(&database).await.unwrap(),
    );
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
    for round in 0..10 {
        let at = at + std::time::Duration::from_secs(60 * round);
        let claims = [
            tokio::spawn({
                let a = a.clone();
                async move { a.claim_firing("nightly", at, "a").await }
            }),
            tokio::spawn({
                let b = b.clone();
                async move { b.claim_firing("nightly", at, "b").await }
            }),
        ];
        let mut won = 0;
        for claim in claims {
            won += usize::from(claim.await.unwrap().unwrap());
        }
        assert_eq!(won, 1, "round {round}");
        // Claimed once: never again, by anyone.
        assert!(!a.claim_firing("nightly", at, "a").await.unwrap());
    }
    // Another automation's same time is its own.
    assert!(b.claim_firing("weekly", at, "b").await.unwrap());
}
