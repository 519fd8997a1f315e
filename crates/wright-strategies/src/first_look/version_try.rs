//! One version put in place and judged by the failing command (see `candidates`): the
//! file edited through the `file_editor` only, the command run in the sandbox, the edits
//! undone unless it passed or failed further on; what came of it, as a `Tried`.
//!
//! Versions in place, not yet settled by the log: while wright tries versions of the
//! failing code (see `candidates`), each file they change is recorded as it was before,
//! beside the log (`versions_in_place.json`), until the versions are kept (a `passed`
//! candidate logged) or taken out. A wright killed meanwhile left them in the workspace
//! with nothing in the log saying so; the next resume puts each such file back as it was,
//! through the `file_editor`, and logs a `not_tried` candidate saying why. The record is
//! wright's own, in the conversation's directory, out of the sandbox's reach; the texts in
//! it are only ever written back into the workspace, never run or read as settings.

use super::candidates::Asking;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use wright_core::strategy::Context;
use wright_core::StoreError;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_tools::failure::Rewrite;
use wright_tools::failure::Target;
use wright_tools::Tool;
use wright_tools::Workspace;

/// Puts `new` in place of the function (and `imports`, the lines to add and the line they
/// go after) and runs the failing command: what came of it, with the import added when
/// the run said the version lacked one (it is run again with it). A version with which
/// the command fails in a function not in `asked_about` stays, with the request for that
/// one (see `Tried::further`); otherwise, unless it passed, the file is put back. `None`
/// when cancelled while the command ran (the file is put back first).
pub(super) async fn try_in_place(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    target: &Target,
    new: &str,
    imports: Option<&(u64, String)>,
    asked_about: &[(String, String)],
) -> Option<Tried> {
    let (editor, command) = (asking.editor, asking.command);
    let mut edits = Vec::new();
    if let Some((after, text)) = imports {
        edits.push(serde_json::json!({
            "command": "insert",
            "path": target.path,
            "insert_line": after,
            "new_str": text,
        }));
    }
    edits.push(serde_json::json!({
        "command": "str_replace",
        "path": target.path,
        "old_str": target.old,
        "new_str": new,
    }));
    let mut made = 0;
    for edit in &edits {
        if let Err(err) = editor.run(edit).await {
            let why = format!("it could not be put in place: {err}");
            let outcome = put_back(editor, &target.path, made)
                .await
                .unwrap_or(CandidateOutcome::NotTried { why });
            return Some(Tried::just(outcome));
        }
        made += 1;
    }
    let mut ran = cx.run_in_root(command).await;
    let mut added = None;
    // Failed on a module it uses and its file lacks: once more with that import.
    if let Some(import) = ran.as_ref().and_then(|(output, exit_code)| {
        let failed = *exit_code != Some(0);
        failed
            .then(|| import_it_lacks(asking.workspace, output, target, new))
            .flatten()
    }) {
        if editor.run(&import.0).await.is_ok() {
            made += 1;
            added = Some(import.1);
            ran = cx.run_in_root(command).await;
        }
    }
    if matches!(ran, Some((_, Some(0)))) {
        return Some(Tried {
            added,
            ..Tried::just(CandidateOutcome::Passed)
        });
    }
    if let Some((output, Some(_))) = &ran {
        if let Some(next) = failing_further(asking, output, asked_about) {
            return Some(Tried {
                outcome: CandidateOutcome::FailsFurther {
                    next: next.targets[0].name.clone(),
                },
                added,
                further: Some((next, made)),
            });
        }
    }
    if let Some(could_not) = put_back(editor, &target.path, made).await {
        return Some(Tried::just(could_not));
    }
    let (_, exit_code) = ran?;
    Some(Tried::just(CandidateOutcome::Failed { exit_code }))
}

/// The request for the function a failing run now points at, when that is one not asked
/// about yet: the version before it took the failure further on.
fn failing_further(
    asking: &Asking<'_>,
    output: &str,
    asked_about: &[(String, String)],
) -> Option<Rewrite> {
    let next =
        wright_tools::failure::rewrite(output, asking.workspace, asking.command, asking.task)?;
    let first = &next.targets[0];
    let known = asked_about
        .iter()
        .any(|(path, name)| *path == first.path && *name == first.name);
    (!known).then_some(next)
}

