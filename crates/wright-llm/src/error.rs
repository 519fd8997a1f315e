//! What can go wrong talking to a model server, each said so a person knows what
//! happened. What to do about it depends on the front end (a flag on the command line, a
//! command in a chat), so it travels as a typed `Remedy` for the front end to word: this
//! library never names a flag or a command of wright's.

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{}", unreachable_text(.url, .reason))]
    Unreachable { url: String, reason: Unreachable },

    #[error("model '{model}' not found on {url}; available: {}.{}", list_or_none(.available), closest_hint(.closest))]
    ModelNotFound {
        model: String,
        url: String,
        available: Vec<String>,
        closest: Option<String>,
    },

    #[error("the server at {url} serves no model. Load one first (for example `ollama pull qwen2.5-coder:7b`)")]
    NoModels { url: String },

    #[error("the server at {url} serves several models ({}), and none was chosen", .available.join(", "))]
    ModelRequired { url: String, available: Vec<String> },

    #[error("the server at {url} refused the request as unauthorized (HTTP {status}: {message})")]
    Unauthorized {
        url: String,
        status: u16,
        message: String,
    },

    #[error("the server at {url} answered HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },

    #[error("the reply stream from {url} was cut before it finished{}", if *.partial_tool_call { " (in the middle of a tool call, which was not run)" } else { "" })]
    StreamCut {
        url: String,
        partial_tool_call: bool,
    },

    #[error("the server at {url} sent nothing for {secs} s; it may be overloaded or stuck")]
    IdleTimeout { url: String, secs: u64 },

    #[error(
        "the server at {url} sent an empty reply (no message, no tool call, no finish reason)"
    )]
    EmptyReply { url: String },

    #[error("the server at {url} sent a reply wright cannot read: {message}")]
    Malformed { url: String, message: String },

    #[error("invalid model server URL '{url}': {reason}")]
    BadUrl { url: String, reason: String },

    #[error("no model server found: nothing answered on {tried}. Start one (`ollama serve`, LM Studio's server, or `llama-server -m MODEL.gguf --port 8080`)")]
    NoServerFound { tried: String },

    /// Nothing was configured, no local server answered, and wright's model store has
    /// nothing to run in the embedded engine.
    #[error("no model server found: nothing answered on {tried}, and wright's model store ({store}) holds no model to run itself")]
    NothingToRun { tried: String, store: String },

    /// Nothing was configured, no local server answered, and the store holds several
    /// models, none of them the default: which one is the user's choice.
    #[error("no model server found: nothing answered on {tried}, and wright's model store holds several models to run itself ({}), none of them the default", .models.join(", "))]
    SeveralStoredModels { tried: String, models: Vec<String> },

    /// The embedded engine could not answer (the model, its window, its memory).
    #[error("the embedded engine ({model}) failed: {message}")]
    Engine { model: String, message: String },

    /// A transient failure that did not pass: the last one, and how long all the tries
    /// took (so "sent nothing for 3 s" is not read as the whole wait).
    #[error("gave up after {attempts} tries in {:.1} s: {last}", .elapsed.as_secs_f64())]
    GaveUp {
        last: Box<LlmError>,
        attempts: u32,
        elapsed: std::time::Duration,
    },
}

/// Why a server could not be talked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// Nothing listens there.
    Refused,
    /// The connection was not made in time.
    ConnectTimeout,
    /// The connection could not be made for another reason (no route, DNS, TLS).
    Connect(String),
    /// The server took the connection, then closed it without an answer: it is running
    /// (or was), and crashed, restarted or dropped the request.
    Closed,
    /// The request failed on the way for another reason.
    Other(String),
}

/// What the user can do about an error; the front end words it (a flag, a chat command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// Start the server, or name one that runs.
    NameServer,
    /// Choose one of the server's models.
    ChooseModel,
    /// Give the server's API key.
    GiveApiKey,
    /// Allow the server a longer silence (a CPU prefilling a long prompt is slow).
    AllowLongerSilence,
    /// Get a model for the embedded engine (download or import one), or start a server.
    GetModel,
    /// Choose which stored model the embedded engine runs.
    ChooseModelFile,
}

