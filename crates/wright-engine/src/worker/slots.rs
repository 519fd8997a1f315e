//! Which slot a request runs in, and what its cache holds then: the idle slot sharing
//! the longest token prefix, a new slot (copied from the one it forks) while memory
//! allows, a saved cache read back for a resumed conversation, and caches parked in
//! memory and taken back (see `parking`). A prompt keeps a cache's tokens for as long as
//! their spelling is the prompt's start, so only what follows is evaluated.

use super::Slot;
use super::Worker;
use crate::error::EngineError;
use crate::machine::available_memory;
use crate::parking::Parked;
use crate::parking::WORTH_PARKING;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::PathBuf;

impl<'m> Worker<'m> {
    /// The tokens of `text` for a slot: when the slot's cache spells the start of `text`
    /// (the last reply as the model generated it, which re-tokenizing could split
    /// otherwise), its tokens then the rest tokenized; else the canonical tokens.
    pub(super) fn prompt_for(
        &self,
        slot: &Slot<'_>,
        text: &[u8],
        canonical: &[LlamaToken],
    ) -> Vec<LlamaToken> {
        self.prompt_after(&slot.tokens, text, canonical)
    }

    /// The prompt's tokens for a cache holding `cached`: the cached tokens kept as they
    /// are for as long as they spell the prompt's start (the last reply as the model
    /// generated it, which re-tokenizing could split otherwise; a fork's history up to
    /// its point), the rest tokenized; with none of them kept, the canonical tokens.
    pub(super) fn prompt_after(
        &self,
        cached: &[LlamaToken],
        text: &[u8],
        canonical: &[LlamaToken],
    ) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let mut offset = 0;
        let mut kept = 0;
        for &token in cached {
            let piece = vocab.token_to_piece(token, true, None);
            match text.get(offset..) {
                Some(rest) if !piece.is_empty() && rest.starts_with(&piece) => {
                    offset += piece.len();
                    kept += 1;
                }
                _ => break,
            }
        }
        if kept == 0 || kept <= common_prefix(cached, canonical) {
            return canonical.to_vec();
        }
        let mut prompt = cached[..kept].to_vec();
        prompt.extend(vocab.tokenize(&text[offset..], false, true));
        prompt
    }

    /// The first time a conversation with a saved cache comes to this engine (`wright
    /// resume`), and its slot holds little of its prompt: the saved cache is read into
    /// the slot (what the slot held is parked first). Returns the prompt's tokens for the
    /// slot as it is then.
    pub(super) fn consult_state_file(
        &mut self,
        slot: usize,
        file: Option<&PathBuf>,
        text: &[u8],
        canonical: &[LlamaToken],
        prompt: Vec<LlamaToken>,
    ) -> Vec<LlamaToken> {
        let Some(file) = file else {
            return prompt;
        };
        if !self.consulted.insert(file.clone()) || !file.is_file() {
            return prompt;
        }
        if common_prefix(&self.slots[slot].tokens, &prompt) * 2 >= prompt.len() {
            return prompt;
        }
        self.park(slot);
        let window = self.settings.window;
        let chosen = &mut self.slots[slot];
        chosen.tokens.clear();
        chosen.ctx.clear_kv_cache();
        restore(chosen, file, window);
        self.prompt_for(&self.slots[slot], text, canonical)
    }

    /// Before `slot`'s cache is cut down to what `prompt` shares with it: a parked cache
    /// that shares more comes back into the slot, and a cache that would lose much is
    /// parked first. Returns the prompt's tokens and how many of them the slot holds.
    pub(super) fn swap_in_parked(
        &mut self,
        slot: usize,
        text: &[u8],
        canonical: &[LlamaToken],
        prompt: Vec<LlamaToken>,
    ) -> Result<(Vec<LlamaToken>, usize), EngineError> {
        let held = self.slots[slot].tokens.len();
        let reuse = common_prefix(&self.slots[slot].tokens, &prompt);
        let mut parking = std::mem::take(&mut self.parking);
        let better = parking.take_better(reuse, |tokens| {
            common_prefix(tokens, &self.prompt_after(tokens, text, canonical))
        });
        self.parking = parking;
        if held - reuse >= WORTH_PARKING || better.is_some() {
            self.park(slot);
        }
        let Some(parked) = better else {
            return Ok((prompt, reuse));
        };
        let chosen = &mut self.slots[slot];
        chosen
            .ctx
            .state_seq_set(&parked.state, 0)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        chosen.tokens = parked.tokens;
        let prompt = self.prompt_for(&self.slots[slot], text, canonical);
        let reuse = common_prefix(&self.slots[slot].tokens, &prompt);
        Ok((prompt, reuse))
    }

    /// Copies `slot`'s cache out, when it is worth keeping and fits in free memory; a
    /// failure to copy only loses the chance to take it back.
    pub(super) fn park(&mut self, slot: usize) {
        let chosen = &self.slots[slot];
        if chosen.tokens.len() < WORTH_PARKING {
            return;
        }
        let Ok(state) = chosen.ctx.state_seq_get(0, Default::default()) else {
            return;
        };
        let budget = available_memory().map_or(u64::MAX, |free| {
            free.saturating_sub(self.settings.reserve_bytes)
        }) + self.parking.bytes();
        self.parking.park(
            Parked {
                tokens: chosen.tokens.clone(),
                bytes: state.byte_len() as u64,
                state,
            },
            budget,
        );
    }

    /// The slot for a prompt and the prompt's tokens for it; None to wait for one.
    pub(super) fn choose_slot(
        &mut self,
        text: &[u8],
        canonical: &[LlamaToken],
        state_file: Option<&PathBuf>,
    ) -> Result<Option<(usize, Vec<LlamaToken>)>, EngineError> {
        let mut best: Option<(usize, usize, u64, Vec<LlamaToken>)> = None;
        for (i, slot) in self.slots.iter().enumerate().filter(|(_, s)| !s.busy) {
            let prompt = self.prompt_for(slot, text, canonical);
            let shared = common_prefix(&slot.tokens, &prompt);
            if best
                .as_ref()
                .is_none_or(|(_, most, used, _)| (shared, slot.last_used) > (*most, *used))
            {
                best = Some((i, shared, slot.last_used, prompt));
            }
        }
        if let Some((i, shared, _, _)) = &best {
            // The conversation's own slot: nothing is lost.
            if *shared > 0 && *shared == self.slots[*i].tokens.len() {
                return Ok(best.map(|(i, _, _, prompt)| (i, prompt)));
            }
        }
        if self.slots.len() < self.settings.max_slots && self.fits(1) {
            let mut slot = self.new_slot()?;
            let prompt = match best {
                // A fork: its own copy of the shared cache, the original left whole.
                Some((i, shared, _, prompt)) if shared > 0 => {
                    copy_cache(&self.slots[i], &mut slot)?;
                    prompt
                }
                _ => {
                    if let Some(file) = state_file {
                        restore(&mut slot, file, self.settings.window);
                    }
                    self.prompt_for(&slot, text, canonical)
                }
            };
            self.slots.push(slot);
            return Ok(Some((self.slots.len() - 1, prompt)));
        }
        match best {
            Some((i, 0, _, _)) if state_file.is_some() => {
                // Another conversation's cache goes; this one's may come back.
                let window = self.settings.window;
                let slot = &mut self.slots[i];
                slot.tokens.clear();
                slot.ctx.clear_kv_cache();
                if let Some(file) = state_file {
                    restore(slot, file, window);
                }
                let prompt = self.prompt_for(&self.slots[i], text, canonical);
                Ok(Some((i, prompt)))
            }
            Some((i, _, _, prompt)) => Ok(Some((i, prompt))),
            None if self.slots.is_empty() => Err(self.out_of_memory()),
            None => Ok(None),
        }
    }

    /// Whether `more` slots' caches fit beside what runs now.
    pub(super) fn fits(&self, more: usize) -> bool {
        let Some(free) = available_memory() else {
            return true;
        };
        let needed = self.slot_bytes() * more as u64 + self.settings.reserve_bytes;
        needed <= free
    }

    pub(super) fn slot_bytes(&self) -> u64 {
        self.settings.cache_bytes_per_token * u64::from(self.settings.window)
    }

    pub(super) fn out_of_memory(&self) -> EngineError {
        EngineError::OutOfMemory {
            window: self.settings.window,
            needed: self.slot_bytes() + self.settings.reserve_bytes,
            free: available_memory().unwrap_or(0),
            others: self.slots.len(),
        }
    }

    pub(super) fn new_slot(&self) -> Result<Slot<'m>, EngineError> {
        let threads = i32::try_from(self.settings.threads).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(self.settings.window))
            .with_n_batch(self.settings.batch)
            .with_n_ubatch(self.settings.batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = self
            .model
            .new_context(self.backend, params)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        Ok(Slot {
            ctx,
            tokens: Vec::new(),
            busy: false,
            last_used: 0,
            state_file: None,
        })
    }
}

