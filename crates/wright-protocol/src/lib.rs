//! The vocabulary every other wright crate speaks: the typed events of a conversation and
//! the JSONL format they are stored in.
//!
//! A conversation is nothing but its events. Each is one JSON object on one line, appended
//! before it takes effect (an action before it runs, its observation after), so the log
//! can always be replayed into exactly the history the model saw. This crate only knows
//! serde: no I/O policy, no model, no tools.

mod assist;
mod candidate;
mod changes;
mod check;
mod event;
mod fleet;
mod log;
mod names;
mod network;
mod notice;
mod plan;
mod plural;
mod printable;
mod reading;
mod risk;
mod second_look;
mod stop;
mod teach;
mod untrusted;

pub use assist::AssistDecision;
pub use assist::Need;
pub use candidate::Candidate;
pub use candidate::CandidateOutcome;
pub use changes::Changes;
pub use changes::ChangesOutcome;
pub use check::Check;
pub use check::CheckMoment;
pub use event::AgentState;
pub use event::Condensation;
pub use event::Destination;
pub use event::Event;
pub use event::EventBody;
pub use event::Price;
pub use event::Review;
pub use event::Source;
pub use event::Start;
pub use event::ToolCalling;
pub use event::Usage;
pub use event::LOG_FORMAT_VERSION;
pub use fleet::by_model;
pub use fleet::model_in_force;
pub use fleet::ModelAt;
pub use fleet::ModelShare;
pub use fleet::ModelSwitch;
pub use fleet::Route;
pub use fleet::RouteReason;
pub use fleet::SideQuestion;
pub use fleet::SwitchReason;
pub use log::parse_log;
pub use log::read_log;
pub use log::read_page;
pub use log::LogError;
pub use log::LogPage;
pub use log::ParsedLog;
pub use log::TornLine;
pub use names::edit_distance;
pub use network::NetConnection;
pub use network::NetRefusal;
pub use network::NetVerdict;
pub use network::NetVia;
pub use notice::Notice;
pub use notice::Question;
pub use plan::render_plan;
pub use plan::PlanTask;
pub use plan::TaskStatus;
pub use plural::count;
pub use plural::count_as;
pub use printable::escape_for_json_line;
pub use printable::printable;
pub use reading::Reading;
pub use risk::ConfirmMode;
pub use risk::Decision;
pub use risk::Flag;
pub use risk::Risk;
pub use second_look::SecondLook;
pub use second_look::Verdict;
pub use stop::StopReason;
pub use teach::HookEvent;
pub use teach::HookOrigin;
pub use teach::HookOutcome;
pub use teach::HookRun;
pub use teach::InstructionFile;
pub use teach::SkillCause;
pub use teach::SkillEntry;
pub use untrusted::wrap_untrusted;
pub use untrusted::Provenance;
pub use untrusted::UNTRUSTED_REMINDER;
