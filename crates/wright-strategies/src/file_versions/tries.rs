//! The versions of `FileVersions`: each file the task is about asked for whole, put in
//! place and tried with the checks; the first one with which the tests and a check pass
//! stays. Failing that, the one that kept the tests passing and holds most of what the
//! task names (see `words`) stays, `unverified`.
//!
//! A task often spans two files (a default in a settings module, its override where the
//! program reads it): when no version of the first file stayed, the best one that kept
//! the tests passing is put back in place, `unverified`, before the next file is asked
//! for, and that file's versions are asked with it shown and tried on top of it; one
//! stays when a check passes with it, or when it brings in more of what the task names.
//!
//! Guarantees: every try is one `candidate` event, logged after its version was put in
//! place and tried (and put back unless it stays); a version kept unverified is logged
//! again as its own event, without asking again, after it was put back in place and the
//! tests passed with it once more.

use super::blocks::fenced;
use super::blocks::lang;
use super::blocks::with_ending;
use super::check::Check;
use super::imports;
use super::version_question;
use super::Asking;
use super::Keep;
use super::Placing;
use super::TRIES_PER_FILE;
use crate::first_look::version_try::record_before;
use wright_core::strategy::Context;
use wright_core::StoreError;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// Asks for versions of `files`, each whole, and tries each with `checks` until one
/// passes or the time is spent. With no check (none the model wrote failed before the
/// change), a version that keeps the tests passing and holds every needed new word of
/// the task stays at once, `unverified`; otherwise the one with which the tests passed and that
/// holds most of those words (the first of equals; one a check passed first) stays in
/// the end. A small model's check rejects a right version about as often as it catches
/// a wrong one, and leaving the file as it was leaves the model with the long view-edit
/// loop it cannot drive: a version kept unchecked is said as such to the model and in
/// the report, and the model goes on from it.
pub(super) async fn try_versions(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    files: &[(String, String)],
    checks: &[Check],
    placing: &mut Placing,
) -> Result<(), StoreError> {
    let mut best: Option<Best> = None;
    let cancelled = try_each(cx, asking, files, checks, placing, &mut best).await?;
    if let (false, Some(best)) = (cancelled, best) {
        keep_unverified(cx, asking, best.event, placing).await?;
    }
    Ok(())
}

/// The version put back that would stay if none does: the tests passed with it.
struct Best {
    event: Candidate,
    /// How it compares: what it holds of the task's new words, then whether a check
    /// passed with it.
    rank: (usize, bool),
}

/// Puts back `event`'s version, tried and taken out again since the tests passed with it
/// and nothing let it stay, and logs it `unverified` when the tests still pass with it;
/// its path and text when it stays.
async fn keep_unverified(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    mut event: Candidate,
    placing: &mut Placing,
) -> Result<Option<(String, String)>, StoreError> {
    let Some(new) = event.new_str.clone() else {
        return Ok(None);
    };
    event.question = String::new();
    event.answer = String::new();
    event.prompt_tokens = 0;
    event.completion_tokens = 0;
    event.cached_tokens = None;
    event.check = None;
    event.check_file = None;
    let path = event.path.clone();
    let old = event.old_str.clone();
    // Without checks: in place and `unverified` when the tests still pass, else back.
    let keep = Keep {
        coverage: asking.new_words.coverage(&[(&path, &new)]),
        unchecked: true,
    };
    event.outcome = asking
        .try_in_place(cx, (&path, &old, &new), &[], placing, &keep)
        .await?
        .outcome;
    let stays = event.outcome.stays();
    cx.log(Source::Environment, EventBody::Candidate(event))?;
    Ok(stays.then_some((path, new)))
}

/// The tries of `try_versions`: true when the run was cancelled meanwhile. The version
/// that would stay if none does goes in `best`.
async fn try_each(
    cx: &mut Context<'_>,
    asking: &Asking<'_>,
    files: &[(String, String)],
    checks: &[Check],
    placing: &mut Placing,
    best: &mut Option<Best>,
) -> Result<bool, StoreError> {
    // A version of an earlier file kept, unverified, for this one to go on from, with
    // what it holds of the task's new words.
    let mut earlier: Option<(String, String, usize)> = None;
    for (index, (path, text)) in files.iter().enumerate() {
        if index > 0 && earlier.is_none() {
            if let Some(kept) = best.take() {
                if cx.run_token().is_cancelled() {
                    return Ok(true);
                }
                let score = kept.rank.0;
                earlier = keep_unverified(cx, asking, kept.event, placing)
                    .await?
                    .map(|(path, new)| (path, new, score));
            }
        }
        for _ in 0..TRIES_PER_FILE {
            if cx.run_token().is_cancelled() {
                return Ok(true);
            }
            if asking.out_of_time(cx) {
                return Ok(false);
            }
            let shown = earlier.as_ref().map(|(p, t, _)| (p.as_str(), t.as_str()));
            let question = version_question(asking.task, path, text, shown);
            let Some(answer) = asking.ask(cx, &question).await else {
                return Ok(true);
            };
            let new = answer
                .failed
                .is_none()
                .then(|| fenced(&answer.text, &[lang(path)]))
                .flatten()
                .map(|code| with_ending(imports::with_std_imports(path, &code), text));
            let mut event = asking.event(path, text, &question, &answer, checks.first());
            event.new_str = new.clone();
            event.outcome = match (&answer.failed, &new) {
                (Some(why), _) => CandidateOutcome::NotTried { why: why.clone() },
                (None, None) => CandidateOutcome::NoCode,
                (None, Some(new)) if new == text => CandidateOutcome::Unchanged,
                (None, Some(new)) => {
                    if !record_before(
                        &placing.record,
                        &placing.workspace,
                        &mut placing.before,
                        &event,
                    ) {
                        CandidateOutcome::NotTried {
                            why: format!("{path} could not be recorded as it was first"),
                        }
                    } else {
                        let mut texts = vec![(path.as_str(), new.as_str())];
                        texts.extend(earlier.as_ref().map(|(p, t, _)| (p.as_str(), t.as_str())));
                        let coverage = asking.new_words.coverage(&texts);
                        // On top of a kept version, one stays that brings in more of
                        // what the task names; alone, one that holds it all, when there
                        // is no check to pass.
                        let unchecked = match &earlier {
                            Some((_, _, score)) => coverage.score > *score,
                            None => checks.is_empty() && coverage.missing_needed.is_empty(),
                        };
                        let score = coverage.score;
                        let keep = Keep {
                            coverage,
                            unchecked,
                        };
                        let tried = asking
                            .try_in_place(cx, (path, text, new), checks, placing, &keep)
                            .await?;
                        if let Some(by) = tried.by {
                            event.check = Some(by.text().to_string());
                            event.check_file = by.path().map(str::to_string);
                        }
                        // On top of a kept version, the first one still stays alone.
                        let rank = (score, tried.by.is_some());
                        if tried.tests_passed
                            && earlier.is_none()
                            && best.as_ref().is_none_or(|best| rank > best.rank)
                        {
                            *best = Some(Best {
                                event: event.clone(),
                                rank,
                            });
                        }
                        tried.outcome
                    }
                }
            };
            let stop = matches!(
                event.outcome,
                CandidateOutcome::Passed
                    | CandidateOutcome::Unverified
                    | CandidateOutcome::NotTried { .. }
            ) && answer.failed.is_none();
            if event.outcome.stays() {
                *best = None;
            }
            cx.log(Source::Environment, EventBody::Candidate(event))?;
            if stop {
                return Ok(false);
            }
        }
    }
    Ok(false)
}
