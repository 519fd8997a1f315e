//! Schedules: each `on = "schedule"` automation fires at the times its cron expression
//! (`croner`) gives in its time zone (UTC, a fixed offset, or a named zone of the IANA
//! database through `chrono-tz`), read from a `Clock` that tests replace, so no test
//! sleeps.
//!
//! What it guarantees: a time fires once — the last time fired is written (durably)
//! before the firing starts, so a restart never fires it again; a time that passed while
//! the server was down fires once at start (`missed = "run_once"`, however many passed)
//! or not at all (`skip`); the first start of a schedule fires nothing for the past. A
//! daylight-saving change neither skips nor doubles a time: a local time the change
//! skips fires at the first valid time after it (02:30 on a spring-forward night fires at
//! 03:00), and a local time it repeats fires once, at its first occurrence.
//! With several replicas on one database, each time is also claimed in the database
//! before it fires (`claim`: a row per automation and scheduled time), so only the first
//! replica to claim it fires it.

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
    #[error(
        "time zone '{0}' is not UTC, an offset such as +02:00, nor a zone such as Europe/Paris"
    )]
    Zone(String),
}

/// A schedule's time zone.
enum Zone {
    Fixed(FixedOffset),
    Named(chrono_tz::Tz),
}

/// A cron expression in a time zone.
pub struct Schedule {
    cron: croner::Cron,
    zone: Zone,
}

impl Schedule {
    pub fn new(cron: &str, zone: &str) -> Result<Self, ScheduleError> {
        let parsed = croner::Cron::new(cron)
            .parse()
            .map_err(|err| ScheduleError::Cron {
                cron: cron.to_string(),
                message: err.to_string(),
            })?;
        let zone = match wright_config::automations::fixed_offset_seconds(zone) {
            Some(seconds) => Zone::Fixed(
                FixedOffset::east_opt(seconds)
                    .ok_or_else(|| ScheduleError::Zone(zone.to_string()))?,
            ),
            None => Zone::Named(
                zone.parse::<chrono_tz::Tz>()
                    .map_err(|_| ScheduleError::Zone(zone.to_string()))?,
            ),
        };
        Ok(Self { cron: parsed, zone })
    }

    /// croner's next time after `after`, in the zone (a repeated local time may come
    /// back at its first occurrence, before `after`).
    fn croner_next(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.zone {
            Zone::Fixed(zone) => self
                .cron
                .find_next_occurrence(&after.with_timezone(zone), false)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            Zone::Named(zone) => self
                .cron
                .find_next_occurrence(&after.with_timezone(zone), false)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
        }
    }

    /// The first time after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut from = after;
        // In the hour a clock turned back repeats, croner reads the local time and gives
        // its first occurrence, which may be before `after`: that local time has had its
        // turn, so the search goes on past it (a repeated time fires once).
        for _ in 0..4 {
            let next = self.croner_next(from)?;
            if next > after {
                return Some(next);
            }
            from = next + chrono::Duration::minutes(1);
        }
        None
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

/// Claims the firing of `name` scheduled for `at` for `replica`: with a database, only
/// the first replica to claim that time gets true; without one, this server alone fires.
pub async fn claim(
    store: Option<&wright_session::database::Store>,
    replica: &str,
    name: &str,
    at: DateTime<Utc>,
) -> Result<bool, wright_session::database::StoreError> {
    match store {
        Some(store) => store.claim_firing(name, at.into(), replica).await,
        None => Ok(true),
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
                    let (runs, defined) = (runs.clone(), defined.clone());
                    tokio::spawn(async move {
                        let name = &defined.automation.name;
                        match claim(runs.store(), &runs.replica.name, name, at).await {
                            Ok(true) => {}
                            // Another replica fires it.
                            Ok(false) => return,
                            Err(err) => {
                                // Not fired, so never fired twice.
                                let mut step = Step::new("schedule", StepKind::Failed);
                                step.detail = Some(format!(
                                    "cannot claim the time {} in the database: not fired ({err})",
                                    at.to_rfc3339()
                                ));
                                let _ = defined.store.log(&step);
                                return;
                            }
                        }
                        let firing = fire::firing_id();
                        let mut step = Step::new(&firing, StepKind::Fired);
                        step.detail = Some(format!("scheduled for {}", at.to_rfc3339()));
                        let _ = defined.store.log(&step);
                        fire::fire(runs.clone(), defined.clone(), firing, None).await;
                    });
                },
            )
            .await;
        });
    }
}

#[cfg(test)]
mod tests;
