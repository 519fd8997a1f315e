//! Progress of a download as the front end draws it: bytes done of the total, speed and
//! time left, reported at most ten times a second.
//!
//! What it guarantees: the first and the last state of each stage are always reported,
//! whatever the throttle; speed counts only the bytes of the current stage, so a resumed
//! download does not claim the speed of the bytes it already had.

use serde::Serialize;
use std::time::Duration;
use std::time::Instant;

/// What the download is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Reading the part file kept from an earlier attempt into the checksum, before asking
    /// the server for the rest (a few seconds per gigabyte).
    CheckingPart,
    /// Receiving bytes.
    Downloading,
}

/// One report to the progress callback.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    pub stage: Stage,
    /// Bytes of the file done so far, those of an earlier attempt included.
    pub done: u64,
    /// The file's size, when the server or the catalog says it.
    pub total: Option<u64>,
    /// Average over this stage so far.
    pub bytes_per_second: f64,
    /// At that speed, for the bytes still missing.
    pub time_left: Option<Duration>,
}

const EVERY: Duration = Duration::from_millis(100);

/// Turns byte counts into throttled [`Progress`] reports.
pub(crate) struct Meter<P> {
    report: P,
    stage: Stage,
    total: Option<u64>,
    started: Instant,
    base: u64,
    last: Option<Instant>,
}

impl<P: FnMut(&Progress)> Meter<P> {
    pub(crate) fn new(report: P) -> Self {
        Meter {
            report,
            stage: Stage::Downloading,
            total: None,
            started: Instant::now(),
            base: 0,
            last: None,
        }
    }

    /// A new stage from `done` bytes; reported at once.
    pub(crate) fn begin(&mut self, stage: Stage, done: u64, total: Option<u64>) {
        self.stage = stage;
        self.total = total;
        self.started = Instant::now();
        self.base = done;
        self.last = None;
        self.emit(done);
    }

    /// `done` bytes now; reported unless the last report is under 100 ms old.
    pub(crate) fn advance(&mut self, done: u64) {
        if self.last.is_some_and(|last| last.elapsed() < EVERY) {
            return;
        }
        self.emit(done);
    }

    /// The stage's last state; always reported.
    pub(crate) fn end(&mut self, done: u64) {
        self.emit(done);
    }

    fn emit(&mut self, done: u64) {
        let now = Instant::now();
        self.last = Some(now);
        let progress = progress_at(
            self.stage,
            done,
            self.total,
            done.saturating_sub(self.base),
            now.duration_since(self.started),
        );
        (self.report)(&progress);
    }
}

/// The report for `done` bytes, `moved` of them in `elapsed` of this stage.
fn progress_at(
    stage: Stage,
    done: u64,
    total: Option<u64>,
    moved: u64,
    elapsed: Duration,
) -> Progress {
    let seconds = elapsed.as_secs_f64();
    let bytes_per_second = if seconds > 0.0 {
        moved as f64 / seconds
    } else {
        0.0
    };
    let time_left = match total {
        Some(total) if bytes_per_second > 0.0 => Some(Duration::from_secs_f64(
            total.saturating_sub(done) as f64 / bytes_per_second,
        )),
        _ => None,
    };
    Progress {
        stage,
        done,
        total,
        bytes_per_second,
        time_left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn speed_counts_only_this_stage_and_time_left_follows_from_it() {
        let progress = progress_at(
            Stage::Downloading,
            600,
            Some(1000),
            200,
            Duration::from_secs(2),
        );
        assert_eq!(
            progress,
            Progress {
                stage: Stage::Downloading,
                done: 600,
                total: Some(1000),
                bytes_per_second: 100.0,
                time_left: Some(Duration::from_secs(4)),
            }
        );
    }

    #[test]
    fn no_speed_yet_means_no_time_left() {
        let progress = progress_at(Stage::CheckingPart, 0, Some(10), 0, Duration::ZERO);
        assert_eq!(progress.time_left, None);
        assert_eq!(progress.bytes_per_second, 0.0);
    }

    #[test]
    fn reports_are_throttled_but_the_first_and_last_always_go_out() {
        let mut seen = Vec::new();
        {
            let mut meter = Meter::new(|p: &Progress| seen.push(p.done));
            meter.begin(Stage::Downloading, 0, Some(30));
            meter.advance(10);
            meter.advance(20);
            meter.end(30);
        }
        assert_eq!(seen, vec![0, 30]);
    }
}
