//! A decision of wright's help policy during a run (version 11 on): the model showed that
//! it needs help — calls that could not be read, a loop — so wright turned pieces of its
//! help on from here (`[assist]` at `auto`, see `wright_config::assist`). Logged before the
//! help it turns on runs, so a resumed or forked conversation reads that it was decided
//! and decides nothing again; never sent to the model (what the model gets is the help
//! itself: the tests run, and checked again after each edit).

use serde::Deserialize;
use serde::Serialize;

/// Why the policy decided that a model needs help.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "need", rename_all = "snake_case")]
pub enum Need {
    /// Its name says it has 8B parameters or fewer.
    NameSaysSmall,
    /// The connection probe asked for a native tool call and got none.
    NoNativeCalls,
    /// This many of its calls in this run could not be read.
    UnreadableCalls { count: u32 },
    /// It was told that it goes in circles (`pattern`: what it repeats).
    Loop { pattern: String },
}

impl Need {
    /// In words, after "because".
    pub fn describe(&self) -> String {
        match self {
            Need::NameSaysSmall => "its name says 8B or less".to_string(),
            Need::NoNativeCalls => "the probe found no native tool calls".to_string(),
            Need::UnreadableCalls { count } => {
                format!(
                    "{} could not be read",
                    crate::count(u64::from(*count), "call")
                )
            }
            Need::Loop { .. } => "it went in circles".to_string(),
        }
    }
}

/// Pieces of help turned on during a run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistDecision {
    /// The step after which it was decided.
    pub step: u32,
    #[serde(flatten)]
    pub need: Need,
    /// The pieces turned on, by their key (`first_look`, `retest`).
    pub pieces: Vec<String>,
}

impl AssistDecision {
    /// One line for people.
    pub fn summary(&self) -> String {
        format!(
            "the model needs help ({}): wright turns on {}",
            self.need.describe(),
            self.pieces
                .iter()
                .map(|piece| piece.replace('_', " "))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use crate::EventBody;
    use crate::Source;

    #[test]
    fn a_decision_is_logged_and_read_back_whole() {
        let decision = AssistDecision {
            step: 3,
            need: Need::UnreadableCalls { count: 2 },
            pieces: vec!["first_look".into(), "retest".into()],
        };
        let event = Event::new(9, Source::Environment, EventBody::Assist(decision.clone()));
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.contains("\"kind\":\"assist\""), "{line}");
        assert!(line.contains("\"need\":\"unreadable_calls\""), "{line}");
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back.body, EventBody::Assist(decision.clone()));
        assert_eq!(
            decision.summary(),
            "the model needs help (2 calls could not be read): wright turns on first look, retest"
        );
    }
}
