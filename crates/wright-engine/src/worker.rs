//! The engine's own thread: it owns the loaded model and one llama.cpp context per
//! conversation slot, and interleaves every running request fairly, one unit of work each
//! in turn (a batch of prompt tokens, or one generated token).
//!
//! The KV cache is wright's: a slot keeps the tokens its cache holds, a request goes to the
//! idle slot sharing the longest token prefix with its prompt, and only the tokens after
//! that prefix are evaluated. A request that would cut short another conversation's
//! cache (a fork) gets a slot of its own, copied from that one, so neither starts from
//! zero; with no slot free, the cache it would cut short is parked in memory first
//! (`parking`) and comes back when its conversation does. A slot is added only when its
//! cache fits in the memory free now; else the request waits for a slot, or, with none
//! at all, is refused with the numbers. How a slot is chosen is `slots`. A request whose
//! caller went away (Ctrl-C, SIGTERM, a budget) stops before its next token, or before
//! its prompt's next turn, whose length `pace` keeps short.

use crate::error::EngineError;
use crate::parking::Parking;
use crate::reply::Ending;
use llama_cpp_2::context::session::SeqState;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use std::collections::HashSet;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use wright_llm::PromptProgress;

mod pace;
mod sampler;
mod slots;

use pace::Pace;

use sampler::Sampler;

use slots::forget_from;

/// One request for the thread.
pub struct Job {
    /// The rendered prompt (special tokens spelled out, contents neutralized).
    pub prompt: String,
    /// A GBNF grammar every reply is held to, when tools were offered.
    pub grammar: Option<String>,
    pub temperature: f32,
    pub max_tokens: u32,
    pub seed: u32,
    /// Where this conversation's cache is saved when the engine stops, and read from when
    /// no slot shares its prefix (`wright resume`).
    pub state_file: Option<PathBuf>,
    pub events: UnboundedSender<Event>,
}

/// What the thread tells a request's caller.
pub enum Event {
    Progress(PromptProgress),
    /// Newly generated text (whole UTF-8 characters).
    Text(String),
    Done(Result<Finished, EngineError>),
}

/// A finished reply and what it cost.
#[derive(Debug, Clone)]
pub struct Finished {
    pub text: String,
    pub ending: Ending,
    pub prompt_tokens: usize,
    /// Prompt tokens whose cache was reused.
    pub cached_tokens: usize,
    pub generated_tokens: usize,
    pub prompt_ms: f64,
    pub predicted_ms: f64,
}

/// Fixed settings of the thread.
#[derive(Debug, Clone)]
pub struct Settings {
    pub window: u32,
    pub threads: u32,
    pub batch: u32,
    pub max_slots: usize,
    /// Cache bytes per token of window (keys and values, all layers).
    pub cache_bytes_per_token: u64,
    /// Memory left free beside the caches, for the compute buffers and everything else.
    pub reserve_bytes: u64,
    /// What the thread did, every request together (the engine's counters).
    pub counters: std::sync::Arc<Counters>,
}

/// What the thread has done since the engine started, every request together.
#[derive(Debug, Default)]
pub struct Counters {
    /// Tokens generated.
    pub generated: std::sync::atomic::AtomicU64,
    /// Prompt tokens read (evaluated into a cache).
    pub prefilled: std::sync::atomic::AtomicU64,
}

struct Slot<'m> {
    ctx: LlamaContext<'m>,
    /// The tokens whose keys and values the cache holds, in order from position 0.
    tokens: Vec<LlamaToken>,
    busy: bool,
    last_used: u64,
    /// The conversation whose cache this is, to save when the engine stops.
    state_file: Option<PathBuf>,
}

struct Running {
    slot: usize,
    job: Job,
    prompt: Vec<LlamaToken>,
    next: usize,
    cached: usize,
    sampler: Sampler,
    text: Vec<u8>,
    sent: usize,
    generated: usize,
    prompt_ms: f64,
    predicted_ms: f64,
}

enum Admission {
    Started(Box<Running>),
    Wait(Job),
    Refused,
}

enum Progress {
    More,
    Done(Result<Finished, EngineError>),
}