impl LlmError {
    /// Whether trying the same request again may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. }
            | LlmError::StreamCut { .. }
            | LlmError::IdleTimeout { .. }
            | LlmError::EmptyReply { .. } => true,
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::ModelNotFound { .. }
            | LlmError::NoModels { .. }
            | LlmError::ModelRequired { .. }
            | LlmError::Unauthorized { .. }
            | LlmError::Malformed { .. }
            | LlmError::BadUrl { .. }
            | LlmError::NoServerFound { .. }
            | LlmError::NothingToRun { .. }
            | LlmError::SeveralStoredModels { .. }
            | LlmError::Engine { .. }
            | LlmError::GaveUp { .. } => false,
        }
    }

    /// What the user can do, when there is something.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            LlmError::Unreachable { reason, .. } => match reason {
                Unreachable::Refused | Unreachable::ConnectTimeout | Unreachable::Connect(_) => {
                    Some(Remedy::NameServer)
                }
                Unreachable::Closed | Unreachable::Other(_) => None,
            },
            LlmError::NoServerFound { .. } => Some(Remedy::NameServer),
            LlmError::NothingToRun { .. } => Some(Remedy::GetModel),
            LlmError::SeveralStoredModels { .. } => Some(Remedy::ChooseModelFile),
            LlmError::ModelNotFound { .. } | LlmError::ModelRequired { .. } => {
                Some(Remedy::ChooseModel)
            }
            LlmError::Unauthorized { .. } => Some(Remedy::GiveApiKey),
            LlmError::IdleTimeout { .. } => Some(Remedy::AllowLongerSilence),
            LlmError::GaveUp { last, .. } => last.remedy(),
            LlmError::NoModels { .. }
            | LlmError::Http { .. }
            | LlmError::StreamCut { .. }
            | LlmError::EmptyReply { .. }
            | LlmError::Malformed { .. }
            | LlmError::Engine { .. }
            | LlmError::BadUrl { .. } => None,
        }
    }

    /// The error itself, under the tries that preceded it.
    pub fn last(&self) -> &LlmError {
        match self {
            LlmError::GaveUp { last, .. } => last.last(),
            other => other,
        }
    }

    /// The server's message when it refused the request as such (HTTP 400 or 422, as
    /// servers answer a field or a combination they do not take), or with a 500 that
    /// names a grammar or schema (older llama.cpp builds threw those as server errors):
    /// what a constrained request is sent again without its constraint for.
    pub fn refusal(&self) -> Option<&str> {
        match self.last() {
            LlmError::Http {
                status: 400 | 422,
                message,
                ..
            } => Some(message),
            LlmError::Http {
                status: 500,
                message,
                ..
            } if ["grammar", "schema", "tool_choice", "response_format"]
                .iter()
                .any(|word| message.to_lowercase().contains(word)) =>
            {
                Some(message)
            }
            _ => None,
        }
    }
}

fn unreachable_text(url: &str, reason: &Unreachable) -> String {
    let start =
        "Start it (for example `ollama serve`, or llama.cpp's `llama-server -m MODEL.gguf`)";
    match reason {
        Unreachable::Refused => {
            format!("cannot reach the model server at {url} (connection refused): nothing listens there. {start}")
        }
        Unreachable::ConnectTimeout => format!(
            "cannot reach the model server at {url}: the connection was not made in time (a firewall, or a machine that is off?)"
        ),
        Unreachable::Connect(why) => {
            format!("cannot reach the model server at {url} ({why}). {start}")
        }
        Unreachable::Closed => format!(
            "the model server at {url} closed the connection without answering: it is running, or was, and crashed, restarted or dropped the request; its own log says why"
        ),
        Unreachable::Other(why) => {
            format!("the request to the model server at {url} failed: {why}")
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn closest_hint(closest: &Option<String>) -> String {
    match closest {
        Some(name) => format!(" Did you mean '{name}'?"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library says what happened; the fix with wright's flags or commands is the
    /// front end's to word, from `remedy`.
    #[test]
    fn messages_name_no_flag_of_wrights() {
        let url = || "http://127.0.0.1:9/v1".to_string();
        let errors = vec![
            LlmError::Unreachable {
                url: url(),
                reason: Unreachable::Refused,
            },
            LlmError::Unreachable {
                url: url(),
                reason: Unreachable::Closed,
            },
            LlmError::ModelNotFound {
                model: "a".into(),
                url: url(),
                available: vec!["b".into()],
                closest: None,
            },
            LlmError::ModelRequired {
                url: url(),
                available: vec!["a".into(), "b".into()],
            },
            LlmError::Unauthorized {
                url: url(),
                status: 401,
                message: "no".into(),
            },
            LlmError::IdleTimeout {
                url: url(),
                secs: 3,
            },
            LlmError::NoServerFound {
                tried: "11434".into(),
            },
        ];
        let wrights_flags = ["--base-url", "--model", "--api-key", "--idle-timeout"];
        for err in &errors {
            let text = err.to_string();
            assert!(!wrights_flags.iter().any(|f| text.contains(f)), "{text}");
        }
        let remedies: Vec<Option<Remedy>> = errors.iter().map(LlmError::remedy).collect();
        assert_eq!(
            remedies,
            vec![
                Some(Remedy::NameServer),
                None,
                Some(Remedy::ChooseModel),
                Some(Remedy::ChooseModel),
                Some(Remedy::GiveApiKey),
                Some(Remedy::AllowLongerSilence),
                Some(Remedy::NameServer),
            ]
        );
        let gave_up = LlmError::GaveUp {
            last: Box::new(LlmError::IdleTimeout {
                url: url(),
                secs: 3,
            }),
            attempts: 4,
            elapsed: std::time::Duration::from_millis(15_800),
        };
        assert_eq!(
            gave_up.to_string(),
            "gave up after 4 tries in 15.8 s: the server at http://127.0.0.1:9/v1 sent nothing for 3 s; it may be overloaded or stuck"
        );
        assert_eq!(gave_up.remedy(), Some(Remedy::AllowLongerSilence));
    }
}
