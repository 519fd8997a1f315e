//! Candidate fixes (`--candidates`): when the first look fails and its first failure's
//! line calls a function defined in another file of the workspace, wright asks the model
//! apart — no tools, no history, no constraint, sampled — to write that function
//! corrected, whole, up to `TRIES` times. Each version is put in place with the
//! `file_editor` (so only inside the workspace, never in a test file) and the failing
//! command is run in the sandbox; a version with which it still fails is taken out again
//! with `undo_edit` before anything else happens, and the first with which it passes
//! stays. When the command fails further on with a version, in a function not asked
//! about yet (a file of several stubs, filled one by one), that version stays while
//! versions of the next are asked for; unless the chain ends in a pass, all of them are
//! taken out. Each try is logged as a `candidate` event; the history shows the versions
//! that stayed right after the failure, so the model starts from code that passes and
//! decides whether the task asks for more. Measured (README): the 1.5B wrote a passing
//! version in its first tries where, acting through tool calls, it never made that edit —
//! and, shown the version as a call to copy, it did not copy it. It is done once, before
//! the first step, so the prefix every later request extends is fixed; a resumed run
//! renders it from the log and asks nothing.

use super::version_try::put_back;
use super::version_try::record_before;
use super::version_try::settled;
use super::version_try::try_in_place;
use super::version_try::Before;
use std::time::Instant;
use wright_core::strategy::Context;
use wright_core::StoreError;
use wright_llm::ChatMessage;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_tools::failure::Rewrite;
use wright_tools::failure::Target;
use wright_tools::Tool;
use wright_tools::Workspace;

/// Versions asked for at most, of one function: sampled, a small model's is right one
/// time in a few.
const TRIES: usize = 4;
/// Versions asked for at most in all, over the functions a failure moved through.
const ASKED_AT_MOST: usize = 12;
/// An answer's tokens: a sentence, then a function of up to 80 lines.
const CANDIDATE_TOKENS: u32 = 700;
/// Sampled, not greedy: the greedy answer is one answer, the same each time.
const CANDIDATE_TEMPERATURE: f32 = 0.7;

/// Asks for versions of the function the failing output of `call_id` (a run of `command`)
/// points at and tries each, until `until` (half of the run's time); true when one
/// passed. A version with which the command fails further on, in a function not asked
/// about yet, stays while versions of that one are asked for (a file of several stubs
/// fails in the next one once the first is filled); unless the chain ends in a pass, every
/// version kept on the way is taken out again. Nothing is asked when there is no such
/// function, no workspace or no `file_editor`; only a failure to write the log is an `Err`.
pub(super) async fn try_versions(
    cx: &mut Context<'_>,
    call_id: &str,
    output: &str,
    command: &str,
    until: Option<Instant>,
) -> Result<bool, StoreError> {
    let (workspace, editor, task, client) = {
        let view = cx.view();
        let client = view
            .client()
            .for_samples(CANDIDATE_TOKENS, CANDIDATE_TEMPERATURE);
        let editor = view.tools().get("file_editor").cloned();
        (view.workspace().cloned(), editor, view.task(), client)
    };
    let (Some(workspace), Some(editor)) = (workspace, editor) else {
        return Ok(false);
    };
    let Some(rewrite) = wright_tools::failure::rewrite(output, &workspace, command, &task) else {
        return Ok(false);
    };
    let record = cx.log_path().to_path_buf();
    let asking = Asking {
        call_id,
        command,
        client: &client,
        editor: editor.as_ref(),
        workspace: &workspace,
        task: &task,
        record: &record,
        until,
    };
    let mut chain = Chain::default();
    let passed = try_chain(cx, &asking, rewrite, &mut chain).await?;
    if !passed {
        take_back(cx, editor.as_ref(), &chain.kept).await?;
    }
    if !chain.before.is_empty() {
        settled(&record);
    }
    Ok(passed)
}

