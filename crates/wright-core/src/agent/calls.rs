//! Running one tool call: logged before it runs, arguments checked and coerced, `finish`
//! guarded (the strategies, the check, the review), the observation logged after.

use super::types::run_kept;
use super::Conversation;
use super::Observer;
use super::Outcome;
use crate::reply::parse_arguments;
use crate::store::StoreError;
use crate::strategy::AtFinish;
use crate::strategy::Call;
use crate::strategy::Ran;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_llm::textcall::coerce_arguments;
use wright_llm::ToolCall;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_tools::ToolError;
use wright_tools::ToolOutput;

/// A call whose action is logged, on its way to its observation.
pub(super) struct Begun {
    call_id: String,
    name: String,
    pub(super) action_id: u64,
    may_change: bool,
    pub(super) tool: Option<Arc<dyn wright_tools::Tool>>,
    /// What runs, when something does: the tool and its checked arguments.
    pub(super) ready: Option<Value>,
    /// What the call came to without running (an unknown tool, bad arguments, a
    /// `finish` sent back, the user's rejection).
    pub(super) settled: Option<Result<ToolOutput, ToolError>>,
    /// How risky it is (logged with its action).
    pub(super) risk: wright_protocol::Risk,
    /// Said before its result: a call rerouted to another tool says what ran instead.
    pub(super) note: Option<String>,
    /// Why the run ends with this call, not finished (a `finish` while the check fails).
    pub(super) ends: Option<StopReason>,
    /// What it printed, for its observation if it does not finish.
    pub(super) printed: super::types::Printed,
}

/// A call whose action is logged, as `prepare_call` takes it.
pub(super) struct Logged {
    pub(super) name: String,
    /// Its arguments, or why they could not be read.
    pub(super) parsed: Result<Value, String>,
    pub(super) call_id: String,
    /// The id of its `action` event.
    pub(super) action_id: u64,
    pub(super) risk: wright_protocol::Risk,
}

impl Begun {
    /// The tool and arguments of a call that runs (not `finish`), for its `PostToolUse`.
    fn ran(&self) -> Option<(String, Value)> {
        let tool = self.tool.as_ref().filter(|tool| tool.name() != "finish")?;
        Some((tool.name().to_string(), self.ready.clone()?))
    }
}

/// Why a run ends after a call: the state, the reason, the summary.
type End = (AgentState, StopReason, Option<String>);

impl Conversation {
    /// Logs and runs one tool call; returns an outcome when the run must end.
    pub(super) async fn run_call(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        step: u32,
        call: &ToolCall,
    ) -> Result<Option<Outcome>, StoreError> {
        let mut begun = self.begin_call(observer, cancel, step, call).await?;
        if let Some(outcome) = self.confirm_call(observer, cancel, &mut begun).await? {
            return Ok(Some(outcome));
        }
        // The last look before it runs (what an undo may take back, see `Retest`).
        if let (Some(tool), Some(arguments)) = (&begun.tool, &begun.ready) {
            let tool = tool.name();
            self.before_run(&Call {
                call_id: &call.id,
                tool,
                arguments,
            });
        }
        let result = match (&begun.tool, &begun.ready) {
            (Some(tool), Some(arguments)) => {
                let masker = self.log.masker().cloned();
                let (result, printed) =
                    run_kept(tool.as_ref(), arguments, cancel, observer, masker).await;
                begun.printed = printed;
                result
            }
            _ => begun.settled.clone(),
        };
        let ran = begun.ran();
        let succeeded = matches!(&result, Some(Ok(output)) if !output.is_error);
        let end = self.end_call(observer, begun, result)?;
        if let (Some((name, arguments)), None) = (ran, &end) {
            self.post_tool_hooks(observer, &call.id, &name, &arguments)
                .await?;
            if succeeded {
                let ran = Call {
                    call_id: &call.id,
                    tool: &name,
                    arguments: &arguments,
                };
                self.after_call(observer, cancel, &ran).await?;
            }
        }
        match end {
            None => Ok(None),
            Some((state, reason, summary)) => self.end(observer, state, reason, summary).map(Some),
        }
    }

    /// Whether `call` only reads the workspace (see `wright_tools::runs_concurrently`) and
    /// names a tool of this conversation, so it may run beside others like it.
    /// A call the user is asked about runs alone.
    pub(super) fn runs_concurrently(&self, call: &ToolCall) -> bool {
        let Ok(arguments) = parse_arguments(&call.function.arguments) else {
            return false;
        };
        let Some(tool) = self.tools.get(&call.function.name) else {
            return false;
        };
        let risk = self.assess(&call.function.name, &arguments).risk;
        wright_tools::runs_concurrently(&call.function.name, &arguments)
            && !self.asks_about(tool.name(), risk)
    }

