//! The tools' edge cases, through the same `Tool::run` the agent calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod file_editor;
mod terminal;
