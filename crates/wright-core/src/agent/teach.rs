//! Hooks and skills in the loop. Each hook that runs is a `hook` event (what it decided,
//! what it adds for the model); a blocked call is answered with the hook's reason and not
//! run; a refused `finish` goes back to the model with the reason; a refused message
//! stops the run before the model sees it. Each skill a trigger calls for is a `skill`
//! event, logged once per conversation after what called for it, so the history only
//! grows. Hooks run off the loop's thread, each within its timeout; one that fails or
//! hangs is reported in its event, never fatal.

use super::Conversation;
use super::Observer;
use super::Outcome;
use crate::hooks::read_answer;
use crate::hooks::HookCommand;
use crate::hooks::HookProcess;
use crate::hooks::HookRunner;
use crate::hooks::HookSet;
use crate::reply::parse_arguments;
use crate::store::StoreError;
use serde_json::json;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use wright_llm::ToolCall;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::HookEvent;
use wright_protocol::HookOrigin;
use wright_protocol::HookOutcome;
use wright_protocol::HookRun;
use wright_protocol::SkillCause;
use wright_protocol::Source;
use wright_protocol::Start;
use wright_protocol::StopReason;

/// The hooks of a conversation and what runs them.
#[derive(Clone)]
pub(super) struct Hooks {
    set: HookSet,
    runner: Arc<dyn HookRunner>,
}

/// The longest a setup script may run.
const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// A failed setup script's output shown to the model keeps this many characters.
const SETUP_OUTPUT_CHARS: usize = 2_000;
/// A hook's command is logged clipped to this many characters.
const COMMAND_CHARS: usize = 300;

impl Conversation {
    /// Runs `set`'s hooks through `runner` from now on.
    pub fn set_hooks(&mut self, set: HookSet, runner: Arc<dyn HookRunner>) {
        self.teaching.hooks = Some(Hooks { set, runner });
    }

    /// Runs the repository's setup script (`path`, its approved `script`) in the sandbox,
    /// through the hooks' runner, before the first step of the next run.
    pub fn set_up_first(&mut self, path: String, script: String) {
        self.teaching.setup_script = Some((path, script));
    }

    /// The skills this conversation may draw on (its start event's).
    pub(super) fn skill_catalog(&self) -> Vec<wright_protocol::SkillEntry> {
        self.start_event()
            .map(|start| start.skills.clone())
            .unwrap_or_default()
    }

    pub(super) fn start_event(&self) -> Option<&Start> {
        self.log.events().iter().find_map(|e| match &e.body {
            EventBody::Start(start) => Some(start),
            _ => None,
        })
    }

    fn workspace_dir(&self) -> String {
        self.start_event()
            .map(|start| start.workspace.clone())
            .unwrap_or_default()
    }

