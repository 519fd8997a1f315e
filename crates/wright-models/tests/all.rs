//! All of wright-models' integration tests, in one binary (one link on two cores): pulls
//! against a fake Hugging Face on 127.0.0.1, and the store's import, listing, removal
//! and lookup in temporary directories. No network.

// The fixtures in `support` are test code too: a broken fixture should stop the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pull;
mod store;
mod support;
