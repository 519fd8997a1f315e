//! An edit of the code that failed (text not found, …) while wright's own check passes is
//! told that the failure it was after is fixed. After a version wright kept, the 1.5B went
//! on with the edit it had planned against text that was no longer there, viewed the
//! file, tried again, until it was stuck (6 runs of 9). It keeps no state: the check's
//! verdict is read from the log.

use wright_core::strategy::Call;
use wright_core::strategy::Ran;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;

#[derive(Debug, Default)]
pub struct FixedNote;

impl Strategy for FixedNote {
    fn name(&self) -> &'static str {
        "fixed-note"
    }

    fn annotate(&mut self, view: &View<'_>, call: &Call<'_>, ran: Ran) -> Option<String> {
        if ran != Ran::Refused || !crate::retest::edits_code(call.tool, call.arguments) {
            return None;
        }
        crate::retest::check_passes_note(view).map(|passes| format!("[{passes}]"))
    }
}
