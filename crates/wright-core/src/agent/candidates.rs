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

use super::*;
use wright_llm::ChatMessage;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;

/// Versions asked for at most, of one function: sampled, a small model's is right one
/// time in a few.
const TRIES: usize = 4;
/// Versions asked for at most in all, over the functions a failure moved through.
const ASKED_AT_MOST: usize = 12;
/// An answer's tokens: a sentence, then a function of up to 80 lines.
const CANDIDATE_TOKENS: u32 = 700;
/// Sampled, not greedy: the greedy answer is one answer, the same each time.
const CANDIDATE_TEMPERATURE: f32 = 0.7;

impl Conversation {
    /// Whether versions of the failing code are asked for and tried (see the module).
    pub fn try_candidates(&mut self, on: bool) {
        self.try_candidates = on;
    }

    /// Asks for versions of the function the failing output of `call_id` (a run of
    /// `command`) points at and tries each; true when one passed. A version with which the
    /// command fails further on, in a function not asked about yet, stays while versions of
    /// that one are asked for (a file of several stubs fails in the next one once the first
    /// is filled); unless the chain ends in a pass, every version kept on the way is taken
    /// out again. Nothing is asked when there is no such function, no workspace or no
    /// `file_editor`; only a failure to write the log is an `Err`.
    pub(super) async fn try_versions(
        &mut self,
        call_id: &str,
        output: &str,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Result<bool, StoreError> {
        let (Some(workspace), Some(editor)) =
            (&self.workspace, self.tools.get("file_editor").cloned())
        else {
            return Ok(false);
        };
        let Some(rewrite) =
            wright_tools::failure::rewrite(output, workspace, command, &self.task())
        else {
            return Ok(false);
        };
        let mut chain = Chain::default();
        let passed = self
            .try_chain(
                call_id,
                rewrite,
                command,
                editor.as_ref(),
                &mut chain,
                observer,
                cancel,
            )
            .await?;
        if !passed {
            self.take_back(editor.as_ref(), &chain.kept, observer)
                .await?;
        }
        if !chain.before.is_empty() {
            self.settled();
        }
        Ok(passed)
    }

    /// The tries of `try_versions`, function after function; the versions that failed
    /// further on and stay for now are pushed on `chain.kept`, the files changed as they
    /// were before on `chain.before` (see `in_place`).
    #[allow(clippy::too_many_arguments)]
    async fn try_chain(
        &mut self,
        call_id: &str,
        mut rewrite: wright_tools::failure::Rewrite,
        command: &str,
        editor: &dyn wright_tools::Tool,
        chain: &mut Chain,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Result<bool, StoreError> {
        let client = self
            .client
            .for_samples(CANDIDATE_TOKENS, CANDIDATE_TEMPERATURE);
        let path_of = |version: &Option<wright_tools::failure::Version>| {
            version.as_ref().map_or(0, |version| version.which)
        };
        // Every function asked about so far: the failure moving back to one is no progress.
        let mut asked_about: Vec<(String, String)> = names(&rewrite);
        let mut asked = 0;
        'functions: loop {
            let mut tried: Vec<(usize, String)> = Vec::new();
            // An answer of words only, to follow up on in the next try.
            let mut words_only: Option<String> = None;
            for _ in 0..TRIES {
                if cancel.is_cancelled() || asked == ASKED_AT_MOST {
                    return Ok(false);
                }
                if self
                    .versions_until
                    .is_some_and(|until| std::time::Instant::now() >= until)
                {
                    let why =
                        "half of the run's time (--max-time) is spent: the rest is the steps'";
                    let candidate = Candidate {
                        outcome: CandidateOutcome::NotTried { why: why.into() },
                        ..untried(call_id, &rewrite, &rewrite.targets[0], command, &client)
                    };
                    self.append(
                        observer,
                        Source::Environment,
                        EventBody::Candidate(candidate),
                    )?;
                    return Ok(false);
                }
                asked += 1;
                let mut messages = vec![ChatMessage::User {
                    content: rewrite.text.clone(),
                }];
                let mut question = rewrite.text.clone();
                if let Some(said) = words_only.take() {
                    let follow_up = rewrite.follow_up();
                    question = format!("{question}\n\n[Answered without code:]\n{said}\n\n[Then asked:]\n{follow_up}");
                    messages.push(ChatMessage::Assistant {
                        content: said,
                        tool_calls: Vec::new(),
                    });
                    messages.push(ChatMessage::User { content: follow_up });
                }
                let body = client.request_body(&messages, &[]);
                let mut ignore = |_: StreamDelta| {};
                let reply = tokio::select! {
                    reply = client.complete_body(body, "candidate", &mut ignore) => reply,
                    // Stopped before the first step: the run's own loop says why.
                    _ = cancel.cancelled() => return Ok(false),
                };
                let (answer, usage, failed) = match reply {
                    Ok(response) => (response.text, response.usage.unwrap_or_default(), None),
                    Err(err) => (String::new(), Default::default(), Some(err.to_string())),
                };
                self.add_to_totals(&usage);
                let version = wright_tools::failure::rewritten(&answer, &rewrite.targets);
                // The function the answer wrote; the one under test when it wrote none.
                let target = rewrite.targets[path_of(&version)].clone();
                let mut imports = None;
                let mut further = None;
                let outcome = match (&failed, &version) {
                    (Some(why), _) => CandidateOutcome::NotTried { why: why.clone() },
                    (None, None) => CandidateOutcome::NoCode,
                    (None, Some(version)) if version.code == target.old => {
                        CandidateOutcome::Unchanged
                    }
                    (None, Some(version))
                        if tried.contains(&(version.which, version.code.clone())) =>
                    {
                        CandidateOutcome::Repeated
                    }
                    (None, Some(_))
                        if !self.record_before(
                            &mut chain.before,
                            &untried(call_id, &rewrite, &target, command, &client),
                        ) =>
                    {
                        let why = format!(
                            "{} could not be recorded as it was first, so no version went in",
                            target.path
                        );
                        CandidateOutcome::NotTried { why }
                    }
                    (None, Some(version)) => {
                        tried.push((version.which, version.code.clone()));
                        imports = self.workspace.as_ref().and_then(|workspace| {
                            wright_tools::failure::missing_imports(
                                workspace,
                                &target.path,
                                &version.imports,
                            )
                        });
                        let tried = self.try_in_place(
                            editor,
                            &target,
                            &version.code,
                            imports.as_ref(),
                            command,
                            &asked_about,
                            observer,
                            cancel,
                        );
                        // Cancelled while its command ran: the file is back; the run ends.
                        let Some(tried) = tried.await else {
                            return Ok(false);
                        };
                        if let Some(added) = tried.added {
                            imports = Some(match imports {
                                Some((after, text)) => (after, format!("{text}\n{added}")),
                                None => (0, added),
                            });
                        }
                        further = tried.further;
                        tried.outcome
                    }
                };
                // Words without code, asked fresh: the next try asks for the code after them.
                let followed_up = messages.len() > 1;
                if outcome == CandidateOutcome::NoCode && !followed_up && !answer.trim().is_empty()
                {
                    words_only = Some(answer.clone());
                }
                let answer = match &self.masker {
                    Some(masker) => masker.mask(&answer),
                    None => answer,
                };
                let passed = outcome == CandidateOutcome::Passed;
                // The version stays: a change is made, so a `finish` may follow at once.
                self.acted |= passed;
                let gave_up = matches!(outcome, CandidateOutcome::NotTried { .. });
                let candidate = Candidate {
                    answer,
                    new_str: version.map(|version| version.code),
                    imports: imports.map(|(_, text)| text),
                    outcome,
                    prompt_tokens: usage.prompt_tokens,
                    completion_tokens: usage.completion_tokens,
                    cached_tokens: usage.cached_tokens,
                    question,
                    ..untried(call_id, &rewrite, &target, command, &client)
                };
                self.append(
                    observer,
                    Source::Environment,
                    EventBody::Candidate(candidate),
                )?;
                // A request that failed, or a file that could not be put back: no more tries.
                if passed || gave_up {
                    return Ok(passed);
                }
                if let Some((next, edits)) = further {
                    let event = untried(call_id, &rewrite, &target, command, &client);
                    chain.kept.push(Kept { event, edits });
                    asked_about.extend(names(&next));
                    rewrite = next;
                    continue 'functions;
                }
            }
            return Ok(false);
        }
    }

    /// Takes out the versions `kept` on the way to a pass that did not come, last first;
    /// one that cannot be is logged as a `not_tried` candidate saying so.
    async fn take_back(
        &mut self,
        editor: &dyn wright_tools::Tool,
        kept: &[Kept],
        observer: &mut dyn Observer,
    ) -> Result<(), StoreError> {
        for kept in kept.iter().rev() {
            if let Some(could_not) = put_back(editor, &kept.event.path, kept.edits).await {
                let candidate = Candidate {
                    outcome: could_not,
                    ..kept.event.clone()
                };
                self.append(
                    observer,
                    Source::Environment,
                    EventBody::Candidate(candidate),
                )?;
                break;
            }
        }
        Ok(())
    }

    /// Puts `new` in place of the function (and `imports`, the lines to add and the line
    /// they go after) and runs `command`: what came of it, with the import added when the
    /// run said the version lacked one (it is run again with it). A version with which the
    /// command fails in a function not in `asked_about` stays, with the request for that
    /// one (see `Tried::further`); otherwise, unless it passed, the file is put back.
    /// `None` when cancelled while the command ran (the file is put back first).
    #[allow(clippy::too_many_arguments)]
    async fn try_in_place(
        &self,
        editor: &dyn wright_tools::Tool,
        target: &wright_tools::failure::Target,
        new: &str,
        imports: Option<&(u64, String)>,
        command: &str,
        asked_about: &[(String, String)],
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Option<Tried> {
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
        let mut ran = self.run_in_root(command, observer, cancel).await;
        let mut added = None;
        // Failed on a module it uses and its file lacks: once more with that import.
        if let Some(import) = ran.as_ref().and_then(|(output, exit_code)| {
            let failed = *exit_code != Some(0);
            failed
                .then(|| self.import_it_lacks(output, target, new))
                .flatten()
        }) {
            if editor.run(&import.0).await.is_ok() {
                made += 1;
                added = Some(import.1);
                ran = self.run_in_root(command, observer, cancel).await;
            }
        }
        if matches!(ran, Some((_, Some(0)))) {
            return Some(Tried {
                added,
                ..Tried::just(CandidateOutcome::Passed)
            });
        }
        if let Some((output, Some(_))) = &ran {
            if let Some(next) = self.failing_further(output, command, asked_about) {
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

    /// The request for the function a failing run now points at, when that is one not
    /// asked about yet: the version before it took the failure further on.
    fn failing_further(
        &self,
        output: &str,
        command: &str,
        asked_about: &[(String, String)],
    ) -> Option<wright_tools::failure::Rewrite> {
        let workspace = self.workspace.as_ref()?;
        let next = wright_tools::failure::rewrite(output, workspace, command, &self.task())?;
        let first = &next.targets[0];
        let known = asked_about
            .iter()
            .any(|(path, name)| *path == first.path && *name == first.name);
        (!known).then_some(next)
    }

    /// The `insert` of the import a failing run of the version `new` says it lacks, and
    /// that import's line (see `wright_tools::failure::import_named_by`); `None` when the
    /// output names none or the file has it already.
    fn import_it_lacks(
        &self,
        output: &str,
        target: &wright_tools::failure::Target,
        new: &str,
    ) -> Option<(Value, String)> {
        let import = wright_tools::failure::import_named_by(output, &target.path, new)?;
        let workspace = self.workspace.as_ref()?;
        let (after, text) =
            wright_tools::failure::missing_imports(workspace, &target.path, &[import])?;
        let insert = serde_json::json!({
            "command": "insert",
            "path": target.path,
            "insert_line": after,
            "new_str": text,
        });
        Some((insert, text))
    }
}

/// What came of putting one version in place.
struct Tried {
    outcome: CandidateOutcome,
    /// The import added after the run said the version lacked it.
    added: Option<String>,
    /// It failed further on: the request for the function it fails in now, and how many
    /// edits of its file this version made (undone if the chain ends without a pass).
    further: Option<(wright_tools::failure::Rewrite, usize)>,
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

/// What a chain of tries left in place, to take out or settle when it ends.
#[derive(Default)]
struct Chain {
    /// The versions that failed further on, in order.
    kept: Vec<Kept>,
    /// Each file changed, as it was before (see `in_place`).
    before: Vec<super::in_place::Before>,
}

/// A version that failed further on, in place while the next function is tried: its
/// event (for a `not_tried` one if it cannot be taken out) and its edits of its file.
struct Kept {
    event: Candidate,
    edits: usize,
}

/// The functions a request may replace, as (path, name).
fn names(rewrite: &wright_tools::failure::Rewrite) -> Vec<(String, String)> {
    rewrite
        .targets
        .iter()
        .map(|target| (target.path.clone(), target.name.clone()))
        .collect()
}

/// The event of a try at `target`, before any answer: what was asked, of what, where.
fn untried(
    call_id: &str,
    rewrite: &wright_tools::failure::Rewrite,
    target: &wright_tools::failure::Target,
    command: &str,
    client: &wright_llm::Client,
) -> Candidate {
    Candidate {
        call_id: call_id.to_string(),
        path: target.path.clone(),
        name: target.name.clone(),
        command: command.to_string(),
        question: rewrite.text.clone(),
        answer: String::new(),
        old_str: target.old.clone(),
        new_str: None,
        imports: None,
        outcome: CandidateOutcome::NotTried { why: String::new() },
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: None,
        destination: wright_llm::destination(&client.config().base_url),
    }
}

/// Undoes the `made` last edits of `path`; `NotTried` with why when it could not.
async fn put_back(
    editor: &dyn wright_tools::Tool,
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
