//! Calls written for another tool (see `reroute` and `arguments` below):
//! a shell command that is only the file editor's look at a file, or `finish` written as
//! a command, runs as that tool's call, with a note that says so; arguments a tool does
//! not take are an error naming where they belong, never dropped in silence. It keeps
//! no state: each decision is a function of the call.

mod arguments;
mod reroute;

use wright_core::strategy::Call;
use wright_core::strategy::Rerouted;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;

#[derive(Debug, Default)]
pub struct ForeignCalls;

impl Strategy for ForeignCalls {
    fn name(&self) -> &'static str {
        "foreign-calls"
    }

    fn reroute(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<Rerouted> {
        reroute::reroute(view.tools(), call.tool, call.arguments)
    }

    fn check_arguments(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<String> {
        let tool = view.tools().get(call.tool)?;
        arguments::foreign_arguments(view.tools(), tool.as_ref(), call.arguments)
    }
}