/// The `insert` of the import a failing run of the version `new` says it lacks, and that
/// import's line (see `wright_tools::failure::import_named_by`); `None` when the output
/// names none or the file has it already.
fn import_it_lacks(
    workspace: &Workspace,
    output: &str,
    target: &Target,
    new: &str,
) -> Option<(Value, String)> {
    let import = wright_tools::failure::import_named_by(output, &target.path, new)?;
    let (after, text) = wright_tools::failure::missing_imports(workspace, &target.path, &[import])?;
    let insert = serde_json::json!({
        "command": "insert",
        "path": target.path,
        "insert_line": after,
        "new_str": text,
    });
    Some((insert, text))
}

/// What came of putting one version in place.
pub(super) struct Tried {
    pub(super) outcome: CandidateOutcome,
    /// The import added after the run said the version lacked it.
    pub(super) added: Option<String>,
    /// It failed further on: the request for the function it fails in now, and how many
    /// edits of its file this version made (undone if the chain ends without a pass).
    pub(super) further: Option<(Rewrite, usize)>,
}

impl Tried {
    fn just(outcome: CandidateOutcome) -> Self {
        Self {
            outcome,
            added: None,
            further: None,
        }
    }
}

/// Undoes the `made` last edits of `path`; `NotTried` with why when it could not.
pub(crate) async fn put_back(
    editor: &dyn Tool,
    path: &str,
    made: usize,
) -> Option<CandidateOutcome> {
    let undo = serde_json::json!({"command": "undo_edit", "path": path});
    for _ in 0..made {
        if let Err(err) = editor.run(&undo).await {
            return Some(CandidateOutcome::NotTried {
                why: format!("{path} could not be put back after it ran: {err}"),
            });
        }
    }
    None
}

/// The record's file name, beside `events.jsonl`.
const RECORD: &str = "versions_in_place.json";

/// A file a version changed, as it was before: with the event of the try that changed it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Before {
    pub event: Candidate,
    pub text: String,
    /// The file did not exist: wright's own check file (see `file_versions`), to be
    /// removed, whatever the log says of the versions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

/// The record of a conversation whose log is at `log`.
fn record_path(log: &Path) -> PathBuf {
    log.with_file_name(RECORD)
}

/// Records `event.path` as it is now, before a version changes it, unless `before` holds
/// it already; the record (beside the log at `log`) is on disk before this returns.
/// `false` when the file cannot be read or the record cannot be written: then no version
/// may go in.
pub(crate) fn record_before(
    log: &Path,
    workspace: &Workspace,
    before: &mut Vec<Before>,
    event: &Candidate,
) -> bool {
    if before.iter().any(|known| known.event.path == event.path) {
        return true;
    }
    let Some(text) = wright_tools::editable_text(workspace, &event.path) else {
        return false;
    };
    before.push(Before {
        event: event.clone(),
        text,
        absent: false,
    });
    write_record(log, before)
}

/// Records that `path`, which does not exist, is about to be written for a while (a
/// check file): a wright killed meanwhile has it removed on resume. `false` when the
/// record cannot be written: then the file may not be written either.
pub(crate) fn record_absent(log: &Path, before: &mut Vec<Before>, event: &Candidate) -> bool {
    if before.iter().any(|known| known.event.path == event.path) {
        return true;
    }
    before.push(Before {
        event: event.clone(),
        text: String::new(),
        absent: true,
    });
    write_record(log, before)
}

/// Writes `before` as the record beside `log`; on failure the last entry is taken off.
fn write_record(log: &Path, before: &mut Vec<Before>) -> bool {
    let written = serde_json::to_vec(before)
        .ok()
        .is_some_and(|json| write_synced(&record_path(log), &json).is_ok());
    if !written {
        before.pop();
    }
    written
}

/// The versions are settled by the log (kept, or taken out): the record goes.
pub(crate) fn settled(log: &Path) {
    let _ = std::fs::remove_file(record_path(log));
}

