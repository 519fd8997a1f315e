//! Routing rules a user can read: which profile a conversation starts on when none is
//! named by hand. In order: a profile named by hand (`--profile`, `WRIGHT_PROFILE`); the
//! large-repository rule (`route.large_repo_files = N` with `route.large_repo = P`: a
//! repository of at least N files goes to P); the command's rule (`route.run`,
//! `route.chat`); the `profile` key. The choice and its reason are returned typed, for the
//! log and the header.

use crate::Config;
use crate::Origin;
use wright_protocol::Route;
use wright_protocol::RouteReason;

/// Which command a conversation is started by, for `route.run` and `route.chat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteCommand {
    Run,
    Chat,
}

impl RouteCommand {
    fn key(self) -> &'static str {
        match self {
            RouteCommand::Run => "route.run",
            RouteCommand::Chat => "route.chat",
        }
    }
}

impl Config {
    /// The file count the large-repository rule needs, when one is set: the caller
    /// counts files only then.
    pub fn large_repo_files(&self) -> Option<u64> {
        self.uint("route.large_repo_files")
            .filter(|_| self.get("route.large_repo").is_some())
    }

    /// Applies the routing rules (before the profile is resolved): `files` is the
    /// repository's file count (`None` when not counted), counted up to the rule's
    /// threshold at least.
    pub fn route(&mut self, command: Option<RouteCommand>, files: Option<u64>) -> Option<Route> {
        let chosen = self.get("profile").cloned();
        let by_hand = chosen
            .as_ref()
            .is_some_and(|c| matches!(c.origin, Origin::Flag(_) | Origin::Env(_)));
        if by_hand {
            let chosen = chosen?;
            return Some(Route {
                profile: chosen.value.as_str()?.to_string(),
                reason: RouteReason::ByHand,
                why: format!("named by hand ({})", chosen.origin),
            });
        }
        if let (Some(threshold), Some(files)) = (self.large_repo_files(), files) {
            if files >= threshold {
                let rule = self.get("route.large_repo")?.clone();
                let profile = rule.value.as_str()?.to_string();
                self.values.insert("profile".into(), rule);
                return Some(Route {
                    profile,
                    reason: RouteReason::LargeRepository,
                    why: format!(
                        "the repository has {files} files or more, route.large_repo_files = {threshold}"
                    ),
                });
            }
        }
        if let Some(command) = command {
            if let Some(rule) = self.get(command.key()).cloned() {
                let profile = rule.value.as_str()?.to_string();
                self.values.insert("profile".into(), rule);
                return Some(Route {
                    why: format!("{} = \"{profile}\"", command.key()),
                    profile,
                    reason: RouteReason::Command,
                });
            }
        }
        let chosen = chosen?;
        Some(Route {
            profile: chosen.value.as_str()?.to_string(),
            reason: RouteReason::Default,
            why: format!("the profile key ({})", chosen.origin),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::default()
            .with_repo_file(
                "profile = \"local\"\n[route]\nrun = \"mid\"\nlarge_repo_files = 100\nlarge_repo = \"hosted\"\n[profiles.local]\nmodel = \"a\"\n[profiles.mid]\nmodel = \"b\"\n[profiles.hosted]\nmodel = \"c\"\n",
                "r",
                true,
            )
            .unwrap()
    }

    #[test]
    fn rules_apply_in_order_and_by_hand_beats_them_all() {
        let mut large = config();
        let route = large.route(Some(RouteCommand::Run), Some(150)).unwrap();
        assert_eq!(
            (route.profile.as_str(), route.reason),
            ("hosted", RouteReason::LargeRepository)
        );
        assert_eq!(large.resolve_profile().unwrap().str("model"), Some("c"));
        let mut small = config();
        let route = small.route(Some(RouteCommand::Run), Some(99)).unwrap();
        assert_eq!(
            (route.profile.as_str(), route.reason),
            ("mid", RouteReason::Command)
        );
        let mut chat = config();
        let route = chat.route(Some(RouteCommand::Chat), Some(1)).unwrap();
        assert_eq!(
            (route.profile.as_str(), route.reason),
            ("local", RouteReason::Default)
        );
        let mut named = config().with(
            "profile",
            toml::Value::String("local".into()),
            Origin::Flag("--profile".into()),
        );
        let route = named.route(Some(RouteCommand::Run), Some(1000)).unwrap();
        assert_eq!(
            (route.profile.as_str(), route.reason),
            ("local", RouteReason::ByHand)
        );
    }
}
