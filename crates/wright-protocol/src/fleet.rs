//! Events of a conversation that uses more than one model (log format 6): the switch to
//! a fallback profile (from which model, to which, why, at which step), how the first
//! profile was chosen, and a side question answered apart from the main history. None of
//! them is ever part of what the model is sent; `by_model` says what each model did and
//! what it cost, from the log alone.

use crate::Destination;
use crate::Event;
use crate::EventBody;
use serde::Deserialize;
use serde::Serialize;

/// A model on a server, and the profile it came from when it came from one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelAt {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub model: String,
    pub base_url: String,
    pub destination: Destination,
}

/// Why the conversation moved to the next profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchReason {
    /// The server could not be reached, after the client's retries.
    Unreachable,
    /// The server kept answering 429 or 5xx (or went silent), after the retries.
    Overloaded,
    /// The server refused the request's size (its context is exceeded).
    TooLarge,
    /// The stuck detector fired again after the model was told it goes in circles.
    Stuck,
    /// The user named another model or server when the conversation went on (`wright
    /// resume` or `wright fork` with `--model`/`--base-url`, a server request's settings).
    Chosen,
}

impl SwitchReason {
    pub fn describe(self) -> &'static str {
        match self {
            SwitchReason::Unreachable => "its server could not be reached",
            SwitchReason::Overloaded => "its server stayed overloaded",
            SwitchReason::TooLarge => "its server refused the request's size",
            SwitchReason::Stuck => "it was stuck",
            SwitchReason::Chosen => "another was named when the conversation went on",
        }
    }
}

/// The conversation went on with another model from step `step` on (that step's request
/// is the first the new model gets, with the same history byte for byte).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSwitch {
    pub step: u32,
    pub from: ModelAt,
    pub to: ModelAt,
    pub reason: SwitchReason,
    /// What happened, in words (the server's error, the loop's pattern).
    pub detail: String,
}

/// Why a conversation started on its profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteReason {
    /// Named by hand (`--profile`, `WRIGHT_PROFILE`).
    ByHand,
    /// The rule for this command (`route.run`, `route.chat`).
    Command,
    /// The repository is large (`route.large_repo_files`).
    LargeRepository,
    /// The configuration's `profile`, no rule applying.
    Default,
}

/// How the conversation's first profile was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub profile: String,
    pub reason: RouteReason,
    /// The rule in words (`route.large_repo_files = 2000: the repository has 3512 files`).
    pub why: String,
}

/// A question asked beside the task (`/ask`), answered from the conversation's context in
/// a request of its own: neither the question nor the answer enters the main history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideQuestion {
    pub question: String,
    pub answer: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    pub destination: Destination,
}

/// What one model did in a conversation: its steps and tokens, and its cost when known.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelShare {
    pub profile: Option<String>,
    pub model: String,
    pub base_url: String,
    pub steps: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost: Option<f64>,
}

/// The model the conversation is on after `events`: the last switch's, else its start's
/// (`None` without a start). What its log says: a server read here is never connected to
/// on the log's word.
pub fn model_in_force(events: &[Event]) -> Option<ModelAt> {
    let mut model = None;
    for event in events {
        match &event.body {
            EventBody::Start(start) => {
                model = Some(ModelAt {
                    profile: None,
                    model: start.model.clone(),
                    base_url: start.base_url.clone(),
                    destination: start.destination.unwrap_or(Destination::Remote),
                })
            }
            EventBody::ModelSwitch(switch) => model = Some(switch.to.clone()),
            _ => {}
        }
    }
    model
}

