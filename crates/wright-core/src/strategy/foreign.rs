//! Calls written for another tool (see `wright_tools::reroute` and `wright_tools::foreign`):
//! a shell command that is only the file editor's look at a file, or `finish` written as
//! a command, runs as that tool's call, with a note that says so; arguments a tool does
//! not take are an error naming where they belong, never dropped in silence. It keeps
//! no state: each decision is a function of the call.

use super::Call;
use super::Strategy;
use super::View;
use wright_tools::Rerouted;

#[derive(Debug, Default)]
pub struct ForeignCalls;

impl Strategy for ForeignCalls {
    fn name(&self) -> &'static str {
        "foreign-calls"
    }

    fn reroute(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<Rerouted> {
        view.tools().reroute(call.tool, call.arguments)
    }

    fn check_arguments(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<String> {
        let tool = view.tools().get(call.tool)?;
        view.tools()
            .foreign_arguments(tool.as_ref(), call.arguments)
    }
}
