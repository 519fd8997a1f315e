//! What the admin lets users, and users' secrets, against a real PostgreSQL (a cluster of
//! its own per test): roots and limits per user; a run quota that two stores (two
//! replicas' pools) admitting at the same moment never overrun; secrets that each user
//! reads, lists and removes only of their own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use wright_store::Admission;
use wright_store::Database;
use wright_store::Owner;
use wright_store::Password;
use wright_store::Store;
use wright_store::StoreError;
use wright_testkit::postgres::Postgres;
use wright_testkit::postgres::PASSWORD;

async fn store(cluster: &Postgres) -> Store {
    let database = Database::new(&cluster.url("wright"), Password::Given(PASSWORD.into())).unwrap();
    Store::connect(&database).await.unwrap()
}

fn cluster() -> Option<Postgres> {
    let cluster = Postgres::start()?;
    cluster.create_database("wright");
    Some(cluster)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_admitting_together_never_overrun_a_users_limit() {
    let Some(cluster) = cluster() else {
        return;
    };
    let (a, b) = (store(&cluster).await, store(&cluster).await);
    let carol = a.add_user("carol").await.unwrap().user;
    let dave = a.add_user("dave").await.unwrap().user;
    a.set_max_running("carol", Some(2)).await.unwrap();
    let lease = Duration::from_secs(60);
    for round in 0..5 {
        // Ten runs of hers asked for at once, half on each replica.
        let mut ids = Vec::new();
        for n in 0..10 {
            let id = format!("c{round}-{n}");
            a.add_conversation(&id, Owner::User(carol.id))
                .await
                .unwrap();
            ids.push(id);
        }
        let asked: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| {
                let (store, id) = (if n % 2 == 0 { a.clone() } else { b.clone() }, id.clone());
                tokio::spawn(async move { store.admit(&id, carol.id, "replica", lease).await })
            })
            .collect();
        let mut taken = Vec::new();
        let mut full = 0;
        for answer in asked {
            match answer.await.unwrap().unwrap() {
                Admission::Taken(lease) => taken.push(lease),
                Admission::Full { limit, .. } => {
                    assert_eq!(limit, 2);
                    full += 1;
                }
                Admission::Held => panic!("nobody else holds these"),
            }
        }
        assert_eq!((taken.len(), full), (2, 8), "round {round}");
        // Another user is not held by her limit, and has none.
        let other = format!("d{round}");
        a.add_conversation(&other, Owner::User(dave.id))
            .await
            .unwrap();
        assert!(matches!(
            b.admit(&other, dave.id, "replica", lease).await.unwrap(),
            Admission::Taken(_)
        ));
        // What she asks while two run: the check answers at once, naming the limit.
        assert_eq!(a.has_room(carol.id, "").await.unwrap(), Some((2, 2)));
        // A run that holds its place is not counted against itself.
        assert_eq!(
            a.has_room(carol.id, &taken[0].conversation).await.unwrap(),
            None
        );
        for lease in &taken {
            a.release_lease(lease).await.unwrap();
        }
        assert_eq!(a.has_room(carol.id, "").await.unwrap(), None);
    }
    // A limit of 0 admits none; no limit admits all.
    a.set_max_running("carol", Some(0)).await.unwrap();
    a.add_conversation("zero", Owner::User(carol.id))
        .await
        .unwrap();
    assert_eq!(
        a.admit("zero", carol.id, "r", lease).await.unwrap(),
        Admission::Full {
            limit: 0,
            running: 0
        }
    );
    a.set_max_running("carol", None).await.unwrap();
    assert!(matches!(
        a.admit("zero", carol.id, "r", lease).await.unwrap(),
        Admission::Taken(_)
    ));
    assert!(matches!(
        a.set_max_running("nobody", Some(1)).await,
        Err(StoreError::NoUser(_))
    ));
}

#[tokio::test]
async fn roots_are_the_admins_to_give_and_take_per_user() {
    let Some(cluster) = cluster() else {
        return;
    };
    let store = store(&cluster).await;
    let alice = store.add_user("alice").await.unwrap().user;
    let bob = store.add_user("bob").await.unwrap().user;
    store.allow_root("alice", "/srv/b").await.unwrap();
    store.allow_root("alice", "/srv/a").await.unwrap();
    store.allow_root("alice", "/srv/a").await.unwrap();
    let rights = store.rights("alice").await.unwrap();
    assert_eq!(rights.roots, ["/srv/a", "/srv/b"]);
    assert_eq!(rights.max_running, None);
    assert_eq!(store.roots(alice.id).await.unwrap(), ["/srv/a", "/srv/b"]);
    assert!(store.roots(bob.id).await.unwrap().is_empty());
    assert!(matches!(
        store.allow_root("alice", "srv/relative").await,
        Err(StoreError::BadRoot(_))
    ));
    assert!(matches!(
        store.allow_root("carol", "/srv/a").await,
        Err(StoreError::NoUser(_))
    ));
    // Bob cannot lose what is not his; alice loses what she had.
    assert!(!store.disallow_root("bob", "/srv/a").await.unwrap());
    assert!(store.disallow_root("alice", "/srv/a").await.unwrap());
    assert!(!store.disallow_root("alice", "/srv/a").await.unwrap());
    assert_eq!(store.roots(alice.id).await.unwrap(), ["/srv/b"]);
}

#[tokio::test]
async fn each_users_secrets_are_their_own() {
    let Some(cluster) = cluster() else {
        return;
    };
    let store = store(&cluster).await;
    let alice = store.add_user("alice").await.unwrap().user;
    let bob = store.add_user("bob").await.unwrap().user;
    store.set_secret(alice.id, "TOKEN", "a-1").await.unwrap();
    store.set_secret(alice.id, "TOKEN", "a-2").await.unwrap();
    store.set_secret(alice.id, "OTHER", "a-3").await.unwrap();
    store.set_secret(bob.id, "TOKEN", "b-1").await.unwrap();
    assert_eq!(
        store.secret_names(alice.id).await.unwrap(),
        ["OTHER", "TOKEN"]
    );
    assert_eq!(store.secret_names(bob.id).await.unwrap(), ["TOKEN"]);
    let names = vec!["TOKEN".to_string(), "OTHER".to_string()];
    assert_eq!(
        store.secret_values(alice.id, &names).await.unwrap(),
        [
            ("TOKEN".into(), "a-2".into()),
            ("OTHER".into(), "a-3".into())
        ]
    );
    // Bob's TOKEN is his; her OTHER is not his to have.
    match store.secret_values(bob.id, &names).await {
        Err(StoreError::NoSecret { name, stored }) => {
            assert_eq!(
                (name.as_str(), stored),
                ("OTHER", vec!["TOKEN".to_string()])
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!store.remove_secret(bob.id, "OTHER").await.unwrap());
    assert!(store.remove_secret(alice.id, "OTHER").await.unwrap());
    assert_eq!(store.secret_names(alice.id).await.unwrap(), ["TOKEN"]);
    for bad in ["1X", "A-B", "", "WITH SPACE"] {
        assert!(matches!(
            store.set_secret(alice.id, bad, "v").await,
            Err(StoreError::BadSecretName(_))
        ));
    }
}