/// Each model's share of the conversation, in the order they worked: the model of the
/// start (or of the route), then each switch's; a profile whose server did not answer at
/// the start has a share of no step. Requests are counted from `usage` events,
/// steps from the distinct steps that had one; side questions count for the model in force.
pub fn by_model(events: &[Event]) -> Vec<ModelShare> {
    let mut shares: Vec<ModelShare> = Vec::new();
    let mut counted_step: Option<u32> = None;
    for event in events {
        match &event.body {
            EventBody::Start(start) => shares.push(ModelShare {
                profile: None,
                model: start.model.clone(),
                base_url: start.base_url.clone(),
                steps: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                cost: None,
            }),
            EventBody::Route(route) => {
                if let Some(first) = shares.first_mut() {
                    first.profile.get_or_insert_with(|| route.profile.clone());
                }
            }
            EventBody::ModelSwitch(switch) => {
                match shares.last_mut() {
                    // A switch before the model in force did anything (its server did
                    // not answer when the run started, whose start event names the model
                    // it went on with): the share is the profile that was tried.
                    Some(current) if current.steps == 0 && current.prompt_tokens == 0 => {
                        current.profile = switch.from.profile.clone();
                        current.model = switch.from.model.clone();
                        current.base_url = switch.from.base_url.clone();
                    }
                    Some(current) if current.profile.is_none() => {
                        current.profile = switch.from.profile.clone();
                    }
                    Some(_) | None => {}
                }
                counted_step = None;
                shares.push(ModelShare {
                    profile: switch.to.profile.clone(),
                    model: switch.to.model.clone(),
                    base_url: switch.to.base_url.clone(),
                    steps: 0,
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    cost: None,
                });
            }
            EventBody::Usage(usage) => {
                if let Some(current) = shares.last_mut() {
                    if counted_step != Some(usage.step) {
                        current.steps += 1;
                        counted_step = Some(usage.step);
                    }
                    current.prompt_tokens += usage.prompt_tokens;
                    current.completion_tokens += usage.completion_tokens;
                    if let Some(cost) = usage.cost {
                        *current.cost.get_or_insert(0.0) += cost;
                    }
                }
            }
            EventBody::SideQuestion(side) => {
                if let Some(current) = shares.last_mut() {
                    current.prompt_tokens += side.prompt_tokens;
                    current.completion_tokens += side.completion_tokens;
                }
            }
            _ => {}
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn events(lines: &[&str]) -> Vec<Event> {
        lines
            .iter()
            .enumerate()
            .map(|(id, line)| {
                serde_json::from_str(&format!(
                    r#"{{"id":{id},"ts":"2026-12-02T00:00:00.000Z","source":"environment",{line}}}"#
                ))
                .unwrap()
            })
            .collect()
    }

    fn share(profile: &str, model: &str, url: &str, steps: u32, prompt: u64) -> ModelShare {
        ModelShare {
            profile: Some(profile.into()),
            model: model.into(),
            base_url: url.into(),
            steps,
            prompt_tokens: prompt,
            completion_tokens: 0,
            cost: None,
        }
    }

    #[test]
    fn a_profile_passed_over_at_the_start_has_a_share_of_no_step() {
        // The start names the model the run started on; the switch before any step
        // says which profile did not answer.
        let log = events(&[
            r#""kind":"start","version":6,"conversation":"c","workspace":"/w","model":"big","base_url":"http://h/v1","system_prompt":"","tools":[]"#,
            r#""kind":"route","profile":"local","reason":"default","why":"the profile key""#,
            r#""kind":"model_switch","step":1,"from":{"profile":"local","model":"small","base_url":"http://l/v1","destination":"loopback"},"to":{"profile":"hosted","model":"big","base_url":"http://h/v1","destination":"loopback"},"reason":"unreachable","detail":"connection refused""#,
            r#""kind":"usage","step":1,"prompt_tokens":100,"completion_tokens":0"#,
            r#""kind":"usage","step":2,"prompt_tokens":120,"completion_tokens":0"#,
        ]);
        assert_eq!(
            by_model(&log),
            vec![
                share("local", "small", "http://l/v1", 0, 0),
                share("hosted", "big", "http://h/v1", 2, 220),
            ]
        );
    }
}