/// The thread's body: returns when every sender is gone, after saving the caches of the
/// conversations that asked for it.
pub fn run(backend: &LlamaBackend, model: &LlamaModel, settings: &Settings, jobs: &Receiver<Job>) {
    let mut engine = Worker {
        backend,
        model,
        settings,
        slots: Vec::new(),
        clock: 0,
        parking: Parking::default(),
        consulted: HashSet::new(),
        pace: Pace::default(),
    };
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let mut running: VecDeque<Box<Running>> = VecDeque::new();
    loop {
        if running.is_empty() && waiting.is_empty() {
            match jobs.recv() {
                Ok(job) => waiting.push_back(job),
                Err(_) => break,
            }
        }
        while let Ok(job) = jobs.try_recv() {
            waiting.push_back(job);
        }
        while let Some(job) = waiting.pop_front() {
            match engine.admit(job) {
                Admission::Started(started) => running.push_back(started),
                Admission::Refused => {}
                Admission::Wait(job) => {
                    waiting.push_front(job);
                    break;
                }
            }
        }
        if let Some(mut current) = running.pop_front() {
            if current.job.events.is_closed() {
                engine.release(current.slot);
                continue;
            }
            match engine.advance(&mut current) {
                Progress::More => running.push_back(current),
                Progress::Done(result) => {
                    engine.release(current.slot);
                    let _ = current.job.events.send(Event::Done(result));
                }
            }
        }
    }
    engine.save_states();
}

struct Worker<'m> {
    backend: &'m LlamaBackend,
    model: &'m LlamaModel,
    settings: &'m Settings,
    slots: Vec<Slot<'m>>,
    clock: u64,
    /// Caches copied out of slots that a request had to cut short.
    parking: Parking<SeqState>,
    /// The saved caches already looked at: a file is read at most once per engine.
    consulted: HashSet<PathBuf>,
    /// How long a prefill turn is.
    pace: Pace,
}

impl<'m> Worker<'m> {
    fn admit(&mut self, job: Job) -> Admission {
        let (text, canonical) = match self.tokenize(&job.prompt) {
            Ok(tokenized) => tokenized,
            Err(err) => return refuse(job, err),
        };
        let sampler = match Sampler::new(self.model, &job) {
            Ok(sampler) => sampler,
            Err(err) => return refuse(job, err),
        };
        let (slot, prompt) = match self.choose_slot(&text, &canonical, job.state_file.as_ref()) {
            Ok(Some(chosen)) => chosen,
            Ok(None) => return Admission::Wait(job),
            Err(err) => return refuse(job, err),
        };
        if prompt.len() + 1 > self.settings.window as usize {
            let window = self.settings.window;
            return refuse(
                job,
                EngineError::PromptTooLong {
                    tokens: prompt.len(),
                    window,
                },
            );
        }
        let prompt =
            self.consult_state_file(slot, job.state_file.as_ref(), &text, &canonical, prompt);
        let (prompt, mut reuse) = match self.swap_in_parked(slot, &text, &canonical, prompt) {
            Ok(swapped) => swapped,
            Err(err) => return refuse(job, err),
        };
        let chosen = &mut self.slots[slot];
        // At least the last prompt token is evaluated: its logits start the reply.
        if reuse == prompt.len() {
            reuse -= 1;
        }
        if let Err(err) = forget_from(chosen, reuse) {
            return refuse(job, err);
        }
        self.clock += 1;
        chosen.busy = true;
        chosen.last_used = self.clock;
        if job.state_file.is_some() {
            chosen.state_file.clone_from(&job.state_file);
        }
        Admission::Started(Box::new(Running {
            slot,
            job,
            prompt,
            next: reuse,
            cached: reuse,
            sampler,
            text: Vec::new(),
            sent: 0,
            generated: 0,
            prompt_ms: 0.0,
            predicted_ms: 0.0,
        }))
    }

    /// The prompt as the model reads it (BOS spelled out when the tokenizer adds it) and
    /// its tokens.
    fn tokenize(&self, prompt: &str) -> Result<(Vec<u8>, Vec<LlamaToken>), EngineError> {
        let vocab = self.model.vocab();
        let bos = vocab.token_to_piece(vocab.bos(), true, None);
        // A template that spells the BOS token itself gets no second one.
        let add_bos = vocab.should_add_bos() && !prompt.as_bytes().starts_with(&bos);
        let tokens = vocab.tokenize(prompt.as_bytes(), add_bos, true);
        if tokens.is_empty() {
            return Err(EngineError::Request("the prompt is empty".into()));
        }
        let mut text = if add_bos { bos } else { Vec::new() };
        text.extend_from_slice(prompt.as_bytes());
        Ok((text, tokens))
    }

    fn release(&mut self, slot: usize) {
        if let Some(slot) = self.slots.get_mut(slot) {
            slot.busy = false;
        }
    }

