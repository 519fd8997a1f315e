//! The schedule's tests: cron times in UTC and named zones across daylight saving, the
//! loop on an injected clock, and two replicas on one database.

#![allow(clippy::unwrap_used)]
use super::*;
use std::sync::Mutex;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

#[test]
fn times_in_their_zone() {
    let nightly = Schedule::new("0 3 * * *", "+02:00").unwrap();
    // 03:00 at +02:00 is 01:00 UTC.
    assert_eq!(
        nightly.next_after(at("2026-03-01T00:30:00Z")),
        Some(at("2026-03-01T01:00:00Z"))
    );
    assert_eq!(
        nightly.next_after(at("2026-03-01T01:00:00Z")),
        Some(at("2026-03-02T01:00:00Z"))
    );
    assert!(Schedule::new("61 * * * *", "UTC").is_err());
    assert!(Schedule::new("* * * * *", "Mars/Olympus").is_err());
}

#[test]
fn a_missed_time_fires_once_or_not_at_all() {
    let hourly = Schedule::new("0 * * * *", "UTC").unwrap();
    let down_at = at("2026-03-01T10:30:00Z");
    let back_at = at("2026-03-01T14:10:00Z");
    assert_eq!(
        at_start(&hourly, Some(down_at), back_at, Missed::RunOnce),
        AtStart::FireMissed(at("2026-03-01T14:00:00Z"))
    );
    assert_eq!(
        at_start(&hourly, Some(down_at), back_at, Missed::Skip),
        AtStart::Nothing
    );
    assert_eq!(
        at_start(
            &hourly,
            Some(at("2026-03-01T14:00:00Z")),
            back_at,
            Missed::RunOnce
        ),
        AtStart::Nothing
    );
    assert_eq!(
        at_start(&hourly, None, back_at, Missed::RunOnce),
        AtStart::Nothing
    );
}

/// A clock the test moves; `sleep_until` waits until it is moved far enough.
struct Manual {
    now: Mutex<DateTime<Utc>>,
    moved: tokio::sync::Notify,
    asleep: tokio::sync::Notify,
}

#[async_trait::async_trait]
impl Clock for Manual {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap()
    }
    async fn sleep_until(&self, at: DateTime<Utc>) {
        loop {
            let moved = self.moved.notified();
            if self.now() >= at {
                return;
            }
            self.asleep.notify_one();
            moved.await;
        }
    }
}

impl Manual {
    async fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap() = to;
        self.moved.notify_waiters();
    }
}

#[tokio::test]
async fn a_schedule_fires_on_time_by_the_clock_without_sleeping() {
    let clock = Arc::new(Manual {
        now: Mutex::new(at("2026-03-01T10:30:00Z")),
        moved: tokio::sync::Notify::new(),
        asleep: tokio::sync::Notify::new(),
    });
    let schedule = Schedule::new("0 * * * *", "UTC").unwrap();
    let fired = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let running = {
        let (clock, fired, recorded) = (clock.clone(), fired.clone(), recorded.clone());
        tokio::spawn(async move {
            run(
                &schedule,
                clock.as_ref(),
                Missed::RunOnce,
                None,
                |t| {
                    recorded.lock().unwrap().push(t);
                    true
                },
                |t| fired.lock().unwrap().push(t),
            )
            .await;
        })
    };
    clock.asleep.notified().await;
    // First start: nothing for the past; the start is recorded.
    assert!(fired.lock().unwrap().is_empty());
    assert_eq!(
        recorded.lock().unwrap().clone(),
        vec![at("2026-03-01T10:30:00Z")]
    );
    clock.set(at("2026-03-01T10:59:59Z")).await;
    clock.asleep.notified().await;
    assert!(fired.lock().unwrap().is_empty());
    clock.set(at("2026-03-01T11:00:00Z")).await;
    clock.asleep.notified().await;
    clock.set(at("2026-03-01T12:00:00Z")).await;
    clock.asleep.notified().await;
    assert_eq!(
        fired.lock().unwrap().clone(),
        vec![at("2026-03-01T11:00:00Z"), at("2026-03-01T12:00:00Z")]
    );
    running.abort();
}

