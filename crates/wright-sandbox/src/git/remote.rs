//! A repository cloned from a URL a client gave (the server's "git URL" conversations):
//! the URL is checked to be a network address of a kind git fetches as data (https,
//! http, ssh, git), never a local path, `file://` or a transport that runs a program
//! (`ext::`, `fd::`), nor anything git could read as an option; the clone runs with the
//! host hardening (no hooks, no fsmonitor), an empty template, no submodules, no prompt,
//! and a deadline. What it fetches is data: nothing of it is run on the host.

use super::command::base_command;
use super::command::failed;
use super::command::HARDENED;
use super::GitError;
use super::Oid;
use super::UserRepo;
use crate::run::finish;
use crate::run::RunLimits;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

/// Why a URL is not cloned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    #[error("the repository URL is empty")]
    Empty,
    #[error("the repository URL {0} has a space or control character in it")]
    Unprintable(String),
    #[error("the repository URL {0} must be https://, http://, ssh:// or git:// (or user@host:path): local paths, file:// and other transports are refused")]
    Scheme(String),
    #[error("the repository URL {0} names no host")]
    NoHost(String),
}

/// A URL git may fetch from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl(String);

impl RemoteUrl {
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(UrlError::Empty);
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UrlError::Unprintable(text.to_string()));
        }
        let host_and_rest = ["https://", "http://", "ssh://", "git://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme));
        let host = match host_and_rest {
            Some(rest) => rest.split('/').next().unwrap_or(""),
            // scp-like `user@host:path`: git reads it as ssh only when no slash comes
            // before the colon; `host:path` without a user would be read the same way,
            // but is refused so that a Windows-like `c:path` or a local name never is.
            None => match text.split_once(':') {
                Some((before, _)) if before.contains('@') && !before.contains('/') => {
                    before.rsplit('@').next().unwrap_or("")
                }
                _ => return Err(UrlError::Scheme(text.to_string())),
            },
        };
        let host_name = host.rsplit('@').next().unwrap_or("");
        if host_name.is_empty() || host_name.starts_with('-') {
            return Err(UrlError::NoHost(text.to_string()));
        }
        Ok(Self(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl UserRepo {
    /// Clones `url` into `dest` (which must not exist), with `branch` (its default
    /// branch when none) checked out, in at most `deadline`. A branch that is not a
    /// plain branch name (`safe_branch_name`) is refused before git runs.
    pub fn clone_remote(
        url: &RemoteUrl,
        dest: &Path,
        branch: Option<&str>,
        deadline: Duration,
    ) -> Result<Self, GitError> {
        let parent = dest.parent().unwrap_or(Path::new("/"));
        let dest_text = dest.display().to_string();
        let branch_arg = match branch {
            None => None,
            Some(name) if safe_branch_name(name) => Some(format!("--branch={name}")),
            Some(name) => {
                return Err(GitError::Failed {
                    command: "clone".into(),
                    said: format!(
                        "'{}' is not a branch name wright clones",
                        name.escape_debug()
                    ),
                })
            }
        };
        let mut args = vec!["clone", "--quiet", "--no-recurse-submodules", "--template="];
        if let Some(branch) = &branch_arg {
            args.push(branch);
        }
        args.extend(["--", url.as_str(), &dest_text]);
        // A SHA-256 repository's checkout stops at the attributes: fails rather than
        // following them.
        run_against_remote(base_command(parent, &Oid::empty_tree()), &args, deadline)?;
        Ok(Self::at(dest))
    }

    /// The commit `branch` of `url` is at (`git ls-remote`), if the remote has it.
    pub fn remote_branch_tip(
        url: &RemoteUrl,
        branch: &str,
        deadline: Duration,
    ) -> Result<Option<String>, GitError> {
        if !safe_branch_name(branch) {
            return Err(GitError::Failed {
                command: "ls-remote".into(),
                said: format!(
                    "'{}' is not a branch name wright reads",
                    branch.escape_debug()
                ),
            });
        }
        let reference = format!("refs/heads/{branch}");
        let args = ["ls-remote", "--", url.as_str(), &reference];
        let printed = run_against_remote(
            base_command(&std::env::temp_dir(), &Oid::empty_tree()),
            &args,
            deadline,
        )?;
        Ok(String::from_utf8_lossy(&printed).lines().find_map(|line| {
            let (oid, name) = line.split_once('\t')?;
            (name == reference).then(|| oid.to_string())
        }))
    }
}

/// A branch name as a forge's event may name it, that git takes as nothing but a branch:
/// letters, digits and `._-/`, not starting with `-` or `/`, no `..`, `//` or `@{`, not
/// ending in `/`, `.` or `.lock` (within `git check-ref-format`'s rules), at most 200
/// bytes.
pub fn safe_branch_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("/.")
}

/// Runs host git with `args` against a remote named on its command line: the host
/// hardening, the network protocols alone (no `file://`, no `ext::`), ssh that never asks
/// (a host key or a password: it fails instead; both variables outrank the host's
/// `core.sshCommand` and `core.gitProxy`, and an empty proxy is none), no terminal, in at
/// most `deadline`.
pub(super) fn run_against_remote(
    mut command: Command,
    args: &[&str],
    deadline: Duration,
) -> Result<Vec<u8>, GitError> {
    const PROTOCOLS: [&str; 10] = [
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
    ];
    let child = command
        .args(HARDENED)
        .args(PROTOCOLS)
        .args(args)
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .env("GIT_PROXY_COMMAND", "")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
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
    match captured.success() {
        true => Ok(captured.stdout),
        false => Err(failed(args, &captured.said())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_branch_names_are_cloned() {
        for good in ["main", "release/1.2", "fix-it_now", "v1.0.x"] {
            assert!(safe_branch_name(good), "{good}");
        }
        for bad in [
            "",
            "-b",
            "--upload-pack=touch /tmp/x",
            "/abs",
            ".hidden",
            "a..b",
            "a//b",
            "a/.b",
            "end/",
            "end.",
            "x.lock",
            "a b",
            "a@{1}",
            "a:b",
            "a\nb",
            "ä",
        ] {
            assert!(!safe_branch_name(bad), "{bad}");
        }
        let refused = UserRepo::clone_remote(
            &RemoteUrl::parse("https://example.invalid/r.git").unwrap(),
            Path::new("/nonexistent/clone"),
            Some("--upload-pack=x"),
            Duration::from_secs(1),
        );
        assert!(matches!(refused, Err(GitError::Failed { .. })));
    }

    #[test]
    fn network_urls_pass_and_everything_else_is_refused() {
        for good in [
            "https://github.com/o/r.git",
            "http://127.0.0.1:8000/r.git",
            "ssh://git@host/r",
            "git://host/r",
            "git@github.com:o/r.git",
        ] {
            assert_eq!(RemoteUrl::parse(good).map(|u| u.0), Ok(good.to_string()));
        }
        for bad in [
            "/srv/repo",
            "./repo",
            "file:///srv/repo",
            "ext::sh -c touch% /tmp/x",
            "fd::3",
            "-uhack",
            "--upload-pack=touch /tmp/x",
            "host:path",
            "c:repo",
            "https://",
            "ssh://-oProxyCommand=x/r",
            "https://h/r\nx",
        ] {
            assert!(RemoteUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
