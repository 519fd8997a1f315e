//! Hooks in the formats people already have: OpenHands' `hooks.json` and the `hooks` key
//! of Claude Code's `.claude/settings.json`, both
//! `{"hooks": {"PreToolUse": [{"matcher": "terminal|Bash", "hooks": [{"type": "command",
//! "command": "…", "timeout": 60}]}]}}`. Matchers written for Claude Code name its tools
//! (`Bash`, `Edit|Write|MultiEdit`, `Read`, `Grep`, `Glob`): a call matches by wright's
//! name or by the name Claude Code gives the same action, so existing hooks fire.
//!
//! This module reads the files and decides which hooks an event runs; how a command runs
//! (as the user on the host, or in the sandbox) is the `HookRunner`'s, given by the
//! session. What a hook's answer means is in `answer`.

mod answer;

pub use answer::read_answer;
pub use answer::Answer;

use serde_json::Value;
use std::time::Duration;
use wright_protocol::HookEvent;
use wright_protocol::HookOrigin;

/// A hook runs at most this long unless its file says otherwise (OpenHands' default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// And never longer than this, whatever its file says.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// One command to run at an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    pub command: String,
    pub timeout: Duration,
    pub origin: HookOrigin,
    /// A user's hook that asked to run in the sandbox (`"sandbox": true`, wright's own
    /// field); a repository's always does.
    pub sandboxed: bool,
    /// The file it came from, for messages.
    pub file: String,
}

/// Which tools a group of hooks is for.
#[derive(Debug, Clone)]
enum Matcher {
    All,
    Exact(String),
    Pattern(regex::Regex),
}

impl Matcher {
    /// As OpenHands reads it: empty or `*` is every tool, `/re/` a regular expression, a
    /// pattern with regex characters (`Edit|Write`) one too, anything else a name.
    fn parse(text: &str) -> Self {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Matcher::All;
        }
        let pattern = match text.strip_prefix('/').and_then(|t| t.strip_suffix('/')) {
            Some(inner) if !inner.is_empty() => inner,
            _ if text.contains(|c: char| "|.*+?[]()^$\\".contains(c)) => text,
            _ => return Matcher::Exact(text.to_string()),
        };
        match regex::Regex::new(&format!("^(?:{pattern})$")) {
            Ok(re) => Matcher::Pattern(re),
            Err(_) => Matcher::Exact(text.to_string()),
        }
    }

    fn matches(&self, names: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(name) => names.contains(&name.as_str()),
            Matcher::Pattern(re) => names.iter().any(|name| re.is_match(name)),
        }
    }
}

/// Every hook of a conversation, the user's first.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    groups: Vec<(HookEvent, Matcher, Vec<HookCommand>)>,
}

/// What a hooks file could not be read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct HookFileError {
    pub file: String,
    pub message: String,
}

impl HookSet {
    /// The hooks of one file (`text` is its JSON; `file` names it). Events this wright
    /// does not know (Claude Code's `Notification`, say) and hooks of another `type` than
    /// `command` are for other tools, and left out.
    pub fn parse(text: &str, file: &str, origin: HookOrigin) -> Result<Self, HookFileError> {
        let error = |message: String| HookFileError {
            file: file.to_string(),
            message,
        };
        let value: Value =
            serde_json::from_str(text).map_err(|err| error(format!("not JSON: {err}")))?;
        let mut set = HookSet::default();
        let Some(events) = value.get("hooks") else {
            return Ok(set);
        };
        let events = events
            .as_object()
            .ok_or_else(|| error("`hooks` must be an object of events".into()))?;
        for (name, groups) in events {
            let Some(event) = HookEvent::parse(name) else {
                continue;
            };
            let groups = groups
                .as_array()
                .ok_or_else(|| error(format!("`hooks.{name}` must be a list")))?;
            for group in groups {
                let matcher = Matcher::parse(group["matcher"].as_str().unwrap_or(""));
                let mut commands = Vec::new();
                for hook in group["hooks"].as_array().into_iter().flatten() {
                    if hook["type"].as_str().is_some_and(|kind| kind != "command") {
                        continue;
                    }
                    let Some(command) = hook["command"].as_str().filter(|c| !c.trim().is_empty())
                    else {
                        return Err(error(format!("a hook of {name} has no `command`")));
                    };
                    let timeout = hook["timeout"]
                        .as_f64()
                        .filter(|secs| *secs > 0.0)
                        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
                        .min(MAX_TIMEOUT);
                    commands.push(HookCommand {
                        command: command.to_string(),
                        timeout,
                        origin,
                        sandboxed: origin == HookOrigin::Repository
                            || hook["sandbox"].as_bool() == Some(true),
                        file: file.to_string(),
                    });
                }
                if !commands.is_empty() {
                    set.groups.push((event, matcher, commands));
                }
            }
        }
        Ok(set)
    }