    /// One unit of work for `run`.
    fn advance(&mut self, run: &mut Running) -> Progress {
        let started = Instant::now();
        let result = if run.next < run.prompt.len() {
            let result = self.prefill(run);
            run.prompt_ms += started.elapsed().as_secs_f64() * 1000.0;
            result
        } else {
            let result = self.generate(run);
            run.predicted_ms += started.elapsed().as_secs_f64() * 1000.0;
            result
        };
        match result {
            Ok(None) => Progress::More,
            Ok(Some(ending)) => Progress::Done(Ok(finished(run, ending))),
            Err(err) => {
                // The cache may hold part of a batch: start that slot afresh next time.
                let slot = &mut self.slots[run.slot];
                slot.tokens.clear();
                slot.ctx.clear_kv_cache();
                Progress::Done(Err(err))
            }
        }
    }

    fn prefill(&mut self, run: &mut Running) -> Result<Option<Ending>, EngineError> {
        let started = Instant::now();
        let unit = self.pace.unit(self.settings.batch as usize);
        let slot = &mut self.slots[run.slot];
        let end = (run.next + unit).min(run.prompt.len());
        let chunk = &run.prompt[run.next..end];
        let mut batch = LlamaBatch::new(chunk.len(), 1);
        for (offset, &token) in chunk.iter().enumerate() {
            let at = run.next + offset;
            let last = at + 1 == run.prompt.len();
            batch
                .add(token, position(at)?, &[0], last)
                .map_err(|err| EngineError::Llama(err.to_string()))?;
        }
        slot.ctx
            .decode(&mut batch)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        slot.tokens.extend_from_slice(chunk);
        self.pace
            .record(chunk.len(), started.elapsed().as_secs_f64() * 1000.0);
        self.settings
            .counters
            .prefilled
            .fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
        run.next = end;
        let _ = run.job.events.send(Event::Progress(PromptProgress {
            total: run.prompt.len() as u64,
            cached: run.cached as u64,
            processed: end as u64,
        }));
        Ok(None)
    }

    fn generate(&mut self, run: &mut Running) -> Result<Option<Ending>, EngineError> {
        let vocab = self.model.vocab();
        let slot = &mut self.slots[run.slot];
        let token = run.sampler.sample(&slot.ctx);
        if vocab.is_eog(token) {
            return Ok(Some(Ending::Stop));
        }
        run.text
            .extend_from_slice(&vocab.token_to_piece(token, true, None));
        run.generated += 1;
        self.settings
            .counters
            .generated
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        send_text(run);
        let full = slot.tokens.len() + 1 >= self.settings.window as usize;
        if run.generated as u32 >= run.job.max_tokens || full {
            return Ok(Some(Ending::Length));
        }
        let mut batch = LlamaBatch::new(1, 1);
        batch
            .add(token, position(slot.tokens.len())?, &[0], true)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        slot.ctx
            .decode(&mut batch)
            .map_err(|err| EngineError::Llama(err.to_string()))?;
        slot.tokens.push(token);
        Ok(None)
    }

    /// Saves each conversation's cache where it asked, so a resumed run reads no prompt
    /// twice. A failure costs only that: the next run reads the prompt again.
    fn save_states(&self) {
        for slot in &self.slots {
            if let Some(file) = &slot.state_file {
                if slot.tokens.is_empty() {
                    continue;
                }
                let temporary = file.with_extension("saving");
                if slot.ctx.state_save_file(&temporary, &slot.tokens).is_ok() {
                    let _ = std::fs::rename(&temporary, file);
                } else {
                    let _ = std::fs::remove_file(&temporary);
                }
            }
        }
    }
}

fn refuse(job: Job, err: EngineError) -> Admission {
    let _ = job.events.send(Event::Done(Err(err)));
    Admission::Refused
}

fn finished(run: &Running, ending: Ending) -> Finished {
    Finished {
        text: String::from_utf8_lossy(&run.text).into_owned(),
        ending,
        prompt_tokens: run.prompt.len(),
        cached_tokens: run.cached,
        generated_tokens: run.generated,
        prompt_ms: run.prompt_ms,
        predicted_ms: run.predicted_ms,
    }
}

/// Sends the complete UTF-8 characters generated since the last send.
fn send_text(run: &mut Running) {
    let pending = &run.text[run.sent..];
    let complete = match std::str::from_utf8(pending) {
        Ok(text) => text.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        // Bytes that will never be UTF-8: passed on as replacement characters.
        Err(_) => pending.len(),
    };
    if complete > 0 {
        let text = String::from_utf8_lossy(&pending[..complete]).into_owned();
        run.sent += complete;
        let _ = run.job.events.send(Event::Text(text));
    }
}

fn position(at: usize) -> Result<i32, EngineError> {
    i32::try_from(at).map_err(|_| EngineError::Llama(format!("position {at} is out of range")))
}
