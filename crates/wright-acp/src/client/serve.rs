//! The client capabilities wright offers an external agent, served with wright's own
//! sandboxed tools: reading and writing a text file (`file_editor`), running a command
//! (`terminal`). Each request becomes a call of that tool, made as the loop makes the
//! model's (`Conversation::serve_external`: logged before it runs, rated, asked about,
//! hooked, its observation logged), and the agent gets what the call came to. A command
//! runs to its end when its terminal is created; the terminal then only answers with
//! its output and exit status.

use agent_client_protocol::v1::schema::CreateTerminalRequest;
use agent_client_protocol::v1::schema::ReadTextFileRequest;
use agent_client_protocol::v1::schema::TerminalExitStatus;
use agent_client_protocol::v1::schema::WriteTextFileRequest;
use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use serde_json::json;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use wright_llm::ToolCall;
use wright_session::external::Served;

/// A command the agent ran in a terminal: what it printed and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct Ran {
    pub(crate) output: String,
    pub(crate) exit: TerminalExitStatus,
}

/// The terminals of one session, by id.
#[derive(Default)]
pub(crate) struct Terminals {
    ran: BTreeMap<String, Ran>,
    next: u64,
}

impl Terminals {
    pub(crate) fn add(&mut self, ran: Ran) -> String {
        self.next += 1;
        let id = format!("term-{}", self.next);
        self.ran.insert(id.clone(), ran);
        id
    }

    pub(crate) fn get(&self, id: &str) -> Result<&Ran, Error> {
        self.ran
            .get(id)
            .ok_or_else(|| Error::new(ErrorCode::INVALID_PARAMS, format!("no terminal {id}")))
    }

    pub(crate) fn release(&mut self, id: &str) {
        self.ran.remove(id);
    }
}

/// A call id for a request of the agent's, unique in the conversation.
pub(crate) fn call_id(kind: &str, n: u64) -> String {
    format!("acp-{kind}-{n}")
}

fn call(id: String, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id,
        kind: "function".into(),
        function: wright_llm::FunctionCall {
            name: tool.into(),
            arguments: arguments.to_string(),
        },
    }
}

/// The path the agent names, as a path of the workspace (an absolute one must be
/// beneath it).
fn relative(workspace: &Path, path: &Path) -> Result<String, Error> {
    let inside = match path.is_absolute() {
        true => path.strip_prefix(workspace).map_err(|_| {
            Error::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "{} is outside the workspace ({}): wright serves files beneath it only",
                    path.display(),
                    workspace.display()
                ),
            )
        })?,
        false => path,
    };
    Ok(inside.display().to_string())
}

/// The call that reads a file: wright's `view` of it.
pub(crate) fn read_call(
    workspace: &Path,
    request: &ReadTextFileRequest,
    id: String,
) -> Result<(ToolCall, String), Error> {
    let path = relative(workspace, &request.path)?;
    Ok((
        call(id, "file_editor", json!({"command": "view", "path": path})),
        path,
    ))
}

/// The file's text, from `line` (1-based) for `limit` lines, read beneath the
/// workspace (never through a link out of it) once its `view` was let through.
pub(crate) fn read_text(
    workspace: &wright_tools::Workspace,
    path: &str,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, Error> {
    let failed = |why: String| Error::new(ErrorCode::INTERNAL_ERROR, why);
    let relative = workspace
        .relative(path)
        .map_err(|err| failed(err.to_string()))?;
    let text = workspace
        .dir()
        .read_to_string(&relative)
        .map_err(|err| failed(format!("cannot read {path}: {err}")))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// The call that writes a file whole: `create` for a new one, else the whole old text
/// replaced (`str_replace`), or written into an empty one (`insert`).
pub(crate) fn write_call(
    workspace: &wright_tools::Workspace,
    request: &WriteTextFileRequest,
    id: String,
) -> Result<ToolCall, Error> {
    let path = relative(workspace.root(), &request.path)?;
    let old = workspace
        .relative(&path)
        .ok()
        .and_then(|relative| workspace.dir().read_to_string(&relative).ok());
    let arguments = match old {
        None => json!({"command": "create", "path": path, "file_text": request.content}),
        Some(old) if old.is_empty() => {
            json!({"command": "insert", "path": path, "insert_line": 0, "new_str": request.content})
        }
        Some(old) => {
            json!({"command": "str_replace", "path": path, "old_str": old, "new_str": request.content})
        }
    };
    Ok(call(id, "file_editor", arguments))
}

/// The call that runs a terminal's command: wright's `terminal`, in the directory asked
/// for (beneath the workspace), with the variables asked for.
pub(crate) fn terminal_call(
    workspace: &Path,
    request: &CreateTerminalRequest,
    id: String,
) -> Result<ToolCall, Error> {
    let mut line = String::new();
    if let Some(cwd) = &request.cwd {
        let inside = relative(workspace, cwd)?;
        if !inside.is_empty() {
            line.push_str(&format!("cd {} && ", quoted(&inside)));
        }
    }
    for variable in &request.env {
        line.push_str(&format!("{}={} ", variable.name, quoted(&variable.value)));
    }
    line.push_str(&quoted(&request.command));
    for arg in &request.args {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    Ok(call(id, "terminal", json!({"command": line})))
}

/// A word for the shell, quoted unless it is plainly one.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', "'\\''")),
    }
}

/// A served call as the agent's error, when it did not go through.
pub(crate) fn refused(served: &Served) -> Option<Error> {
    match served {
        Served::Observed {
            output,
            is_error: true,
            exit_code: None,
        } => Some(Error::new(ErrorCode::INTERNAL_ERROR, output.clone())),
        Served::Ended(outcome) => Some(Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("wright's run ended: {}", outcome.stop()),
        )),
        Served::Observed { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::EnvVariable;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_terminal_is_one_quoted_command_line_beneath_the_workspace() {
        let request = CreateTerminalRequest::new("s", "python3")
            .args(vec!["-m".into(), "unittest".into(), "it's".into()])
            .env(vec![EnvVariable::new("A", "b c")])
            .cwd(std::path::PathBuf::from("/w/sub"));
        let call = terminal_call(Path::new("/w"), &request, "x".into()).unwrap();
        let arguments: Value = serde_json::from_str(&call.function.arguments).unwrap();
        assert_eq!(
            arguments["command"],
            "cd sub && A='b c' python3 -m unittest 'it'\\''s'"
        );
        let outside = CreateTerminalRequest::new("s", "ls").cwd(std::path::PathBuf::from("/etc"));
        assert!(terminal_call(Path::new("/w"), &outside, "y".into()).is_err());
    }
}