    /// This set, then `other`'s hooks.
    pub fn extend(&mut self, other: HookSet) {
        self.groups.extend(other.groups);
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The hooks `event` runs, in order; for a tool event, those whose matcher fits the
    /// call (`tool` and its `arguments`).
    pub fn matching(&self, event: HookEvent, call: Option<(&str, &Value)>) -> Vec<&HookCommand> {
        let names = call.map(|(tool, arguments)| names_of(tool, arguments));
        self.groups
            .iter()
            .filter(|(e, matcher, _)| {
                *e == event
                    && match &names {
                        Some(names) => matcher.matches(names),
                        None => true,
                    }
            })
            .flat_map(|(_, _, commands)| commands)
            .collect()
    }

    /// How many hooks of each origin there are, and the events they are for (for the
    /// run's header).
    pub fn summary(&self, origin: HookOrigin) -> Option<String> {
        let mut count = 0;
        let mut events: Vec<&str> = Vec::new();
        for (event, _, commands) in &self.groups {
            let mine = commands.iter().filter(|c| c.origin == origin).count();
            if mine > 0 {
                count += mine;
                if !events.contains(&event.as_str()) {
                    events.push(event.as_str());
                }
            }
        }
        (count > 0).then(|| {
            format!(
                "{} ({})",
                wright_protocol::count(count as u64, "hook"),
                events.join(", ")
            )
        })
    }
}

/// The names a call answers to in matchers: wright's (with its aliases) and the one
/// Claude Code gives the same action.
fn names_of<'a>(tool: &'a str, arguments: &Value) -> Vec<&'a str> {
    let mut names = vec![tool];
    let claude: &[&str] = match tool {
        "terminal" | "bash" | "execute_bash" => &["Bash", "terminal", "bash", "execute_bash"],
        "file_editor" | "str_replace_editor" => match arguments["command"].as_str() {
            Some("view") => &["Read", "file_editor", "str_replace_editor"],
            Some("create") => &["Write", "file_editor", "str_replace_editor"],
            _ => &["Edit", "MultiEdit", "file_editor", "str_replace_editor"],
        },
        "grep" => &["Grep"],
        "glob" => &["Glob"],
        "task_tracker" => &["TodoWrite"],
        "fetch" => &["WebFetch"],
        _ => &[],
    };
    names.extend(claude.iter().copied().filter(|name| *name != tool));
    names
}

/// What a hook's process came to, as the runner saw it.
#[derive(Debug, Clone, Default)]
pub struct HookProcess {
    /// Its exit code; `None` when killed (by its timeout, say).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
}

/// Runs a hook's command: the session's, which knows the sandbox. A command that cannot
/// start is an `Err` with the reason (reported, not fatal). It blocks; the loop calls it
/// off its own thread.
pub trait HookRunner: Send + Sync {
    fn run(
        &self,
        hook: &HookCommand,
        stdin: &[u8],
        env: &[(String, String)],
    ) -> Result<HookProcess, String>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    const CLAUDE: &str = r#"{"permissions": {}, "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "timeout": 5}]},
                       {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "fmt"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}, {"type": "command", "command": "tests"}]}]
    }}"#;

    fn commands(set: &HookSet, event: HookEvent, call: Option<(&str, Value)>) -> Vec<String> {
        set.matching(event, call.as_ref().map(|(tool, args)| (*tool, args)))
            .into_iter()
            .map(|hook| hook.command.clone())
            .collect()
    }

    #[test]
    fn claude_code_matchers_fire_on_wrights_tools() {
        let set = HookSet::parse(CLAUDE, ".claude/settings.json", HookOrigin::Repository).unwrap();
        let pre = HookEvent::PreToolUse;
        assert_eq!(
            commands(&set, pre, Some(("terminal", json!({"command": "ls"})))),
            ["guard"]
        );
        assert_eq!(
            commands(
                &set,
                pre,
                Some(("file_editor", json!({"command": "str_replace"})))
            ),
            ["fmt"]
        );
        assert_eq!(
            commands(
                &set,
                pre,
                Some(("file_editor", json!({"command": "create"})))
            ),
            ["fmt"]
        );
        assert!(commands(&set, pre, Some(("file_editor", json!({"command": "view"})))).is_empty());
        assert_eq!(commands(&set, HookEvent::Stop, None), ["tests"]);
        let guard = set.matching(pre, Some(("bash", &json!({}))))[0];
        assert_eq!(guard.timeout, Duration::from_secs(5));
        assert!(guard.sandboxed);
        assert_eq!(
            set.summary(HookOrigin::Repository).unwrap(),
            "3 hooks (PreToolUse, Stop)"
        );
        assert_eq!(set.summary(HookOrigin::User), None);
    }

    #[test]
    fn openhands_matchers_and_errors() {
        let text = r#"{"hooks": {"PreToolUse": [
            {"matcher": "terminal", "hooks": [{"command": "a"}]},
            {"matcher": "*", "hooks": [{"command": "b", "sandbox": true}]},
            {"matcher": "/file_.*/", "hooks": [{"command": "c"}]}]}}"#;
        let set = HookSet::parse(text, "hooks.json", HookOrigin::User).unwrap();
        let call = |tool: &str| commands(&set, HookEvent::PreToolUse, Some((tool, json!({}))));
        assert_eq!(call("terminal"), ["a", "b"]);
        assert_eq!(call("file_editor"), ["b", "c"]);
        let all = set.matching(HookEvent::PreToolUse, Some(("grep", &json!({}))));
        assert!(all[0].sandboxed && all[0].origin == HookOrigin::User);
        assert!(!set.matching(HookEvent::PreToolUse, Some(("terminal", &json!({}))))[0].sandboxed);
        assert_eq!(
            HookSet::parse("{", "h.json", HookOrigin::User)
                .unwrap_err()
                .file,
            "h.json"
        );
        assert!(HookSet::parse(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}"#,
            "h",
            HookOrigin::User
        )
        .unwrap_err()
        .message
        .contains("no `command`"));
        assert!(HookSet::parse(r#"{"env": {}}"#, "s", HookOrigin::User)
            .unwrap()
            .is_empty());
    }
}
