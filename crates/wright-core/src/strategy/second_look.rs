//! The second agent's look at a `finish` (see `crate::second_look`), and the user's `Stop`
//! hooks before it: both asked after the review and the reminder of a failed command, in
//! that order, each logged whatever it says. The reviewer's rounds are the process's, as
//! its conversation is.

use super::AtFinish;
use super::Context;
use super::Finish;
use super::Strategy;
use crate::second_look::Reviewer;
use crate::second_look::SecondLooks;
use crate::store::StoreError;
use std::sync::Arc;
use wright_protocol::EventBody;
use wright_protocol::SecondLook;
use wright_protocol::Source;

/// The reviewer's look at each `finish`; without a reviewer it says nothing.
#[derive(Default)]
pub struct SecondLookAtFinish {
    looks: Option<SecondLooks>,
}

impl SecondLookAtFinish {
    pub const NAME: &'static str = "second-look";

    /// `reviewer` looks at the change at each `finish`; its findings go back to the model
    /// at most `rounds` times.
    pub fn new(reviewer: Arc<dyn Reviewer>, rounds: u32) -> Self {
        Self {
            looks: Some(SecondLooks::new(reviewer, rounds)),
        }
    }

    /// Its last verdict, shown before the diff.
    pub fn last(&self) -> Option<&SecondLook> {
        self.looks.as_ref()?.last.as_ref()
    }
}

#[async_trait::async_trait]
impl Strategy for SecondLookAtFinish {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        _finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let Some(looks) = self.looks.as_mut() else {
            return Ok(AtFinish::Continue);
        };
        let reviewer = looks.reviewer.clone();
        let (task, cancel) = (cx.view().task(), cx.cancel_token());
        let said = reviewer.review(&task, cancel).await;
        let look = looks.record(said);
        cx.log(Source::Environment, EventBody::SecondLook(look.clone()))?;
        Ok(match look.sent_back {
            true => AtFinish::SendBack(crate::second_look::findings_for_the_writer(&look)),
            false => AtFinish::Continue,
        })
    }
}

/// The user's `Stop` hooks at a `finish` (see `teach`): the loop runs them, in their
/// place among the strategies.
pub(crate) struct StopHooks;

#[async_trait::async_trait]
impl Strategy for StopHooks {
    fn name(&self) -> &'static str {
        "stop-hooks"
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let refused = cx
            .conversation
            .stop_hooks(cx.observer, Some(&finish.call_id))
            .await?;
        Ok(match refused {
            Some(reason) => AtFinish::SendBack(format!("A hook refused the finish: {reason}. The task is not done yet: deal with that, then call finish again.")),
            None => AtFinish::Continue,
        })
    }
}
