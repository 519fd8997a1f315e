//! Which of a request's settings widen what a conversation's run reaches beyond the
//! server's own setup, and whether the caller may ask for that.
//!
//! What it guarantees: a user's key (`wright user add`, with `--database`) that asks for
//! another sandbox level than the server's, hosts beyond the server's, another model
//! server than the server's (the server itself connects to it, from the host) or an
//! external agent (a program of the admin's with hosts of its own) is refused with 403
//! `admin_only` naming the setting and what to do — before anything is created, queued
//! or run — unless the server's configuration lets users set it (`[server] users_may`).
//! The server key (the admin's, and every request of a server without users) may set
//! them all, as before.

use crate::api::Settings;
use crate::error::ApiError;

/// A setting that widens what a run reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widening {
    /// Another sandbox level than the server's (`none` the widest of all).
    Sandbox,
    /// Hosts the run's commands may reach beyond the server's own.
    AllowHosts,
    /// A model server the server connects to (from the host) other than its own.
    BaseUrl,
    /// An external agent: the admin's program, with the hosts of its table.
    Agent,
}

impl Widening {
    /// Its name in a request's `settings` and in `server.users_may`.
    pub fn name(self) -> &'static str {
        match self {
            Widening::Sandbox => "sandbox",
            Widening::AllowHosts => "allow_hosts",
            Widening::BaseUrl => "base_url",
            Widening::Agent => "agent",
        }
    }

    /// The one of that name (`server.users_may`'s words: the loader checked them).
    pub fn named(name: &str) -> Option<Self> {
        [
            Widening::Sandbox,
            Widening::AllowHosts,
            Widening::BaseUrl,
            Widening::Agent,
        ]
        .into_iter()
        .find(|widening| widening.name() == name)
    }
}

/// The server's own setup (what a conversation gets without settings), and what its
/// configuration lets users widen.
#[derive(Debug, Clone, Default)]
pub struct UserLimits {
    /// The server's sandbox level (`auto` when none is set).
    pub sandbox: Option<String>,
    /// The hosts the server's conversations may reach.
    pub allow_hosts: Vec<String>,
    /// The server's model server, when one is set.
    pub base_url: Option<String>,
    /// What `[server] users_may` lets users set all the same.
    pub users_may: Vec<Widening>,
}

impl UserLimits {
    /// The limits the server's merged configuration gives.
    pub fn of(config: &wright_config::Config) -> Self {
        let strings = |key: &str| -> Vec<String> {
            config
                .get(key)
                .and_then(|sourced| sourced.value.as_array())
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            sandbox: config.str("sandbox.level").map(str::to_string),
            allow_hosts: strings("sandbox.allow_hosts"),
            base_url: config.str("base_url").map(str::to_string),
            users_may: strings("server.users_may")
                .iter()
                .filter_map(|name| Widening::named(name))
                .collect(),
        }
    }

    /// What `settings` ask for beyond the server's own setup, with the value asked.
    pub fn widenings(&self, settings: &Settings) -> Vec<(Widening, String)> {
        let mut found = Vec::new();
        if let Some(level) = &settings.sandbox {
            let own = self.sandbox.as_deref().unwrap_or("auto");
            if level != own {
                found.push((
                    Widening::Sandbox,
                    format!("\"{level}\" (the server's: {own})"),
                ));
            }
        }
        if let Some(hosts) = &settings.allow_hosts {
            let beyond: Vec<&String> = hosts
                .iter()
                .filter(|host| !self.allow_hosts.contains(host))
                .collect();
            if !beyond.is_empty() {
                found.push((Widening::AllowHosts, format!("{beyond:?}")));
            }
        }
        if let Some(url) = &settings.base_url {
            let same = self
                .base_url
                .as_deref()
                .is_some_and(|own| own.trim_end_matches('/') == url.trim_end_matches('/'));
            if !same {
                found.push((Widening::BaseUrl, format!("\"{url}\"")));
            }
        }
        if let Some(agent) = &settings.agent {
            found.push((Widening::Agent, format!("\"{agent}\"")));
        }
        found
    }

    /// Refuses what a user's `settings` widen that the configuration does not let users
    /// set: the first such setting, named with its value and the way out.
    pub fn check_user(&self, settings: &Settings) -> Result<(), ApiError> {
        let refused = self
            .widenings(settings)
            .into_iter()
            .find(|(widening, _)| !self.users_may.contains(widening));
        match refused {
            None => Ok(()),
            Some((widening, asked)) => {
                let name = widening.name();
                Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    "admin_only",
                    format!(
                        "settings.{name} {asked} widens what the conversation reaches beyond the server's own setup, which a user's key may not do: leave settings.{name} out to get the server's, ask the admin to run it with the server key, or the admin lets users set it with `[server] users_may = [\"{name}\"]` in the server's configuration file"
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> UserLimits {
        UserLimits {
            sandbox: None,
            allow_hosts: vec!["pypi.org".into()],
            base_url: Some("http://127.0.0.1:8080/v1/".into()),
            users_may: vec![],
        }
    }

    #[test]
    fn the_servers_own_setup_is_no_widening_and_anything_beyond_it_is() {
        let own = Settings {
            sandbox: Some("auto".into()),
            allow_hosts: Some(vec!["pypi.org".into()]),
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            max_steps: Some(3),
            ..Settings::default()
        };
        assert!(limits().widenings(&own).is_empty());
        assert!(limits().check_user(&own).is_ok());
        let wide = Settings {
            sandbox: Some("none".into()),
            allow_hosts: Some(vec!["pypi.org".into(), "evil.test".into()]),
            base_url: Some("http://127.0.0.1:5432".into()),
            agent: Some("other".into()),
            ..Settings::default()
        };
        let names: Vec<&str> = limits()
            .widenings(&wide)
            .iter()
            .map(|(widening, _)| widening.name())
            .collect();
        assert_eq!(names, ["sandbox", "allow_hosts", "base_url", "agent"]);
        let refused = limits().check_user(&wide).unwrap_err();
        assert_eq!(refused.code, "admin_only");
        assert!(
            refused.message.contains("settings.sandbox"),
            "{}",
            refused.message
        );
        assert!(refused.message.contains("users_may"), "{}", refused.message);
    }

    #[test]
    fn what_the_configuration_lets_users_set_passes() {
        let mut lenient = limits();
        lenient.users_may = vec![Widening::Sandbox, Widening::AllowHosts];
        let asked = Settings {
            sandbox: Some("none".into()),
            allow_hosts: Some(vec!["evil.test".into()]),
            ..Settings::default()
        };
        assert!(lenient.check_user(&asked).is_ok());
        let more = Settings {
            agent: Some("other".into()),
            ..asked
        };
        let refused = lenient.check_user(&more).unwrap_err();
        assert!(
            refused.message.contains("settings.agent"),
            "{}",
            refused.message
        );
    }
}
