//! End-to-end tests of the `wright` binary against the scripted model server, real tools,
//! real files and real git repositories. One test binary keeps link time low.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

mod acp;
mod allow_host;
mod apply;
mod aside;
mod chat;
mod common;
mod condense;
mod config;
mod config_attacks;
mod confirm;
mod constrain;
mod context;
mod direct;
mod docker;
mod doctor;
mod e2e_fix;
mod egress;
mod engine;
mod eval;
mod failures;
mod fallback;
mod faults;
mod first_look;
mod fork;
mod history;
mod hooks;
mod host_attacks;
mod housekeeping;
mod input;
mod life;
mod lifecycle;
mod map;
mod mcp;
mod messages;
mod ollama;
mod outcomes;
mod parallel;
mod persistence;
mod quirks;
mod real_model;
mod review;
mod sandbox_attacks;
mod second_look;
mod secrets;
mod server;
mod small_models;
mod stuck;
mod teach;
mod text_mode;
mod tools;
mod ui;
mod uncommitted;
