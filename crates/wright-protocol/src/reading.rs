//! A reading of a failure (version 6 on): the question wright asked the model apart —
//! no tools, no history, only the code under test and the first failure — and its answer
//! in words. Logged as a `reading` event after the observation it reads; the history
//! shows the answer to the model right after that observation, so a resumed run sends
//! the same bytes.

use serde::Deserialize;
use serde::Serialize;

/// One question about a failure, and what the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// The call whose failing output was read.
    pub call_id: String,
    /// The file of the code under test the question is about.
    pub path: String,
    pub question: String,
    /// The model's words (empty when it failed: see `failed`).
    pub answer: String,
    /// Why there is no answer: the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    pub destination: crate::Destination,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use crate::EventBody;
    use crate::Source;

    #[test]
    fn a_reading_is_logged_and_read_back_whole() {
        let reading = Reading {
            call_id: "first-look".into(),
            path: "shop.py".into(),
            question: "Which line of shop.py causes this failure?".into(),
            answer: "`return sum(prices[1:])`: it skips the first price.".into(),
            failed: None,
            prompt_tokens: 120,
            completion_tokens: 14,
            cached_tokens: None,
            destination: crate::Destination::Loopback,
        };
        let event = Event::new(5, Source::Environment, EventBody::Reading(reading.clone()));
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.contains("\"kind\":\"reading\""), "{line}");
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back.body, EventBody::Reading(reading));
    }
}
