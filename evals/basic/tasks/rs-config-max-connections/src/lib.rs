//! A database connection pool's settings.

pub mod config;
