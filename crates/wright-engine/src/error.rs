//! What can go wrong in the embedded engine, each said so a person knows what to change.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot read the model file {}: {reason}", .path.display())]
    ModelFile { path: PathBuf, reason: String },

    #[error("llama.cpp could not load {} (is it a GGUF model file this build supports?)", .path.display())]
    Load { path: PathBuf },

    #[error("the model's chat template cannot be used: {0}")]
    Template(String),

    #[error("the model file has no chat template (tokenizer.chat_template), and wright cannot guess how to prompt it")]
    NoTemplate,

    #[error("the tool grammar cannot be built: {0}")]
    Grammar(String),

    #[error("the request cannot be read: {0}")]
    Request(String),

    #[error("the prompt has {tokens} tokens and the window holds {window}: lower what is sent or raise the context window")]
    PromptTooLong { tokens: usize, window: u32 },

    #[error("a window of {window} tokens needs {} of memory for its cache and {} is free{}: lower the context window", gib(*.needed), gib(*.free), if *.others > 0 { format!(" beside {} other conversation(s)", .others) } else { String::new() })]
    OutOfMemory {
        window: u32,
        needed: u64,
        free: u64,
        others: usize,
    },

    #[error("llama.cpp failed: {0}")]
    Llama(String),

    #[error("the engine stopped")]
    Stopped,
}

/// Bytes as GiB with one decimal, the way people size memory.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}
