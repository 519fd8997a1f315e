//! The network allow-list (`--allow-host`): the rules, where an allowed name may lead,
//! and the proxy outside the sandbox that enforces them for the sandbox's commands — the
//! sandbox itself keeps no route out (see `confine::relay` for the way in). The `fetch`
//! tool decides with the same rules (`AllowList`, `resolve`).

mod address;
mod allow;
mod http;
mod proxy;
mod tls;

pub use address::is_public;
pub use address::resolve;
pub use address::RESOLVE_VAR;
pub use allow::AllowList;
pub use allow::BadRule;
pub use allow::Grant;
pub use http::refusal_words;
pub use proxy::Journal;
pub use proxy::Proxy;

/// The port the proxy answers on inside the sandbox (its own loopback).
pub const PROXY_PORT: u16 = 3128;

/// The environment that sends a sandboxed program's HTTP(S) through the proxy.
pub fn proxy_environment() -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    let mut env: Vec<(String, String)> = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .iter()
    .map(|name| (name.to_string(), url.clone()))
    .collect();
    env.extend(["NO_PROXY", "no_proxy"].map(|name| (name.to_string(), String::new())));
    env
}
