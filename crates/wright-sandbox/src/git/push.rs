//! Pushing a branch of wright's own copy of a repository (the clone the server made from
//! a URL, whose configuration wright wrote, never the agent's clone) to that URL, for an
//! automation's result.
//!
//! What it guarantees: git runs with the host hardening (`command`), pushes to the URL
//! given (never a remote or `pushurl` read from any configuration), runs no hook
//! (`--no-verify`, and hooks point at /dev/null), asks for nothing (no terminal prompt,
//! ssh in batch mode, no credential helper of the user's), and the token, when there is
//! one, reaches git through its environment (`GIT_CONFIG_*`), never its arguments, which
//! any local user may read.

use super::command::base_command;
use super::remote::run_against_remote;
use super::remote::RemoteUrl;
use super::GitError;
use super::UserRepo;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::time::Duration;

impl UserRepo {
    /// Pushes the local branch `branch` to `url` as `remote_branch`, replacing what the
    /// remote branch held (it is wright's branch for this automation), in at most
    /// `deadline`. `token`: sent as HTTP basic authentication (`x-access-token:TOKEN`,
    /// what GitHub, Gitea and GitLab take for a token) on an http(s) URL.
    pub fn push_branch(
        &self,
        url: &RemoteUrl,
        branch: &str,
        remote_branch: &str,
        token: Option<&str>,
        deadline: Duration,
    ) -> Result<(), GitError> {
        for name in [branch, remote_branch] {
            if name.starts_with('-') || name.contains(':') || name.contains("..") || name.is_empty()
            {
                return Err(GitError::Failed {
                    command: "push".into(),
                    said: format!("'{name}' is not a branch name wright pushes"),
                });
            }
        }
        let refspec = format!("+refs/heads/{branch}:refs/heads/{remote_branch}");
        let args = [
            "-c",
            "credential.helper=",
            "push",
            "--quiet",
            "--no-verify",
            "--porcelain",
            "--",
            url.as_str(),
            &refspec,
        ];
        let mut command = base_command(self.top(), &self.empty_tree());
        let is_http = url.as_str().starts_with("https://") || url.as_str().starts_with("http://");
        if let (Some(token), true) = (token, is_http) {
            let basic = STANDARD.encode(format!("x-access-token:{token}"));
            command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env(
                    "GIT_CONFIG_VALUE_0",
                    format!("Authorization: Basic {basic}"),
                );
        }
        run_against_remote(command, &args, deadline).map(drop)
    }
}
