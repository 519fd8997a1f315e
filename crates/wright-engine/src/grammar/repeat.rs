//! Bounded repetition spelled out as rules (llama.cpp's `{m,n}` is not a bound above 2000):
//! short right-recursive chains, and chunks of about sqrt(n) units beyond that.

use super::{join, lit, Builder, PLAIN_CHAIN_MAX};

impl Builder<'_> {
    /// `count` copies of `unit` as a sequence, in chunks once that gets long.
    pub(super) fn exact(&mut self, unit: &str, count: u64) -> Vec<String> {
        if count <= PLAIN_CHAIN_MAX {
            return vec![unit.to_string(); usize_of(count)];
        }
        let size = ceil_sqrt(count);
        let chunk = self.chunk(unit, size);
        let mut parts = vec![chunk; usize_of(count / size)];
        parts.extend(vec![unit.to_string(); usize_of(count % size)]);
        parts
    }

    /// Zero to `max` copies of `unit`; `None` when `max` is 0 (nothing to emit).
    pub(super) fn at_most(&mut self, unit: &str, max: u64) -> Option<String> {
        if max == 0 {
            return None;
        }
        if max <= PLAIN_CHAIN_MAX {
            return Some(self.chain(unit, max));
        }
        Some(self.chunked(unit, max, ceil_sqrt(max)))
    }

    /// `unit-c{k} ::= unit unit-c{k-1} | ""`: at most k, one rule per step; shared by every
    /// smaller bound on the same unit.
    pub(super) fn chain(&mut self, unit: &str, max: u64) -> String {
        if max == 0 {
            return lit("");
        }
        let mut below: Option<String> = None;
        for count in 1..=max {
            let name = format!("{unit}-c{count}");
            if !self.has(&name) {
                let body = format!("{} | {}", join([Some(unit.into()), below]), lit(""));
                self.add(&name, &body);
            }
            below = Some(name);
        }
        format!("{unit}-c{max}")
    }

    /// At most `max` copies as "a tail shorter than one chunk, or a chunk then at most
    /// `max - size` more" (see the module docs).
    pub(super) fn chunked(&mut self, unit: &str, max: u64, size: u64) -> String {
        let tail = self.chain(unit, size - 1);
        let chunk = self.chunk(unit, size);
        let mut below = self.at_most_plain(unit, max % size);
        for level in 1..=max / size {
            let name = format!("{unit}-le{}-b{size}", max % size + level * size);
            let body = format!("{tail} | {}", join([Some(chunk.clone()), below]));
            below = Some(self.add(&name, &body));
        }
        format!("{unit}-le{max}-b{size}")
    }

    pub(super) fn at_most_plain(&mut self, unit: &str, max: u64) -> Option<String> {
        (max > 0).then(|| self.chain(unit, max))
    }

    /// `unit-x{size} ::= unit unit ...`: exactly `size` copies.
    pub(super) fn chunk(&mut self, unit: &str, size: u64) -> String {
        let name = format!("{unit}-x{size}");
        if !self.has(&name) {
            self.add(&name, &vec![unit; usize_of(size)].join(" "));
        }
        name
    }
}

pub(super) fn ceil_sqrt(n: u64) -> u64 {
    let root = n.isqrt();
    if root * root < n {
        root + 1
    } else {
        root
    }
}

/// Repetition counts come from u32 limits, so they fit a usize on every supported target.
pub(super) fn usize_of(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}