/// The tries of `try_versions`, function after function; the versions that failed
/// further on and stay for now are pushed on `chain.kept`, the files changed as they
/// were before on `chain.before` (see `version_try`).
async fn try_chain(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    mut rewrite: Rewrite,
    chain: &mut Chain,
) -> Result<bool, StoreError> {
    // Every function asked about so far: the failure moving back to one is no progress.
    let mut asked_about: Vec<(String, String)> = names(&rewrite);
    let mut asked = 0;
    'functions: loop {
        let mut tried: Vec<(usize, String)> = Vec::new();
        // The functions a version of which failed as before, or came back unchanged: the
        // next request points at the others (see `Rewrite::narrowed`).
        let mut ruled_out: Vec<usize> = Vec::new();
        // An answer of words only, to follow up on in the next try.
        let mut words_only: Option<String> = None;
        for _ in 0..TRIES {
            if cx.run_token().is_cancelled()
                || asked == ASKED_AT_MOST
                || out_of_time(cx, asking, &rewrite)?
            {
                return Ok(false);
            }
            asked += 1;
            // Stopped before the first step: the run's own loop says why.
            let asked_now = Asked {
                words_only: words_only.take(),
                ruled_out: &ruled_out,
            };
            let Some(answer) = ask_version(cx, asking, &rewrite, asked_now).await else {
                return Ok(false);
            };
            let mut judging = Judging {
                rewrite: &rewrite,
                tried: &mut tried,
                chain: &mut *chain,
                asked_about: &asked_about,
            };
            // Cancelled while its command ran: the file is back; the run ends.
            let Some(judged) = judge(cx, asking, &answer, &mut judging).await else {
                return Ok(false);
            };
            // Words without code, asked fresh: the next try asks for the code after them.
            if judged.outcome == CandidateOutcome::NoCode
                && !answer.followed_up
                && !answer.text.trim().is_empty()
            {
                words_only = Some(answer.text.clone());
            }
            let which = judged.version.as_ref().map(|version| version.which);
            let in_vain = matches!(
                judged.outcome,
                CandidateOutcome::Failed { .. }
                    | CandidateOutcome::Unchanged
                    | CandidateOutcome::Repeated
            );
            if let (Some(which), true) = (which, in_vain) {
                if !ruled_out.contains(&which) {
                    ruled_out.push(which);
                }
            }
            let passed = judged.outcome == CandidateOutcome::Passed;
            // The version stays: a change is made, so a `finish` may follow at once (the
            // strategies read it from its `candidate` event).
            // A request that failed, or a file that could not be put back: no more tries.
            let gave_up = matches!(judged.outcome, CandidateOutcome::NotTried { .. });
            let further = log_try(cx, asking, &rewrite, answer, judged)?;
            if passed || gave_up {
                return Ok(passed);
            }
            if let Some(next) = further {
                asked_about.extend(names(&next.0));
                chain.kept.push(next.1);
                rewrite = next.0;
                continue 'functions;
            }
        }
        return Ok(false);
    }
}

/// True, with a `not_tried` candidate logged, once half of the run's time is spent.
fn out_of_time(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    rewrite: &Rewrite,
) -> Result<bool, StoreError> {
    let now = Instant::now();
    if asking.until.is_none_or(|until| now < until) {
        return Ok(false);
    }
    let why = "half of the run's time (--max-time) is spent: the rest is the steps'";
    let candidate = Candidate {
        outcome: CandidateOutcome::NotTried { why: why.into() },
        ..asking.untried(rewrite, &rewrite.targets[0])
    };
    cx.log(Source::Environment, EventBody::Candidate(candidate))?;
    Ok(true)
}

