//! Which profiles a session's conversations use: the one in use, how it was chosen, the
//! profiles to go on with when it cannot serve (each already allowed by the front end's
//! egress policy), and those whose server did not answer when the session was prepared.
//! The front end decides all of it; a session hands it to every conversation it makes or
//! reopens, so no front end (a terminal, the server, an editor) can forget the chain.
//! A reopened conversation that goes on with another model than the one it was on (the
//! user named it) carries that too: logged as a switch before its next step, so no
//! conversation ever changes model without a `model_switch` in its log.

use wright_core::Alternate;
use wright_core::Conversation;
use wright_core::StoreError;
use wright_protocol::ModelAt;
use wright_protocol::Route;
use wright_protocol::SwitchReason;

/// A session's profiles, as its front end resolved them.
#[derive(Clone, Default)]
pub struct Profiles {
    /// The profile in use, when the model came from one.
    pub current: Option<String>,
    /// How the first profile was chosen, when routing rules chose it: logged once, when a
    /// new conversation starts.
    pub route: Option<Route>,
    /// The profiles to go on with, in order.
    pub alternates: Vec<Alternate>,
    /// The profiles tried before the one in use, in order, whose server did not answer.
    pub unanswered: Vec<Unanswered>,
    /// A reopened conversation's model before the one the user named for it now.
    pub chosen: Option<Chosen>,
}

/// The model a reopened conversation was on, left for one the user named.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub from: ModelAt,
    /// What was named, in words.
    pub detail: String,
}

/// A profile whose server did not answer when the session was prepared.
#[derive(Debug, Clone)]
pub struct Unanswered {
    pub at: ModelAt,
    pub reason: SwitchReason,
    /// The server's error, in words.
    pub detail: String,
}

impl Profiles {
    /// Gives `conversation` the chain and logs how it came to its model: the route, then a
    /// switch from each profile that did not answer to the next one tried (the last to the
    /// model in use), before the conversation's next step — the same events a switch in
    /// the loop logs, so the report, `wright show` and a resume read them alike.
    pub fn attach(&self, conversation: &mut Conversation) -> Result<(), StoreError> {
        conversation.set_fallback(self.current.clone(), self.alternates.clone());
        if let Some(route) = &self.route {
            conversation.log_route(route.clone())?;
        }
        let in_use = conversation.model_at();
        // The model left by the user's choice first, then each profile that did not answer.
        let left: Vec<(ModelAt, SwitchReason, String)> = self
            .chosen
            .iter()
            .map(|chosen| {
                (
                    chosen.from.clone(),
                    SwitchReason::Chosen,
                    chosen.detail.clone(),
                )
            })
            .chain(
                self.unanswered
                    .iter()
                    .map(|gone| (gone.at.clone(), gone.reason, gone.detail.clone())),
            )
            .collect();
        for (at, (from, reason, detail)) in left.iter().enumerate() {
            let to = match left.get(at + 1) {
                Some((next, ..)) => next.clone(),
                None => in_use.clone(),
            };
            conversation.log_switch_before_step(from.clone(), to, *reason, detail.clone())?;
        }
        Ok(())
    }

    /// Gives `conversation`, started later on the model a sibling conversation is on now
    /// (a chat's `/new` and `/resume`: `on`, that one's profile), what is left of the
    /// chain after that profile: the chain the first conversation would go on with. No
    /// event is logged; a profile not in the chain (chosen by hand) keeps no fallback.
    pub fn go_on(&self, on: Option<&str>, conversation: &mut Conversation) {
        let rest = if on == self.current.as_deref() {
            Some(self.alternates.as_slice())
        } else {
            self.alternates
                .iter()
                .position(|alternate| Some(alternate.profile.as_str()) == on)
                .and_then(|at| self.alternates.get(at + 1..))
        };
        let next = rest.map(<[_]>::to_vec).unwrap_or_default();
        conversation.set_fallback(on.map(str::to_string), next);
    }
}
