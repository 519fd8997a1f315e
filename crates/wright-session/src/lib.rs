//! wright's session API, the one library under every front end (`wright run`, `wright
//! chat`, `wright resume`, and a server): "start a conversation on this repository with
//! these settings, drive it, finish it".
//!
//! ```text
//! let start = Session::locate(workspace, &front)?;          // where, earlier runs settled
//! // the front end resolves its settings from start.config_source(), connects a Client
//! let session = Session::prepare(start, Request { .. }, &front).await?;
//! let mut conversation = session.start_conversation(session.workspace_map())?;
//! let outcome = conversation.proceed(Some(task), limits(&session.settings), &cancel, &mut observer).await?;
//! let finished = session.finish(conversation, Ending { .. }, &mut observer).await?;
//! ```
//!
//! It sits between wright-core (the loop, which knows the sandbox, tools and models only
//! by traits) and the front ends, because preparing a session takes the concrete
//! sandbox, the hardened git runner and the configuration. It never prints nor reads the
//! terminal: what it has to say or ask goes through `Front`; the remedies and flags the
//! user is told about are the front end's words.

pub mod agent_session;
mod builder;
mod checkout;
mod clone_step;
pub mod connect;
pub mod constrain_mode;
pub mod database;
pub mod embedded;
mod end;
pub mod error;
pub mod external;
mod first_look;
pub mod fork;
mod front;
pub mod git_store;
pub mod handed_over;
pub mod hooks;
pub mod inspect;
mod launcher;
pub mod mcp;
mod mcp_caches;
mod mcp_config;
mod mcp_packages;
pub mod mcp_program;
mod mcp_registry;
mod probe_cache;
pub mod profiles;
pub mod removal;
mod reopen;
pub mod repo_config;
mod running;
pub mod sandbox_setup;
pub mod screenshots;
pub mod second_look;
pub mod secrets;
mod session;
pub mod settings;
pub mod stored;
pub mod teach;
pub mod tool_mode;
mod tools;
pub mod web_work;
pub mod working_copy;
pub mod workspace_file;

pub use builder::Builder;
pub use builder::Quiet;
pub use builder::Ran;
pub use end::limits;
pub use end::Ending;
pub use end::Finished;
pub use error::SessionError;
pub use front::Front;
pub use front::Unattended;
pub use hooks::RepoHooksChoice;
pub use hooks::SessionHooks;
pub use launcher::launch_if_asked;
pub use launcher::Launcher;
pub use launcher::LAUNCHER_NAME;
pub use profiles::Profiles;
pub use reopen::Existing;
pub use reopen::Takes;
pub use running::external_refusal;
pub use running::AsideReply;
pub use running::Asides;
pub use running::Confirmer;
pub use running::Observer;
pub use running::Reopened;
pub use running::RunEnd;
pub use running::Running;
pub use secrets::Grants;
pub use session::choose_tools;
pub use session::configure;
pub use session::logged_tools;
pub use session::user_skills_dir;
pub use session::Place;
pub use session::Replies;
pub use session::Request;
pub use session::SandboxChoice;
pub use session::Session;
pub use teach::Teaching;
pub use tools::Readiness;
pub use tools::Tools;
pub use working_copy::StartPoint;
pub use working_copy::UncommittedChoice;
pub use working_copy::WorkingCopy;