/// Asks for one version of the function `rewrite` is about; after an answer of
/// `words_only`, that answer and the request for its code follow the question. `None`
/// when cancelled while waiting.
async fn ask_version(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    rewrite: &Rewrite,
    asked: Asked<'_>,
) -> Option<Answer> {
    let first = rewrite
        .narrowed(asked.ruled_out, asking.command)
        .unwrap_or_else(|| rewrite.text.clone());
    let mut messages = vec![ChatMessage::User {
        content: first.clone(),
    }];
    let mut question = first;
    if let Some(said) = asked.words_only {
        let follow_up = rewrite.follow_up(asked.ruled_out);
        question =
            format!("{question}\n\n[Answered without code:]\n{said}\n\n[Then asked:]\n{follow_up}");
        messages.push(ChatMessage::Assistant {
            content: said,
            tool_calls: Vec::new(),
        });
        messages.push(ChatMessage::User { content: follow_up });
    }
    let followed_up = messages.len() > 1;
    let apart = crate::apart::ask_apart(cx, asking.client, &messages).await?;
    Some(Answer {
        text: apart.text,
        usage: apart.usage,
        failed: apart.failed,
        question,
        followed_up,
    })
}

/// What came of `answer`: the version it holds, if any, put in place and run unless it
/// is none, unchanged, a repeat, or its file cannot be recorded first. `None` when
/// cancelled while the command ran (the file is put back first).
async fn judge(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    answer: &Answer,
    judging: &mut Judging<'_>,
) -> Option<Judged> {
    let rewrite = judging.rewrite;
    let version = wright_tools::failure::rewritten(&answer.text, &rewrite.targets);
    // The function the answer wrote; the one under test when it wrote none.
    let which = version.as_ref().map_or(0, |version| version.which);
    let target = rewrite.targets[which].clone();
    let just = |outcome| Judged {
        outcome,
        target: target.clone(),
        version: version.clone(),
        imports: None,
        further: None,
    };
    let Some(written) = &version else {
        return Some(just(match &answer.failed {
            Some(why) => CandidateOutcome::NotTried { why: why.clone() },
            None => CandidateOutcome::NoCode,
        }));
    };
    if let Some(why) = &answer.failed {
        return Some(just(CandidateOutcome::NotTried { why: why.clone() }));
    }
    if written.code == target.old {
        return Some(just(CandidateOutcome::Unchanged));
    }
    let attempt = (written.which, written.code.clone());
    if judging.tried.contains(&attempt) {
        return Some(just(CandidateOutcome::Repeated));
    }
    if !record_before(
        asking.record,
        asking.workspace,
        &mut judging.chain.before,
        &asking.untried(rewrite, &target),
    ) {
        let why = format!(
            "{} could not be recorded as it was first, so no version went in",
            target.path
        );
        return Some(just(CandidateOutcome::NotTried { why }));
    }
    judging.tried.push(attempt);
    let mut imports =
        wright_tools::failure::missing_imports(asking.workspace, &target.path, &written.imports);
    let tried = try_in_place(
        cx,
        asking,
        &target,
        &written.code,
        imports.as_ref(),
        judging.asked_about,
    )
    .await?;
    if let Some(added) = tried.added {
        imports = Some(match imports {
            Some((after, text)) => (after, format!("{text}\n{added}")),
            None => (0, added),
        });
    }
    Some(Judged {
        outcome: tried.outcome,
        imports,
        further: tried.further,
        ..just(CandidateOutcome::NoCode)
    })
}

/// Logs the try as a `candidate` event; when its version failed further on, the request
/// for the next function and the version kept meanwhile.
fn log_try(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    rewrite: &Rewrite,
    answer: Answer,
    judged: Judged,
) -> Result<Option<(Rewrite, Kept)>, StoreError> {
    let candidate = Candidate {
        answer: cx.mask(&answer.text),
        new_str: judged.version.map(|version| version.code),
        imports: judged.imports.map(|(_, text)| text),
        outcome: judged.outcome,
        prompt_tokens: answer.usage.prompt_tokens,
        completion_tokens: answer.usage.completion_tokens,
        cached_tokens: answer.usage.cached_tokens,
        question: answer.question,
        ..asking.untried(rewrite, &judged.target)
    };
    cx.log(Source::Environment, EventBody::Candidate(candidate))?;
    Ok(judged.further.map(|(next, edits)| {
        let event = asking.untried(rewrite, &judged.target);
        (next, Kept { event, edits })
    }))
}