/// Two replicas' schedule loops on one database and one (injected) clock: each time,
/// missed at start or come, fires on one of them only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_database_fire_each_time_once() {
    let Some(cluster) = wright_testkit::postgres::Postgres::start() else {
        return;
    };
    cluster.create_database("schedules");
    let database = wright_session::database::Database::new(
        &cluster.url("schedules"),
        wright_session::database::Password::Given(wright_testkit::postgres::PASSWORD.into()),
    )
    .unwrap();
    let clock = Arc::new(Manual {
        now: Mutex::new(at("2026-03-01T12:30:00Z")),
        moved: tokio::sync::Notify::new(),
        asleep: tokio::sync::Notify::new(),
    });
    let fired = Arc::new(Mutex::new(Vec::new()));
    // Times handed to `fire`, and claims answered (won or not), by both replicas.
    let handed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut replicas = Vec::new();
    for replica in ["a", "b"] {
        let store = wright_session::database::Store::connect(&database)
            .await
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Each time handed to `fire` is claimed as `start` claims it.
        let claiming = tokio::spawn({
            let (fired, answered) = (fired.clone(), answered.clone());
            async move {
                while let Some(t) = rx.recv().await {
                    if claim(Some(&store), replica, "nightly", t).await.unwrap() {
                        fired.lock().unwrap().push((replica, t));
                    }
                    answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
        });
        let looping = tokio::spawn({
            let (clock, handed) = (clock.clone(), handed.clone());
            async move {
                let schedule = Schedule::new("0 * * * *", "UTC").unwrap();
                // Both last fired at 10:30: 11:00 and 12:00 were missed.
                run(
                    &schedule,
                    clock.as_ref(),
                    Missed::RunOnce,
                    Some(at("2026-03-01T10:30:00Z")),
                    |_| true,
                    |t| {
                        let _ = tx.send(t);
                        handed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    },
                )
                .await;
            }
        });
        replicas.push((looping, claiming));
    }
    async fn reached(counter: &std::sync::atomic::AtomicUsize, count: usize) {
        for _ in 0..1200 {
            if counter.load(std::sync::atomic::Ordering::SeqCst) >= count {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("never reached {count}");
    }
    // Both started at 12:30 and handed over the missed 12:00; then three hours pass.
    reached(&handed, 2).await;
    clock.set(at("2026-03-01T15:00:00Z")).await;
    reached(&handed, 8).await;
    reached(&answered, 8).await;
    let mut times: Vec<DateTime<Utc>> = fired.lock().unwrap().iter().map(|(_, t)| *t).collect();
    times.sort();
    assert_eq!(
        times,
        vec![
            at("2026-03-01T12:00:00Z"),
            at("2026-03-01T13:00:00Z"),
            at("2026-03-01T14:00:00Z"),
            at("2026-03-01T15:00:00Z"),
        ],
        "{:?}",
        fired.lock().unwrap()
    );
    for (looping, claiming) in replicas {
        looping.abort();
        claiming.abort();
    }
}

/// The times `cron` fires in `zone` while the clock goes from `from` to `to` in steps
/// of a quarter of an hour, by the schedule's own loop.
async fn fired_between(cron: &str, zone: &str, from: &str, to: &str) -> Vec<DateTime<Utc>> {
    let clock = Arc::new(Manual {
        now: Mutex::new(at(from)),
        moved: tokio::sync::Notify::new(),
        asleep: tokio::sync::Notify::new(),
    });
    let schedule = Schedule::new(cron, zone).unwrap();
    let fired = Arc::new(Mutex::new(Vec::new()));
    let running = {
        let (clock, fired) = (clock.clone(), fired.clone());
        tokio::spawn(async move {
            run(
                &schedule,
                clock.as_ref(),
                Missed::RunOnce,
                None,
                |_| true,
                |t| fired.lock().unwrap().push(t),
            )
            .await;
        })
    };
    clock.asleep.notified().await;
    let mut now = at(from);
    while now < at(to) {
        now += chrono::Duration::minutes(15);
        clock.set(now).await;
        clock.asleep.notified().await;
    }
    running.abort();
    let fired = fired.lock().unwrap().clone();
    fired
}

#[tokio::test]
async fn daylight_saving_changes_neither_skip_nor_double_a_time() {
    // Europe/Paris springs forward on 2026-03-29 (02:00 CET → 03:00 CEST): that
    // night's 02:30 does not exist and fires at 03:00 CEST, once.
    assert_eq!(
        fired_between(
            "30 2 * * *",
            "Europe/Paris",
            "2026-03-28T00:00:00Z",
            "2026-03-30T12:00:00Z"
        )
        .await,
        vec![
            at("2026-03-28T01:30:00Z"),
            at("2026-03-29T01:00:00Z"),
            at("2026-03-30T00:30:00Z"),
        ]
    );
    // It falls back on 2026-10-25 (03:00 CEST → 02:00 CET): that night's 02:30 comes
    // twice, and fires once, at the first.
    assert_eq!(
        fired_between(
            "30 2 * * *",
            "Europe/Paris",
            "2026-10-24T00:00:00Z",
            "2026-10-26T12:00:00Z"
        )
        .await,
        vec![
            at("2026-10-24T00:30:00Z"),
            at("2026-10-25T00:30:00Z"),
            at("2026-10-26T01:30:00Z"),
        ]
    );
    // A server started again in the repeated hour, after that night's 02:30 fired,
    // neither fires it again nor counts it as missed.
    let nightly = Schedule::new("30 2 * * *", "Europe/Paris").unwrap();
    let back = at("2026-10-25T01:10:00Z");
    assert_eq!(
        at_start(
            &nightly,
            Some(at("2026-10-25T00:30:00Z")),
            back,
            Missed::RunOnce
        ),
        AtStart::Nothing
    );
    assert_eq!(nightly.next_after(back), Some(at("2026-10-26T01:30:00Z")));
    // Named zones are the IANA database's: New York's change is another day.
    let new_york = Schedule::new("0 9 * * *", "America/New_York").unwrap();
    assert_eq!(
        new_york.next_after(at("2026-03-08T00:00:00Z")),
        Some(at("2026-03-08T13:00:00Z"))
    );
}
