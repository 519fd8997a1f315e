//! A real git remote on loopback that takes pushes: a bare repository served by `git
//! daemon --enable=receive-pack` (the server tests' dumb-HTTP server cannot receive a
//! push). Stopped when dropped.

use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;

pub struct GitRemote {
    child: Child,
    /// The bare repository.
    pub bare: PathBuf,
    pub port: u16,
}

impl GitRemote {
    /// Serves a bare clone of `source` (a repository) from `dir`, as `remote.git`.
    pub fn serve(source: &Path, dir: &Path) -> std::io::Result<Self> {
        let bare = dir.join("remote.git");
        let cloned = Command::new("git")
            .args(["clone", "-q", "--bare"])
            .arg(source)
            .arg(&bare)
            .status()?;
        if !cloned.success() {
            return Err(std::io::Error::other("git clone --bare failed"));
        }
        // A free port, released for the daemon (it binds at once after).
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new("git")
            .arg("daemon")
            .arg("--reuseaddr")
            .arg("--export-all")
            .arg("--enable=receive-pack")
            .arg("--listen=127.0.0.1")
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", dir.display()))
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let remote = Self { child, bare, port };
        // Ready once it answers.
        for _ in 0..100 {
            let answered = Command::new("git")
                .args(["ls-remote", &remote.url()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()?;
            if answered.success() {
                return Ok(remote);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Err(std::io::Error::other("git daemon did not answer"))
    }

    pub fn url(&self) -> String {
        format!("git://127.0.0.1:{}/remote.git", self.port)
    }

    /// The commit of `branch` in the bare repository, if it has it.
    pub fn tip(&self, branch: &str) -> Option<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.bare)
            .args([
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/heads/{branch}"),
            ])
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// The branches of the bare repository.
    pub fn branches(&self) -> Vec<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.bare)
            .args(["for-each-ref", "--format=%(refname:short)", "refs/heads"])
            .output();
        output
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `path` as `branch` has it.
    pub fn file(&self, branch: &str, path: &str) -> Option<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.bare)
            .args(["show", &format!("{branch}:{path}")])
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for GitRemote {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