/// Takes out the versions `kept` on the way to a pass that did not come, last first; one
/// that cannot be is logged as a `not_tried` candidate saying so.
async fn take_back(
    cx: &mut Context<'_>,
    editor: &dyn Tool,
    kept: &[Kept],
) -> Result<(), StoreError> {
    for kept in kept.iter().rev() {
        if let Some(could_not) = put_back(editor, &kept.event.path, kept.edits).await {
            let candidate = Candidate {
                outcome: could_not,
                ..kept.event.clone()
            };
            cx.log(Source::Environment, EventBody::Candidate(candidate))?;
            break;
        }
    }
    Ok(())
}

/// What a chain of tries left in place, to take out or settle when it ends.
#[derive(Default)]
struct Chain {
    /// The versions that failed further on, in order.
    kept: Vec<Kept>,
    /// Each file changed, as it was before (see `version_try`).
    before: Vec<Before>,
}

/// A version that failed further on, in place while the next function is tried: its
/// event (for a `not_tried` one if it cannot be taken out) and its edits of its file.
struct Kept {
    event: Candidate,
    edits: usize,
}

/// The functions a request may replace, as (path, name).
fn names(rewrite: &Rewrite) -> Vec<(String, String)> {
    rewrite
        .targets
        .iter()
        .map(|target| (target.path.clone(), target.name.clone()))
        .collect()
}

/// What every try of one `try_versions` shares: the call whose failure it answers, the
/// failing command, the sampling client, the `file_editor`, the workspace and the task,
/// where the files changed are recorded (see `version_try`), and when tries stop.
pub(super) struct Asking<'a> {
    call_id: &'a str,
    pub(super) command: &'a str,
    client: &'a wright_llm::Client,
    pub(super) editor: &'a dyn Tool,
    pub(super) workspace: &'a Workspace,
    pub(super) task: &'a str,
    record: &'a std::path::Path,
    until: Option<Instant>,
}

impl Asking<'_> {
    /// The event of a try at `target`, before any answer: what was asked, of what, where.
    fn untried(&self, rewrite: &Rewrite, target: &Target) -> Candidate {
        Candidate {
            call_id: self.call_id.to_string(),
            path: target.path.clone(),
            name: target.name.clone(),
            command: self.command.to_string(),
            question: rewrite.text.clone(),
            answer: String::new(),
            old_str: target.old.clone(),
            new_str: None,
            imports: None,
            outcome: CandidateOutcome::NotTried { why: String::new() },
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: None,
            destination: wright_llm::destination(&self.client.config().base_url),
            check: None,
            check_file: None,
        }
    }
}

/// One answer to a request for a version.
struct Answer {
    text: String,
    usage: wright_llm::TokenUsage,
    /// Why the request failed, when it did.
    failed: Option<String>,
    /// What was asked, as logged (with the follow-up, when there was one).
    question: String,
    /// The question followed up an answer of words only.
    followed_up: bool,
}

/// What the next request adds to the question: the answer of words only to follow up,
/// and the functions already tried in vain.
struct Asked<'a> {
    words_only: Option<String>,
    ruled_out: &'a [usize],
}

/// What `judge` reads and adds to while the tries of one function go on.
struct Judging<'a> {
    rewrite: &'a Rewrite,
    /// The versions put in place so far, as (target index, code): a repeat is not run.
    tried: &'a mut Vec<(usize, String)>,
    chain: &'a mut Chain,
    asked_about: &'a [(String, String)],
}

/// What came of one answer.
struct Judged {
    outcome: CandidateOutcome,
    /// The function it replaced (the one under test when it wrote none).
    target: Target,
    version: Option<wright_tools::failure::Version>,
    /// The import lines added, and the line they went after.
    imports: Option<(u64, String)>,
    further: Option<(Rewrite, usize)>,
}
