//! The schema's migrations, kept in `migrations/` and compiled in: each applied once, in
//! order, in its own transaction, while the connection holds an advisory lock, so several
//! replicas starting at once on an empty database wait for one another and apply each
//! migration exactly once. A database migrated by a newer wright is refused.

use crate::StoreError;

/// The migrations, in order: version, SQL.
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../migrations/0001_store.sql")),
    (2, include_str!("../migrations/0002_leases.sql")),
    (3, include_str!("../migrations/0003_firings.sql")),
    (4, include_str!("../migrations/0004_import_leases.sql")),
    (5, include_str!("../migrations/0005_user_rights.sql")),
];

/// The advisory lock's key: "wright" in ASCII, so no other program's lock is taken.
const LOCK: i64 = 0x0000_7772_6967_6874;

pub(crate) async fn run(client: &mut tokio_postgres::Client) -> Result<(), StoreError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK])
        .await?;
    let applied = apply(client).await;
    // Released whatever happened: a failed start must not hold the others back.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK])
        .await;
    applied?;
    unlocked?;
    Ok(())
}

async fn apply(client: &mut tokio_postgres::Client) -> Result<(), StoreError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS wright_migrations (
                version integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await?;
    let row = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM wright_migrations",
            &[],
        )
        .await?;
    let current: i32 = row.get(0);
    let known = MIGRATIONS.last().map_or(0, |(version, _)| *version);
    if current > known {
        return Err(StoreError::NewerSchema {
            found: current,
            known,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let transaction = client.transaction().await?;
        transaction
            .batch_execute(sql)
            .await
            .map_err(|err| StoreError::Migrate(format!("migration {version}: {err}")))?;
        transaction
            .execute(
                "INSERT INTO wright_migrations (version) VALUES ($1)",
                &[version],
            )
            .await?;
        transaction.commit().await?;
    }
    Ok(())
}