/// On resume: puts back the files a killed wright left versions in, unless the log says
/// they were kept, and logs each as a `not_tried` candidate.
pub(super) async fn put_back_unsettled(cx: &mut Context<'_>) -> Result<(), StoreError> {
    let log = cx.log_path().to_path_buf();
    let Ok(json) = std::fs::read(record_path(&log)) else {
        return Ok(());
    };
    let kept = cx.view().events().iter().any(|event| {
        matches!(&event.body, EventBody::Candidate(candidate)
            if candidate.outcome.stays())
    });
    let records: Vec<Before> = serde_json::from_slice(&json).unwrap_or_default();
    let (absent, records): (Vec<Before>, Vec<Before>) =
        records.into_iter().partition(|record| record.absent);
    for record in absent {
        let path = &record.event.path;
        let why = match remove_check_file(cx, path).await {
            Ok(false) => continue,
            Ok(true) => format!(
                "wright stopped while its check file {path} was in place; it was removed when this run resumed"
            ),
            Err(err) => format!(
                "wright stopped while its check file {path} was in place, and it could not be removed when this run resumed: {err}"
            ),
        };
        let candidate = Candidate {
            outcome: CandidateOutcome::NotTried { why },
            ..record.event
        };
        cx.log(Source::Environment, EventBody::Candidate(candidate))?;
    }
    if !kept {
        for record in records {
            let (editor, workspace) = {
                let view = cx.view();
                let editor = view.tools().get("file_editor").cloned();
                (editor, view.workspace().cloned())
            };
            let why = match write_back(editor, workspace, &record).await {
                Ok(false) => continue,
                Ok(true) => format!(
                    "wright stopped while versions were in place; {} was put back as it was when this run resumed",
                    record.event.path
                ),
                Err(err) => format!(
                    "wright stopped while versions were in place, and {} could not be put back when this run resumed: {err}",
                    record.event.path
                ),
            };
            let candidate = Candidate {
                outcome: CandidateOutcome::NotTried { why },
                ..record.event
            };
            cx.log(Source::Environment, EventBody::Candidate(candidate))?;
        }
    }
    settled(&log);
    Ok(())
}

/// Removes wright's check file at `path` (a plain relative name, see
/// `file_versions::check`) with a command in the sandbox: true when it was there.
pub(crate) async fn remove_check_file(cx: &mut Context<'_>, path: &str) -> Result<bool, String> {
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !path.starts_with('/')
        && !path.split('/').any(|part| part == "..");
    if !plain {
        return Err(format!("{path} is not a name wright gives its check files"));
    }
    let command = format!("if [ -e '{path}' ]; then rm -f -- '{path}' && echo removed; fi");
    match cx.run_in_root(&command).await {
        Some((output, Some(0))) => Ok(output.contains("removed")),
        Some((output, _)) => Err(output.trim().to_string()),
        None => Err("the command could not run".to_string()),
    }
}

/// Writes `record.text` back over its file (a whole-file `str_replace`, so the
/// `file_editor` writes it, beneath the workspace); false when it reads so already.
async fn write_back(
    editor: Option<std::sync::Arc<dyn Tool>>,
    workspace: Option<Workspace>,
    record: &Before,
) -> Result<bool, String> {
    let editor = editor.ok_or("there is no file_editor")?;
    let workspace = workspace.ok_or("there is no workspace")?;
    let path = &record.event.path;
    let now = wright_tools::editable_text(&workspace, path)
        .ok_or_else(|| format!("{path} cannot be read"))?;
    if now == record.text {
        return Ok(false);
    }
    let put_back = if now.is_empty() {
        serde_json::json!({"command": "create", "path": path, "file_text": record.text})
    } else {
        serde_json::json!({
            "command": "str_replace",
            "path": path,
            "old_str": now,
            "new_str": record.text,
        })
    };
    editor
        .run(&put_back)
        .await
        .map(|_| true)
        .map_err(|err| err.to_string())
}

/// Writes `bytes` to `path` through a temporary file renamed over it, synced first.
fn write_synced(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let partial = path.with_extension("json.partial");
    let mut file = std::fs::File::create(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}
