//! Caches set aside in memory. When a request has to reuse a slot whose cache it would cut
//! short — a side request (a condensation's summary, a question asked aside) or a fork,
//! with no slot free for it — the slot's cache is copied out first, sized by the tokens it
//! holds rather than by the window. A later request that shares more with a parked cache
//! than with its slot gets that cache back, instead of reading its whole prompt again.
//!
//! What it guarantees: at most [`MAX_PARKED`] caches, together no larger than the memory
//! free when they are parked (the oldest go first); a cache is parked only when it would
//! lose at least [`WORTH_PARKING`] tokens, so short side requests are not kept.

use llama_cpp_2::token::LlamaToken;
use std::collections::VecDeque;

/// Caches kept at most.
pub const MAX_PARKED: usize = 4;

/// A cache that would lose fewer tokens than this is not worth copying out.
pub const WORTH_PARKING: usize = 256;

/// A parked cache is taken back only when it spares at least this many more tokens than
/// the slot's own cache (copying it back costs a little).
pub const WORTH_RESTORING: usize = 64;

/// One cache set aside: its tokens and llama.cpp's sequence state for them (`S`), which
/// takes `bytes` of memory.
pub struct Parked<S> {
    pub tokens: Vec<LlamaToken>,
    pub state: S,
    pub bytes: u64,
}

pub struct Parking<S> {
    /// Oldest first.
    entries: VecDeque<Parked<S>>,
}

impl<S> Default for Parking<S> {
    fn default() -> Self {
        Parking {
            entries: VecDeque::new(),
        }
    }
}

impl<S> Parking<S> {
    /// Keeps `parked`, within `budget` bytes for all of them: older caches go first, and
    /// so does any cache that `parked` extends (it holds all of it).
    pub fn park(&mut self, parked: Parked<S>, budget: u64) {
        if parked.bytes > budget {
            return;
        }
        self.entries
            .retain(|old| !parked.tokens.starts_with(&old.tokens));
        self.entries.push_back(parked);
        while self.entries.len() > MAX_PARKED || self.bytes() > budget {
            self.entries.pop_front();
        }
    }

    /// The parked cache sharing the most with its prompt (`shared` gives, for a parked
    /// cache's tokens, how many of them the prompt keeps), taken out when it spares at
    /// least [`WORTH_RESTORING`] tokens more than `current`.
    pub fn take_better(
        &mut self,
        current: usize,
        shared: impl Fn(&[LlamaToken]) -> usize,
    ) -> Option<Parked<S>> {
        let (index, most) = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, parked)| (index, shared(&parked.tokens)))
            .max_by_key(|(_, most)| *most)?;
        if most < current + WORTH_RESTORING {
            return None;
        }
        self.entries.remove(index)
    }

    pub fn bytes(&self) -> u64 {
        self.entries.iter().map(|p| p.bytes).sum()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked(tokens: &[i32], bytes: u64) -> Parked<()> {
        Parked {
            tokens: tokens.iter().map(|t| LlamaToken(*t)).collect(),
            state: (),
            bytes,
        }
    }

    fn common(a: &[LlamaToken], b: &[i32]) -> usize {
        a.iter().zip(b).take_while(|(x, y)| x.0 == **y).count()
    }

    #[test]
    fn the_best_parked_cache_comes_back_only_when_it_spares_enough() {
        let mut parking = Parking::default();
        let long: Vec<i32> = (0..500).collect();
        parking.park(parked(&long, 10), 1000);
        let prompt: Vec<i32> = (0..600).collect();
        assert!(parking
            .take_better(450, |tokens| common(tokens, &prompt))
            .is_none());
        let back = parking
            .take_better(11, |tokens| common(tokens, &prompt))
            .expect("taken back");
        assert_eq!(back.tokens.len(), 500);
        assert_eq!(parking.len(), 0);
    }

    #[test]
    fn the_budget_and_the_count_drop_the_oldest_and_an_extended_cache_replaces_its_prefix() {
        let mut parking = Parking::default();
        for n in 0..6 {
            parking.park(parked(&[100 + n], 10), 1000);
        }
        assert_eq!(parking.len(), MAX_PARKED);
        parking.park(parked(&[1], 10), 25);
        assert_eq!((parking.len(), parking.bytes()), (2, 20));
        parking.park(parked(&[1, 2, 3], 10), 1000);
        assert_eq!(parking.len(), 2, "[1] is a prefix of [1, 2, 3]");
        parking.park(parked(&[9], 2000), 1000);
        assert_eq!(parking.len(), 2, "larger than the budget: not kept");
    }
}
