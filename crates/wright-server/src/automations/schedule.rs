//! Schedules: each `on = "schedule"` automation fires at the times its cron expression
//! (`croner`) gives in its time zone (UTC or a fixed offset), read from a `Clock` that
//! tests replace, so no test sleeps.
//!
//! What it guarantees: a time fires once — the last time fired is written (durably)
//! before the firing starts, so a restart never fires it again; a time that passed while
//! the server was down fires once at start (`missed = "run_once"`, however many passed)
//! or not at all (`skip`); the first start of a schedule fires nothing for the past.
//! (With several replicas, the write of the last time is where a shared database's
//! conditional update goes, so only one replica fires a time.)

use super::fire;
use super::store::Step;
use super::store::StepKind;
use super::Automations;
use chrono::DateTime;
use chrono::FixedOffset;
use chrono::Utc;
use std::sync::Arc;
use wright_config::automations::Missed;
use wright_config::automations::Trigger;

/// Where a schedule reads the time, and how it waits.
#[async_trait::async_trait]
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
    /// Returns once `now()` is at least `at`.
    async fn sleep_until(&self, at: DateTime<Utc>);
}

/// The system's clock.
pub struct SystemClock;

#[async_trait::async_trait]
impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    async fn sleep_until(&self, at: DateTime<Utc>) {
        // In steps of at most a minute: a clock set forward (or a suspended machine)
        // is noticed within a minute.
        loop {
            let left = at - Utc::now();
            let Ok(left) = left.to_std() else {
                return;
            };
            if left.is_zero() {
                return;
            }
            tokio::time::sleep(left.min(std::time::Duration::from_secs(60))).await;
        }
    }
}

/// Why a schedule cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("schedule '{cron}': {message}")]
    Cron { cron: String, message: String },
    #[error("time zone '{0}' is not UTC nor an offset such as +02:00")]
    Zone(String),
}

/// A cron expression in a time zone.
pub struct Schedule {
    cron: croner::Cron,
    zone: FixedOffset,
}

impl Schedule {
    pub fn new(cron: &str, zone: &str) -> Result<Self, ScheduleError> {
        let parsed = croner::Cron::new(cron)
            .parse()
            .map_err(|err| ScheduleError::Cron {
                cron: cron.to_string(),
                message: err.to_string(),
            })?;
        let seconds = wright_config::automations::fixed_offset_seconds(zone)
            .ok_or_else(|| ScheduleError::Zone(zone.to_string()))?;
        let zone =
            FixedOffset::east_opt(seconds).ok_or_else(|| ScheduleError::Zone(zone.to_string()))?;
        Ok(Self { cron: parsed, zone })
    }

    /// The first time after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&after.with_timezone(&self.zone), false)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }
}

/// What a schedule does at start, given the last time it fired (as written) and now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtStart {
    /// Fire once now, for the time that was missed.
    FireMissed(DateTime<Utc>),
    Nothing,
}

pub fn at_start(
    schedule: &Schedule,
    last: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    missed: Missed,
) -> AtStart {
    let Some(last) = last else {
        return AtStart::Nothing;
    };
    // The latest time in (last, now], if any passed.
    let mut passed = None;
    let mut at = last;
    while let Some(next) = schedule.next_after(at).filter(|t| *t <= now) {
        passed = Some(next);
        at = next;
    }
    match (passed, missed) {
        (Some(time), Missed::RunOnce) => AtStart::FireMissed(time),
        _ => AtStart::Nothing,
    }
}

/// The schedule's loop: at start the missed time (see `at_start`), then each time as it
/// comes; `fire` is called with the time after `record` kept it.
pub async fn run(
    schedule: &Schedule,
    clock: &dyn Clock,
    missed: Missed,
    last: Option<DateTime<Utc>>,
    mut record: impl FnMut(DateTime<Utc>) -> bool,
    mut fire: impl FnMut(DateTime<Utc>),
) {
    let now = clock.now();
    let mut from = now;
    match at_start(schedule, last, now, missed) {
        AtStart::FireMissed(time) => {
            if record(now) {
                fire(time);
            }
        }
        // A first start, nothing missed, or the missed times skipped: from now on.
        AtStart::Nothing => {
            record(now);
        }
    }
    loop {
        let Some(next) = schedule.next_after(from) else {
            return;
        };
        clock.sleep_until(next).await;
        from = next;
        if record(next) {
            fire(next);
        }
    }
}

fn last_path(name: &str) -> std::path::PathBuf {
    wright_session::stored::conversations_root()
        .with_file_name("automations")
        .join(name)
        .join("schedule-last.txt")
}

fn read_last(name: &str) -> Option<DateTime<Utc>> {
    let text = std::fs::read_to_string(last_path(name)).ok()?;
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Writes the last time durably (a new file renamed over the old one).
fn write_last(name: &str, at: DateTime<Utc>) -> bool {
    let path = last_path(name);
    let written = (|| -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let temporary = path.with_extension("new");
        std::fs::write(&temporary, at.to_rfc3339())?;
        std::fs::File::open(&temporary)?.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    written.is_ok()
}

/// Starts every schedule's loop.
pub fn start(automations: Arc<Automations>, clock: Arc<dyn Clock>) {
    for defined in &automations.defined {
        let Trigger::Schedule {
            cron,
            timezone,
            missed,
        } = &defined.automation.trigger
        else {
            continue;
        };
        let schedule = match Schedule::new(cron, timezone) {
            Ok(schedule) => schedule,
            Err(err) => {
                let mut step = Step::new("schedule", StepKind::Failed);
                step.detail = Some(err.to_string());
                let _ = defined.store.log(&step);
                continue;
            }
        };
        let (defined, runs, clock, missed) = (
            defined.clone(),
            automations.runs.clone(),
            clock.clone(),
            *missed,
        );
        tokio::spawn(async move {
            let name = defined.automation.name.clone();
            let last = read_last(&name);
            run(
                &schedule,
                clock.as_ref(),
                missed,
                last,
                |at| {
                    let kept = write_last(&name, at);
                    if !kept {
                        // Not fired, so never fired twice.
                        let mut step = Step::new("schedule", StepKind::Failed);
                        step.detail = Some(format!(
                            "cannot record the time {} in {}: not fired",
                            at.to_rfc3339(),
                            last_path(&name).display()
                        ));
                        let _ = defined.store.log(&step);
                    }
                    kept
                },
                |at| {
                    let firing = fire::firing_id();
                    let mut step = Step::new(&firing, StepKind::Fired);
                    step.detail = Some(format!("scheduled for {}", at.to_rfc3339()));
                    let _ = defined.store.log(&step);
                    tokio::spawn(fire::fire(runs.clone(), defined.clone(), firing, None));
                },
            )
            .await;
        });
    }
}

#[cfg(test)]
mod tests {
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
        assert!(Schedule::new("* * * * *", "Europe/Paris").is_err());
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
}
