//! How many prompt tokens one turn of the engine's thread reads. A request whose caller
//! went away (Ctrl-C, SIGTERM, a budget) is dropped between turns, and one llama.cpp
//! decode cannot be stopped midway: so a turn must be short, whatever the machine. A
//! whole batch (512 tokens) of a 7B model on a few CPU cores takes seconds; on a GPU,
//! milliseconds. So the unit follows the measured speed: the first is a whole batch, then
//! each holds as many tokens as fit in `TURN_MS` at the speed seen so far, within
//! [`FLOOR`, the context's batch] — a whole batch wherever one is quick, since each decode
//! has a fixed cost that small batches pay many times over (measured: 16-token turns made
//! the tiny test model's runs several times slower).

/// The time one prefill turn aims at.
const TURN_MS: f64 = 1500.0;
/// Below this, batching stops paying off.
const FLOOR: usize = 32;

/// The prefill speed seen so far.
#[derive(Debug, Default)]
pub(super) struct Pace {
    /// Milliseconds per prompt token, smoothed.
    ms_per_token: Option<f64>,
}

impl Pace {
    /// The tokens of the next prefill turn, at most `batch`.
    pub(super) fn unit(&self, batch: usize) -> usize {
        let batch = batch.max(1);
        let wanted = match self.ms_per_token {
            None => batch,
            Some(ms) if ms > 0.0 => (TURN_MS / ms) as usize,
            Some(_) => batch,
        };
        wanted.clamp(FLOOR.min(batch), batch)
    }

    /// `tokens` were read in `elapsed_ms`.
    pub(super) fn record(&mut self, tokens: usize, elapsed_ms: f64) {
        if tokens == 0 {
            return;
        }
        let seen = elapsed_ms / tokens as f64;
        // Smoothed, but quick to follow: the speed falls as the context grows.
        self.ms_per_token = Some(match self.ms_per_token {
            Some(before) => (before + seen) / 2.0,
            None => seen,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_machine_reads_the_prompt_in_short_turns() {
        let mut pace = Pace::default();
        assert_eq!(pace.unit(512), 512, "the first turn is a whole batch");
        // 30 ms a token (a 7B model on two cores): a turn of 512 takes 15 s.
        pace.record(512, 512.0 * 30.0);
        let unit = pace.unit(512);
        assert_eq!(unit, (TURN_MS / 30.0) as usize);
        assert!(unit as f64 * 30.0 <= TURN_MS, "{unit}");
        // Slower still: never below the floor.
        pace.record(50, 50.0 * 500.0);
        assert_eq!(pace.unit(512), FLOOR);
    }

    #[test]
    fn a_fast_machine_reads_whole_batches() {
        let mut pace = Pace::default();
        pace.record(32, 0.5);
        assert_eq!(pace.unit(512), 512);
        // Never beyond the context's batch, and never zero.
        assert_eq!(pace.unit(8), 8);
        assert_eq!(pace.unit(0), 1);
    }

    #[test]
    fn the_unit_follows_a_slowing_speed() {
        let mut pace = Pace::default();
        pace.record(512, 51.2);
        let fast = pace.unit(512);
        for _ in 0..4 {
            pace.record(100, 100.0 * 20.0);
        }
        assert!(pace.unit(512) < fast);
        assert!(pace.unit(512) as f64 * 20.0 <= TURN_MS * 1.5);
    }
}
