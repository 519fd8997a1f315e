//! The environment variables wright reads, and the keys they set (at the environment's
//! precedence: above every file, below every flag).

use crate::Config;
use crate::Origin;

/// Variable → key, in rising precedence where two set the same key.
pub const VARIABLES: &[(&str, &str)] = &[
    ("OLLAMA_HOST", "base_url"),
    ("OPENAI_BASE_URL", "base_url"),
    ("OPENAI_MODEL", "model"),
    ("OPENAI_API_KEY", "api_key"),
    ("WRIGHT_PROFILE", "profile"),
    ("WRIGHT_DOCKER_IMAGE", "sandbox.docker_image"),
];

impl Config {
    /// Adds the variables `get` finds set (and not empty).
    pub fn with_environment(mut self, get: impl Fn(&str) -> Option<String>) -> Self {
        for (variable, key) in VARIABLES {
            if let Some(value) = get(variable).filter(|v| !v.is_empty()) {
                self = self.with(
                    key,
                    toml::Value::String(value),
                    Origin::Env((*variable).to_string()),
                );
            }
        }
        self
    }
}