    /// How risky a call is, in this workspace, with the terminal's shell as earlier
    /// commands left it (an alias or a trap they set changes what a name runs).
    fn assess(&self, tool: &str, arguments: &Value) -> wright_tools::risk::Assessment {
        let shell = self
            .tools
            .get("terminal")
            .and_then(|terminal| terminal.shell_state())
            .unwrap_or_default();
        wright_tools::risk::assess_in(tool, arguments, &self.workspace_root(), &shell)
    }

    /// Logs and runs read-only calls of one reply at the same time: their actions in
    /// order, a `together` event naming them, then each observation in the order the
    /// calls were made (whatever order they finished in), so the history reads as if
    /// they had run one after the other.
    pub(super) async fn run_together(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        step: u32,
        calls: &[ToolCall],
    ) -> Result<Option<Outcome>, StoreError> {
        let mut begun = Vec::new();
        for call in calls {
            begun.push(self.begin_call(observer, cancel, step, call).await?);
        }
        // Those that run: a call already answered (bad arguments) did not run at all.
        let call_ids: Vec<String> = begun
            .iter()
            .filter(|call| call.ready.is_some())
            .map(|call| call.call_id.clone())
            .collect();
        if call_ids.len() > 1 {
            self.append(
                observer,
                Source::Environment,
                EventBody::Together { step, call_ids },
            )?;
        }
        let mut running = tokio::task::JoinSet::new();
        for (n, call) in begun.iter().enumerate() {
            if let (Some(tool), Some(arguments)) = (&call.tool, &call.ready) {
                let (tool, arguments) = (tool.clone(), arguments.clone());
                running.spawn(async move { (n, tool.run(&arguments).await) });
            }
        }
        let mut results: Vec<Option<Result<ToolOutput, ToolError>>> =
            begun.iter().map(|call| call.settled.clone()).collect();
        loop {
            tokio::select! {
                next = running.join_next() => match next {
                    None => break,
                    Some(Ok((n, result))) => results[n] = Some(result),
                    // A tool that panicked: what is missing is said below.
                    Some(Err(_)) => {}
                },
                _ = cancel.cancelled() => {
                    running.abort_all();
                    break;
                }
            }
        }
        let mut end = None;
        for (call, result) in begun.into_iter().zip(results) {
            let result = match result {
                None if !cancel.is_cancelled() => Some(Err(ToolError::Fatal(format!(
                    "{} stopped without a result",
                    call.name
                )))),
                other => other,
            };
            let (call_id, ran) = (call.call_id.clone(), call.ran());
            let ended = self.end_call(observer, call, result)?;
            if let (Some((name, arguments)), None) = (ran, &ended) {
                self.post_tool_hooks(observer, &call_id, &name, &arguments)
                    .await?;
            }
            end = end.or(ended);
        }
        match end {
            None => Ok(None),
            Some((state, reason, summary)) => self.end(observer, state, reason, summary).map(Some),
        }
    }

    /// Logs a call's action and decides what it comes to before it runs: the tool and
    /// its checked arguments, or the answer it gets without running.
    async fn begin_call(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        step: u32,
        call: &ToolCall,
    ) -> Result<Begun, StoreError> {
        let name = call.function.name.clone();
        let parsed = parse_arguments(&call.function.arguments);
        let logged_arguments = match &parsed {
            Ok(value) => value.clone(),
            Err(_) => Value::String(call.function.arguments.clone()),
        };
        let assessment = self.assess(&name, &logged_arguments);
        self.append(
            observer,
            Source::Agent,
            EventBody::Action {
                step,
                call_id: call.id.clone(),
                tool: name.clone(),
                arguments: logged_arguments.clone(),
                risk: Some(assessment.risk),
                risk_reason: Some(assessment.reason),
            },
        )?;
        let action_id = self.last_event_id();
        // A risky call after text that looks like instructions to the agent.
        if assessment.risk >= wright_protocol::Risk::Unknown {
            if let Some((source, excerpt)) = self.teaching.read_instructions.clone() {
                let flag = wright_protocol::Flag::PromptInjection { source, excerpt };
                self.append(
                    observer,
                    Source::Environment,
                    EventBody::Flagged {
                        call_id: call.id.clone(),
                        flag: flag.clone(),
                    },
                )?;
                self.teaching.flags.push(flag);
            }
        }
        let logged = Logged {
            name,
            parsed,
            call_id: call.id.clone(),
            action_id,
            risk: assessment.risk,
        };
        self.prepare_call(observer, cancel, logged).await
    }