    /// The skills already in the history.
    fn added_skills(&self) -> HashSet<String> {
        self.log
            .events()
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::Skill { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Logs the skills a user message calls for by a trigger.
    pub(super) fn add_keyword_skills(
        &mut self,
        observer: &mut dyn Observer,
        message: &str,
    ) -> Result<(), StoreError> {
        let catalog = self.skill_catalog();
        let added = self.added_skills();
        for (skill, word) in crate::skills::by_keyword(&catalog, message, &added) {
            self.log_skill(observer, skill, SkillCause::Keyword { word })?;
        }
        Ok(())
    }

    /// Logs the skills the files `calls` touched call for (the first time).
    pub(super) fn add_path_skills(
        &mut self,
        observer: &mut dyn Observer,
        calls: &[ToolCall],
    ) -> Result<(), StoreError> {
        let catalog = self.skill_catalog();
        if catalog.iter().all(|skill| skill.paths.is_empty()) {
            return Ok(());
        }
        let root = self.workspace_dir();
        let touched: Vec<String> = calls
            .iter()
            .filter_map(|call| {
                let arguments = parse_arguments(&call.function.arguments).ok()?;
                Some(crate::skills::touched_paths(
                    &call.function.name,
                    &arguments,
                    &root,
                ))
            })
            .flatten()
            .collect();
        let added = self.added_skills();
        for (skill, path) in crate::skills::by_path(&catalog, &touched, &added) {
            self.log_skill(observer, skill, SkillCause::Path { path })?;
        }
        Ok(())
    }

    fn log_skill(
        &mut self,
        observer: &mut dyn Observer,
        skill: &wright_protocol::SkillEntry,
        cause: SkillCause,
    ) -> Result<(), StoreError> {
        self.append(
            observer,
            Source::Environment,
            EventBody::Skill {
                name: skill.name.clone(),
                path: skill.path.clone(),
                cause,
                text: skill.text.clone(),
            },
        )
    }

    /// Runs the hooks of `event` that match `call` (its id, tool and arguments), each
    /// with `fields` added to the JSON it reads, in order until one blocks. Each run is
    /// returned as its event, to be logged by the caller (`log_hooks`) where it belongs;
    /// the reason of a block comes back too.
    pub(super) async fn run_hooks(
        &self,
        event: HookEvent,
        call: Option<(&str, &str, &Value)>,
        fields: Value,
    ) -> (Vec<HookRun>, Option<String>) {
        let Some(hooks) = &self.teaching.hooks else {
            return (Vec::new(), None);
        };
        let matching: Vec<HookCommand> = hooks
            .set
            .matching(event, call.map(|(_, tool, arguments)| (tool, arguments)))
            .into_iter()
            .cloned()
            .collect();
        let mut runs = Vec::new();
        for hook in matching {
            let run = self
                .run_one(&hooks.runner, &hook, event, call, &fields)
                .await;
            let blocked = (run.outcome == HookOutcome::Blocked).then(|| run.reason.clone());
            runs.push(run);
            if let Some(reason) = blocked {
                return (runs, Some(reason.unwrap_or_default()));
            }
        }
        (runs, None)
    }

    /// Runs one hook and reads its answer.
    async fn run_one(
        &self,
        runner: &Arc<dyn HookRunner>,
        hook: &HookCommand,
        event: HookEvent,
        call: Option<(&str, &str, &Value)>,
        fields: &Value,
    ) -> HookRun {
        let process = self.spawn_hook(runner, hook, event, call, fields).await;
        let (outcome, reason, context, exit_code) = match process {
            Ok(process) => {
                let answer = read_answer(event, &process);
                (answer.outcome, answer.reason, answer.context, process.code)
            }
            Err(why) => (HookOutcome::Failed, Some(why), None, None),
        };
        HookRun {
            event,
            origin: hook.origin,
            command: crate::skills::cut(&hook.command, COMMAND_CHARS).0,
            call_id: call.map(|(id, _, _)| id.to_string()),
            outcome,
            exit_code,
            reason,
            context,
        }
    }

    /// Starts `hook` off the loop's thread with the event's JSON on its stdin, and waits
    /// for it (its timeout bounds the wait; the user's Ctrl-C ends it sooner).
    async fn spawn_hook(
        &self,
        runner: &Arc<dyn HookRunner>,
        hook: &HookCommand,
        event: HookEvent,
        call: Option<(&str, &str, &Value)>,
        fields: &Value,
    ) -> Result<HookProcess, String> {
        let workspace = self.workspace_dir();
        let mut input = json!({
            "session_id": self.id(),
            "cwd": workspace,
            "hook_event_name": event.as_str(),
            // OpenHands' names for the same.
            "event_type": event.as_str(),
            "working_dir": workspace,
        });
        if let (Some(object), Some(extra)) = (input.as_object_mut(), fields.as_object()) {
            object.extend(extra.clone());
        }
        let mut env = vec![
            ("WRIGHT_SESSION_ID".to_string(), self.id().to_string()),
            ("WRIGHT_PROJECT_DIR".to_string(), workspace.clone()),
            ("WRIGHT_HOOK_EVENT".to_string(), event.as_str().to_string()),
            ("CLAUDE_PROJECT_DIR".to_string(), workspace.clone()),
            ("OPENHANDS_PROJECT_DIR".to_string(), workspace),
            ("OPENHANDS_SESSION_ID".to_string(), self.id().to_string()),
            (
                "OPENHANDS_EVENT_TYPE".to_string(),
                event.as_str().to_string(),
            ),
        ];
        if let Some((_, tool, arguments)) = call {
            input["tool_name"] = json!(tool);
            input["tool_input"] = arguments.clone();
            env.push(("WRIGHT_TOOL_NAME".to_string(), tool.to_string()));
            env.push(("OPENHANDS_TOOL_NAME".to_string(), tool.to_string()));
        }
        let stdin = input.to_string().into_bytes();
        let (runner, hook) = (runner.clone(), hook.clone());
        let running = tokio::task::spawn_blocking(move || runner.run(&hook, &stdin, &env));
        let cancelled = async {
            match &self.interrupt.user_cancel {
                Some(cancel) => cancel.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            done = running => done.map_err(|_| "the hook's runner stopped".to_string())?,
            _ = cancelled => Err("interrupted before it answered".into()),
        }
    }

    /// Logs hook runs as events.
    pub(super) fn log_hooks(
        &mut self,
        observer: &mut dyn Observer,
        runs: Vec<HookRun>,
    ) -> Result<(), StoreError> {
        for run in runs {
            self.append(observer, Source::Environment, EventBody::Hook(run))?;
        }
        Ok(())
    }

    /// `PreToolUse` for a call about to run: the reason, when a hook blocked it.
    pub(super) async fn pre_tool_hooks(
        &mut self,
        observer: &mut dyn Observer,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<Option<String>, StoreError> {
        let (runs, blocked) = self
            .run_hooks(
                HookEvent::PreToolUse,
                Some((call_id, tool, arguments)),
                json!({}),
            )
            .await;
        self.log_hooks(observer, runs)?;
        Ok(blocked)
    }

    /// `PostToolUse` after the call `call_id` of `tool` ran and its observation was
    /// logged: what its hooks add goes into the history after it.
    pub(super) async fn post_tool_hooks(
        &mut self,
        observer: &mut dyn Observer,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), StoreError> {
        let Some(hooks) = &self.teaching.hooks else {
            return Ok(());
        };
        if hooks
            .set
            .matching(HookEvent::PostToolUse, Some((tool, arguments)))
            .is_empty()
        {
            return Ok(());
        }
        // The output as logged: masked of the granted secrets.
        let response = self.log.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Observation {
                call_id: id,
                output,
                is_error,
                exit_code,
                ..
            } if id == call_id => Some(json!({
                "output": output, "is_error": is_error, "exit_code": exit_code,
            })),
            _ => None,
        });
        let output = response
            .as_ref()
            .map(|r| r["output"].clone())
            .unwrap_or(Value::Null);
        let fields = json!({"tool_response": response, "tool_output": output});
        let (runs, _) = self
            .run_hooks(
                HookEvent::PostToolUse,
                Some((call_id, tool, arguments)),
                fields,
            )
            .await;
        self.log_hooks(observer, runs)
    }

    /// `Stop` when the model would end the task (its `finish` of `call_id`, or a chat's
    /// answer): the reason, when a hook refuses it. The next `Stop` then reads
    /// `stop_hook_active: true`, so a hook can let a second try pass — read from the log
    /// (the last `Stop` run logged blocked), so a resumed conversation says the same.
    pub(crate) async fn stop_hooks(
        &mut self,
        observer: &mut dyn Observer,
        call_id: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        let refused = self.log.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Hook(run) if run.event == HookEvent::Stop => {
                Some(run.outcome == HookOutcome::Blocked)
            }
            _ => None,
        });
        let fields = json!({"stop_hook_active": refused.unwrap_or(false)});
        let (mut runs, blocked) = self.run_hooks(HookEvent::Stop, None, fields).await;
        for run in &mut runs {
            run.call_id = call_id.map(str::to_string);
        }
        self.log_hooks(observer, runs)?;
        Ok(blocked)
    }

