//! `wright resume ID [MESSAGE]`: continues a stopped or crashed conversation where its log
//! ends, in the same workspace (its clone, when it has one), with the same model unless
//! told otherwise.

use crate::drive::drive;
use crate::drive::print_header;
use crate::drive::CommonArgs;
use crate::drive::Terminal;
use crate::history_cmds::conversation_dir;
use crate::settings::SessionSettings;
use anyhow::bail;
use anyhow::Result;
use clap::Args;
use wright_protocol::count;
use wright_protocol::AgentState;
use wright_session::agent_session::AgentSession;
use wright_session::settings::going_on::Naming;
use wright_session::settings::going_on::Plan;
use wright_session::settings::model_at;
use wright_session::Existing;
use wright_session::Session;

#[derive(Args)]
pub struct ResumeArgs {
    /// The conversation (an id, or a unique prefix of one).
    pub id: String,
    /// What to tell the agent; needed to go on after it finished.
    pub message: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub net: crate::settings::NetArgs,
}

pub async fn resume(mut args: ResumeArgs) -> Result<u8> {
    args.common.allow_hosts = std::mem::take(&mut args.net.allow_hosts);
    args.common.check()?;
    if let Some(message) = &args.message {
        crate::settings::check_text(
            message,
            "message",
            &format!("wright resume {} \"now run the tests\"", args.id),
        )?;
    }
    let _ = nix::sys::prctl::set_dumpable(false);
    let dir = conversation_dir(&args.id)?;
    let front = Terminal {
        json: args.common.json,
    };
    let existing = Existing::open_any(&dir, &front)?;
    // An external agent's conversation goes on in the agent's own session: checked
    // before any server is asked anything, its hosts reachable as at its start.
    let external = match &existing.start.agent {
        Some(name) => {
            let going_on = GoingOn::check(name, &dir, args.message.as_deref(), &args.id)?;
            args.common
                .allow_hosts
                .extend(going_on.agent.allow_hosts.iter().cloned());
            Some(going_on)
        }
        None => None,
    };
    // The model it is on, unless another is named (then logged as a switch); never a
    // server taken from the log.
    let plan = Plan::new(&args.common, &existing, Naming::Flags)?;
    let common = plan.args.clone();
    let (logged_url, logged_model) = plan.logged();
    let in_force = existing.in_force.clone();
    let settings = SessionSettings::resolve(&common, Some(&existing.working_copy.config_source()))?;
    let start = existing.start.clone();
    plan.check_settings(&settings)?;
    // First: a secret that is not stored stops the run before the server is asked.
    let sandbox = settings.sandbox_choice()?;
    // The fallback profiles too: when the model in force does not answer, the next one.
    let wright_session::settings::Connected {
        settings,
        client,
        mut profiles,
        lines: mut profile_lines,
    } = wright_session::settings::connect(settings, &common, Some((&logged_url, &logged_model)))
        .await?;
    let in_use = model_at(settings.values.profile.clone(), &client);
    plan.check_connected(&in_use, &mut profiles)?;
    if let Some(chosen) = &profiles.chosen {
        let to = profiles.unanswered.first().map_or(&in_use, |gone| &gone.at);
        profile_lines.insert(
            0,
            format!(
                "model switch: {}",
                wright_session::settings::fleet::switch_words(
                    &chosen.from,
                    to,
                    wright_protocol::SwitchReason::Chosen,
                    &chosen.detail
                )
            ),
        );
    }
    let (session, conversation, notes) = Session::reopen(
        existing,
        client,
        settings.values.clone(),
        &sandbox,
        profiles,
        &front,
    )
    .await?;
    if let Some(GoingOn { agent, record }) = external {
        if !settings.json {
            crate::drive::print_external_header(&session, &agent, profile_lines)?;
        }
        // `check` made sure there is a message.
        let message = args.message.as_deref().unwrap_or_default();
        return crate::drive::drive_external(
            session,
            conversation.into(),
            &agent,
            message,
            wright_acp::client::Opening::Load(&record),
            settings.json,
        )
        .await;
    }
    if notes.last_state == Some(AgentState::Finished) && args.message.is_none() {
        bail!(
            "conversation {} has finished; give a message to go on: wright resume {} \"what next\"",
            start.conversation,
            args.id
        );
    }
    if !settings.json {
        let mut lines = vec![
            format!("constraint {}", session.constraint_why),
            format!("context {}", crate::drive::window_words(&session.window)),
            format!("tools {}", session.tools_why),
            format!(
                "confirm {}",
                crate::drive::confirm_words(
                    session
                        .settings
                        .confirm
                        .unwrap_or(wright_protocol::ConfirmMode::Never)
                )
            ),
        ];
        lines.extend(crate::drive::teaching_lines(&session));
        if let Some(at) = &in_force {
            lines.push(format!(
                "model in force {} (the last fallback switch{})",
                at.model,
                at.profile
                    .as_ref()
                    .map(|p| format!(", profile {p}"))
                    .unwrap_or_default()
            ));
        }
        lines.extend(profile_lines);
        if let Some(torn) = &notes.torn {
            lines.push(format!(
                "the log ended in a torn line ({} at line {}): cut off, the events before it are intact",
                count(torn.bytes as u64, "byte"),
                torn.line
            ));
        }
        if let Some(pending) = &notes.awaiting {
            lines.push(format!(
                "a {} call waits for your confirmation: it is asked about again first, and runs only on your yes",
                pending.tool
            ));
        }
        for tool in &notes.interrupted {
            lines.push(format!(
                "a {tool} call was cut off by the stop: the model is told, it is not run again"
            ));
        }
        print_header(
            &start.conversation,
            &session.client,
            session.tools.workspace.root(),
            &session.working_copy,
            &lines,
            &session.tools.setup,
        )?;
    }
    let title = args
        .message
        .clone()
        .unwrap_or_else(|| "resumed".to_string());
    drive(
        session,
        conversation,
        args.message.as_deref(),
        &settings,
        &title,
    )
    .await
}

/// What going on with an external agent's conversation takes: the agent, still in the
/// user's own configuration, and the record of its session, which it says it can load.
struct GoingOn {
    agent: wright_config::agents::AgentConfig,
    record: AgentSession,
}

impl GoingOn {
    fn check(name: &str, dir: &std::path::Path, message: Option<&str>, id: &str) -> Result<Self> {
        let refused = |why: &str| {
            anyhow::anyhow!(
                "{}",
                wright_session::external_refusal(name, &format!("resuming it ({why})"))
            )
        };
        let Some(record) = AgentSession::read(dir)? else {
            return Err(refused(
                "no session of the agent's was recorded for it: it ran before wright kept them, or the agent never opened one",
            ));
        };
        if !record.load_session {
            return Err(refused(
                "the agent does not load sessions: it offered no loadSession in initialize",
            ));
        }
        if record.agent != name {
            return Err(refused(&format!(
                "its recorded session is of the agent {}, not of {name}",
                record.agent
            )));
        }
        if message.is_none() {
            bail!(
                "the external agent {name} goes on from a prompt: give one, `wright resume {id} \"what next\"`"
            );
        }
        let agent = crate::drive::external_agent(name)?;
        Ok(Self { agent, record })
    }
}