    /// Decides what a logged call comes to before it runs: the tool and its checked
    /// arguments, or the answer it gets without running.
    pub(super) async fn prepare_call(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        logged: Logged,
    ) -> Result<Begun, StoreError> {
        let Logged {
            name,
            parsed,
            call_id,
            action_id,
            risk,
        } = logged;
        let logged_arguments = match &parsed {
            Ok(value) => value.clone(),
            Err(text) => Value::String(text.clone()),
        };
        let may_change = wright_tools::may_change_files(&name, &logged_arguments);
        // No tool runs while the last step's snapshot reads the tree.
        self.settle_snapshot().await;
        let tool = self.tools.get(&name).cloned();
        // A shell command that is only another tool's look at a file runs as that look, and
        // `finish` written as a command is the `finish` call: asked about, checked, hooked
        // and run as any call of that tool (see `crate::strategy::Rerouted`).
        let rerouted = match (&tool, &parsed) {
            (Some(tool), Ok(arguments)) => self.rerouted(&Call {
                call_id: &call_id,
                tool: tool.name(),
                arguments,
            }),
            _ => None,
        };
        let (tool, parsed, note) = match rerouted {
            Some(rerouted) => (
                Some(rerouted.tool),
                Ok(rerouted.arguments),
                Some(rerouted.note),
            ),
            None => (tool, parsed, None),
        };
        let is_finish = tool.as_ref().is_some_and(|t| t.name() == "finish");
        // What the strategies refuse before it runs (a `finish` before anything was done).
        let refused = match (&tool, &parsed) {
            (Some(tool), Ok(arguments)) => self.refused(&Call {
                call_id: &call_id,
                tool: tool.name(),
                arguments,
            }),
            _ => None,
        };
        let mut ends = None;
        let sent_back = if is_finish && refused.is_none() && parsed.is_ok() {
            // wright's own check of the work first, then the rest (see `strategies`).
            match self
                .strategies_at_finish(observer, cancel, &call_id)
                .await?
            {
                AtFinish::Continue => None,
                AtFinish::SendBack(said) => Some(said),
                AtFinish::End { said, stop } => {
                    ends = Some(stop);
                    Some(said)
                }
            }
        } else {
            None
        };
        let mut ready = None;
        let mut settled: Option<Result<ToolOutput, ToolError>> = match (tool.clone(), parsed) {
            (None, _) => Some(Err(ToolError::Model(self.unknown_tool(&name)))),
            (Some(_), Err(message)) => Some(Err(ToolError::Model(message))),
            (Some(_), Ok(_)) if sent_back.is_some() => {
                Some(Err(ToolError::Model(sent_back.clone().unwrap_or_default())))
            }
            (Some(_), Ok(_)) if refused.is_some() => {
                Some(Err(ToolError::Model(refused.clone().unwrap_or_default())))
            }
            (Some(tool), Ok(mut arguments)) => {
                let schema = tool.schema();
                let coerced = coerce_arguments(&mut arguments, &schema["function"]["parameters"])
                    .and_then(|()| {
                        let call = Call {
                            call_id: &call_id,
                            tool: tool.name(),
                            arguments: &arguments,
                        };
                        match self.arguments_refused(&call) {
                            Some(message) => Err(message),
                            None => Ok(()),
                        }
                    });
                match coerced {
                    Err(message) => Some(Err(ToolError::Model(message))),
                    Ok(()) => {
                        ready = Some(arguments);
                        None
                    }
                }
            }
        };
        // The hooks may block what is about to run (a `finish` is the Stop hooks').
        if let Some(arguments) = ready.clone().filter(|_| !is_finish) {
            let runs = tool.as_ref().map_or(name.as_str(), |tool| tool.name());
            if let Some(reason) = self
                .pre_tool_hooks(observer, &call_id, runs, &arguments)
                .await?
            {
                settled = Some(Err(ToolError::Model(format!(
                    "A hook blocked this call: {reason}"
                ))));
                ready = None;
            }
        }
        Ok(Begun {
            call_id,
            name,
            action_id,
            may_change,
            tool,
            ready,
            settled,
            risk,
            printed: Default::default(),
            note,
            ends,
        })
    }