    /// Takes the user's `message`, if any, after the opening hooks: logged, then what the
    /// hooks add, then the skills it calls for. A message a hook refused is not logged and
    /// the run ends, before the model sees it (that outcome is returned).
    pub(super) async fn take_message(
        &mut self,
        observer: &mut dyn Observer,
        message: Option<&str>,
    ) -> Result<Option<Outcome>, StoreError> {
        let (opening, refused) = self.opening_hooks(message).await;
        if let Some(reason) = refused {
            self.log_hooks(observer, opening)?;
            let stop = StopReason::PromptRefused { reason };
            return self
                .end(observer, AgentState::Stopped, stop, None)
                .map(Some);
        }
        if let Some(text) = message {
            self.append(
                observer,
                Source::User,
                EventBody::Message {
                    text: text.to_string(),
                    step: None,
                    reasoning: None,
                    raw: None,
                },
            )?;
        }
        self.log_hooks(observer, opening)?;
        if let Some(text) = message {
            self.add_keyword_skills(observer, text)?;
        }
        Ok(None)
    }

    /// In a chat, whether a Stop hook refuses to end the turn on the model's answer (the
    /// model is then told why, and goes on).
    pub(super) async fn answer_refused(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
    ) -> Result<bool, StoreError> {
        let Some(reason) = self.stop_hooks(observer, None).await? else {
            return Ok(false);
        };
        self.tell(
            observer,
            step,
            format!("A hook refused to end here: {reason}"),
        )?;
        Ok(true)
    }

