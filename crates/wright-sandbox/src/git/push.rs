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
use super::command::failed;
use super::command::HARDENED;
use super::remote::RemoteUrl;
use super::GitError;
use super::UserRepo;
use crate::run::finish;
use crate::run::RunLimits;
use std::process::Stdio;
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
            "-c",
            "protocol.allow=never",
            "-c",
            "protocol.https.allow=always",
            "-c",
            "protocol.http.allow=always",
            "-c",
            "protocol.ssh.allow=always",
            "-c",
            "protocol.git.allow=always",
            "push",
            "--quiet",
            "--no-verify",
            "--porcelain",
            "--",
            url.as_str(),
            &refspec,
        ];
        let mut command = base_command(self.top(), &self.empty_tree());
        command
            .args(HARDENED)
            .args(args)
            .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
            .env("GIT_PROXY_COMMAND", "")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let is_http = url.as_str().starts_with("https://") || url.as_str().starts_with("http://");
        if let (Some(token), true) = (token, is_http) {
            let basic = base64(format!("x-access-token:{token}").as_bytes());
            command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env(
                    "GIT_CONFIG_VALUE_0",
                    format!("Authorization: Basic {basic}"),
                );
        }
        let child = command
            .spawn()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        let captured = finish(
            child,
            Vec::new(),
            RunLimits {
                timeout: deadline,
                ..RunLimits::default()
            },
        )?;
        if !captured.success() {
            return Err(failed(&["push", url.as_str(), &refspec], &captured.said()));
        }
        Ok(())
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