/// Drops the cache from position `keep` on.
pub(super) fn forget_from(slot: &mut Slot<'_>, keep: usize) -> Result<(), EngineError> {
    if keep < slot.tokens.len() {
        let from =
            u32::try_from(keep).map_err(|_| EngineError::Llama("position out of range".into()))?;
        slot.ctx
            .clear_kv_cache_seq(Some(0), Some(from), None)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        slot.tokens.truncate(keep);
    }
    Ok(())
}

pub(super) fn copy_cache(from: &Slot<'_>, to: &mut Slot<'_>) -> Result<(), EngineError> {
    let state = from
        .ctx
        .state_seq_get(0, Default::default())
        .map_err(|err| EngineError::Llama(err.to_string()))?;
    to.ctx
        .state_seq_set(&state, 0)
        .map_err(|err| EngineError::Llama(err.to_string()))?;
    to.tokens.clone_from(&from.tokens);
    Ok(())
}

/// Reads a saved cache into an empty slot; a missing, stale or foreign file leaves the
/// slot empty (the prompt is then read in full, as it would be without the file).
pub(super) fn restore(slot: &mut Slot<'_>, file: &PathBuf, window: u32) {
    if !file.is_file() {
        return;
    }
    match slot.ctx.state_load_file(file, window as usize) {
        Ok(tokens) => slot.tokens = tokens,
        Err(_) => {
            slot.ctx.clear_kv_cache();
            slot.tokens.clear();
        }
    }
}

/// How many leading tokens `a` and `b` share.
pub fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