    /// `SessionStart` (the first run of this conversation in this process) and
    /// `UserPromptSubmit` for `message`: their runs, to be logged after the message, and
    /// the reason when a hook refused the message.
    async fn opening_hooks(&mut self, message: Option<&str>) -> (Vec<HookRun>, Option<String>) {
        let mut runs = Vec::new();
        if !self.teaching.session_started {
            self.teaching.session_started = true;
            let resumed = self
                .log
                .events()
                .iter()
                .any(|e| matches!(e.body, EventBody::Message { .. }));
            let source = if resumed { "resume" } else { "startup" };
            let (started, _) = self
                .run_hooks(HookEvent::SessionStart, None, json!({"source": source}))
                .await;
            runs.extend(started);
        }
        let Some(text) = message else {
            return (runs, None);
        };
        let fields = json!({"prompt": text, "message": text});
        let (prompted, blocked) = self
            .run_hooks(HookEvent::UserPromptSubmit, None, fields)
            .await;
        runs.extend(prompted);
        (runs, blocked)
    }

    /// Runs the repository's setup script, if one is due, and logs how it went: a
    /// failure is shown to the model with the end of its output.
    pub(super) async fn run_setup(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<(), StoreError> {
        let Some((path, script)) = self.teaching.setup_script.take() else {
            return Ok(());
        };
        let Some(runner) = self
            .teaching
            .hooks
            .as_ref()
            .map(|hooks| hooks.runner.clone())
        else {
            return Ok(());
        };
        let hook = HookCommand {
            command: script,
            timeout: SETUP_TIMEOUT,
            origin: HookOrigin::Repository,
            sandboxed: true,
            file: path.clone(),
        };
        let process = self
            .spawn_hook(&runner, &hook, HookEvent::Setup, None, &json!({}))
            .await;
        let (outcome, exit_code, said) = match &process {
            Ok(p) if p.timed_out => (HookOutcome::TimedOut, None, tail(p)),
            Ok(p) if p.code == Some(0) => (HookOutcome::Allowed, p.code, String::new()),
            Ok(p) => (HookOutcome::Failed, p.code, tail(p)),
            Err(why) => (HookOutcome::Failed, None, why.clone()),
        };
        let how = match (outcome, exit_code) {
            (HookOutcome::Allowed, _) => None,
            (HookOutcome::TimedOut, _) => Some("ran past its time and was stopped".to_string()),
            (_, Some(code)) => Some(format!("failed (exit {code})")),
            _ => Some("could not run".to_string()),
        };
        let context = how.as_ref().map(|how| {
            format!("[Before your first step, wright ran the repository's setup script {path}; it {how}:]\n{said}")
        });
        let run = HookRun {
            event: HookEvent::Setup,
            origin: HookOrigin::Repository,
            command: path,
            call_id: None,
            outcome,
            exit_code,
            reason: how,
            context,
        };
        self.log_hooks(observer, vec![run])
    }

    /// `SessionEnd`, once the session's last run is over (`reason`: how it ended).
    pub async fn end_session(
        &mut self,
        observer: &mut dyn Observer,
        reason: &str,
    ) -> Result<(), StoreError> {
        let (runs, _) = self
            .run_hooks(HookEvent::SessionEnd, None, json!({"reason": reason}))
            .await;
        self.log_hooks(observer, runs)
    }
}

/// The end of a setup script's output, stderr after stdout.
fn tail(process: &HookProcess) -> String {
    let mut text = String::from_utf8_lossy(&process.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&process.stderr));
    let chars: Vec<char> = text.trim().chars().collect();
    let from = chars.len().saturating_sub(SETUP_OUTPUT_CHARS);
    chars[from..].iter().collect()
}