    /// What the model is told when it calls a tool this conversation does not have: a
    /// built-in left out of the set is named as such, with the tools it has instead.
    fn unknown_tool(&self, name: &str) -> String {
        let tools = self.tools.names().join(", ");
        match wright_tools::ToolName::parse(name) {
            Some(builtin) => format!(
                "the tool '{builtin}' is not available in this conversation (its tool set leaves it out); use one of: {tools}"
            ),
            None => format!("unknown tool '{name}'; the tools are: {tools}"),
        }
    }

    /// Logs a call's observation (`None`: it was cancelled before it finished), and the
    /// plan it made; returns why the run ends, if it must.
    pub(super) fn end_call(
        &mut self,
        observer: &mut dyn Observer,
        begun: Begun,
        result: Option<Result<ToolOutput, ToolError>>,
    ) -> Result<Option<End>, StoreError> {
        let Begun {
            call_id,
            name,
            action_id,
            may_change,
            ready,
            note,
            ends,
            printed,
            ..
        } = begun;
        let (mut output, end) = match result {
            None => (
                ToolOutput {
                    text: match printed.text() {
                        Some(text) => format!(
                            "This call did not finish: {}. What it printed until then:\n{text}",
                            self.cancel_cause()
                        ),
                        None => format!("This call did not finish: {}.", self.cancel_cause()),
                    },
                    is_error: true,
                    ..ToolOutput::default()
                },
                Some((AgentState::Stopped, self.cancel_reason(), None)),
            ),
            Some(Ok(mut output)) => {
                if let Some(note) = note {
                    output.text = format!("{note}\n{}", output.text);
                }
                let end = output
                    .finish
                    .clone()
                    .map(|message| (AgentState::Finished, StopReason::Finished, Some(message)));
                if let (false, Some(arguments)) = (output.is_error, ready.as_ref()) {
                    let call = Call {
                        call_id: &call_id,
                        tool: &name,
                        arguments,
                    };
                    for note in self.annotations(&call, Ran::Fine) {
                        output.text.push('\n');
                        output.text.push_str(&note);
                    }
                }
                (output, end)
            }
            Some(Err(ToolError::Model(message))) => (
                ToolOutput {
                    text: match ready.as_ref() {
                        Some(arguments) => {
                            let call = Call {
                                call_id: &call_id,
                                tool: &name,
                                arguments,
                            };
                            std::iter::once(message)
                                .chain(self.annotations(&call, Ran::Refused))
                                .collect::<Vec<_>>()
                                .join("\n")
                        }
                        None => message,
                    },
                    is_error: true,
                    ..ToolOutput::default()
                },
                ends.map(|stop| (AgentState::Stopped, stop, None)),
            ),
            Some(Err(ToolError::Fatal(message))) => (
                ToolOutput {
                    text: message.clone(),
                    is_error: true,
                    ..ToolOutput::default()
                },
                Some((
                    AgentState::Failed,
                    StopReason::ToolFailed {
                        tool: name.clone(),
                        message,
                    },
                    None,
                )),
            ),
        };
        let step = self.step;
        // Decided once, here, before it is logged: the history never changes afterwards.
        if let Some(from) = &output.untrusted {
            output.text = wright_protocol::wrap_untrusted(from, &output.text);
        }
        // What the agent read: text in it that speaks to the agent is remembered, and a
        // risky call after it is flagged.
        let instructions = match name.as_str() {
            "think" | "finish" => None,
            _ => crate::injection::instructions_in(&output.text),
        };
        self.append(
            observer,
            Source::Environment,
            EventBody::Observation {
                call_id: call_id.clone(),
                tool: name,
                output: output.text,
                is_error: output.is_error,
                exit_code: output.exit_code,
            },
        )?;
        let observation_id = self.last_event_id();
        if let Some(excerpt) = instructions {
            self.teaching.read_instructions = Some((observation_id, excerpt));
        }
        if may_change {
            self.note_change(action_id, observation_id);
        }
        if let Some(tasks) = output.plan {
            self.append(
                observer,
                Source::Environment,
                EventBody::Plan {
                    step,
                    call_id,
                    tasks,
                },
            )?;
        }
        for connection in output.network {
            self.append(
                observer,
                Source::Environment,
                EventBody::Network(connection),
            )?;
        }
        Ok(end)
    }

    /// The user's task: the first user message.
    pub(crate) fn task(&self) -> String {
        self.log
            .events()
            .iter()
            .find_map(|e| match (&e.body, e.source) {
                (EventBody::Message { text, .. }, Source::User) => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}
