//! wright's embedded inference engine: GGUF models run in this process on llama.cpp
//! (through `llama-cpp-2`, compiled from the source it vendors), behind wright-llm's
//! model-client seam (`wright_llm::in_process`), so the loop, the event log, budgets and
//! the condenser do not know whether a server or the engine answers.
//!
//! What it guarantees: each step evaluates only the tokens after the longest token prefix
//! its conversation's cache shares with the new prompt; every reply with tools is held by
//! a grammar to one valid call of one of them; the model's own Jinja chat template is
//! rendered as Hugging Face renders it; several conversations share one loaded model, each
//! with its own cache, interleaved fairly.

mod engine;
mod error;
pub mod grammar;
mod machine;
mod neutralize;
mod parking;
mod reply;
mod request;
pub mod template;
mod worker;

pub use engine::gpu_backends;
pub use engine::Conversation;
pub use engine::Engine;
pub use engine::EngineConfig;
pub use engine::EngineInfo;
pub use engine::DEFAULT_WINDOW;
pub use error::gib;
pub use error::EngineError;
pub use grammar::CallFormat;
pub use machine::available_memory;
pub use machine::physical_cores;
