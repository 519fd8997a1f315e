//! The agent: a `Conversation` drives the loop — render the history, ask the model, run
//! each tool call, log everything — and knows models, tools and the log only through
//! `wright-llm`'s client, `wright-tools`' `Tool` trait and `wright-protocol`'s events.
//!
//! Guarantees: every event is appended to the log before it takes effect (an action
//! before its tool runs); the history sent to the model is a pure function of the log and
//! only ever grows, so request N+1 starts with the exact bytes of request N.

mod agent;
mod condense;
pub mod confirm;
mod history;
pub mod hooks;
pub mod injection;
mod paths;
mod prompt;
mod reply;
mod resume;
mod review;
mod run_lock;
pub mod second_look;
pub mod skills;
mod store;
pub mod strategy;
mod taught;

pub use agent::switch_reason;
pub use agent::Alternate;
pub use agent::Aside;
pub use agent::AsideSender;
pub use agent::Conversation;
pub use agent::Limits;
pub use agent::Observer;
pub use agent::Opening;
pub use agent::Outcome;
pub use agent::Permitted;
pub use agent::Served;
pub use agent::StepGuard;
pub use agent::StepSnapshot;
pub use agent::Totals;
pub use agent::ASIDE;
pub use agent::DEFAULT_CONDENSE_AT;
pub use condense::SUMMARY_PROMPT;
pub use history::render_history;
pub use paths::agent_homes_dir;
pub use paths::conversations_dir;
pub use paths::mcp_packages_dir;
pub use paths::new_conversation_id;
pub use paths::repositories_dir;
pub use paths::workspaces_dir;
pub use prompt::chat_system_prompt;
pub use prompt::system_prompt;
pub use prompt::text_tools_section;
pub use prompt::text_tools_section_as;
pub use prompt::CallFormat;
pub use resume::ResumeNotes;
pub use review::analyze as review_changes;
pub use review::request_justification;
pub use review::FileChange;
pub use review::Inspector;
pub use run_lock::holder as lock_holder;
pub use run_lock::LockError;
pub use run_lock::RunLock;
pub use store::EventLog;
pub use store::EventSink;
pub use store::SinkError;
pub use store::StoreError;
