//! Proof, before the first command, that the container confines: a bash started the way
//! the terminal starts its shell (`docker exec`, through the same client) reads what the
//! kernel says about itself, and wright compares it with what it asked for. The report
//! gives the measured values, not the requested ones; a missing guarantee fails closed.

use super::engine::refused;
use super::Container;
use crate::confine::Level;
use crate::confine::Report;
use crate::mode::SandboxError;
use std::collections::HashMap;
use std::process::Command;
use std::process::Stdio;

/// Bash builtins only (the image may have nothing else): identity, capabilities,
/// no-new-privileges, seccomp, network interfaces, cgroup limits (v2, else v1), rlimits,
/// and the root filesystem's mount options (`ro`, whatever the user could write).
const PROBE: &str = r#"
while read -r k v _; do
  case $k in Uid:|Gid:|CapEff:|NoNewPrivs:|Seccomp:) echo "${k%:} $v";; esac
done < /proc/self/status
for n in /sys/class/net/*; do echo "net ${n##*/}"; done
m=; read -r m 2>/dev/null < /sys/fs/cgroup/memory.max || read -r m 2>/dev/null < /sys/fs/cgroup/memory/memory.limit_in_bytes; echo "memory $m"
p=; read -r p 2>/dev/null < /sys/fs/cgroup/pids.max || read -r p 2>/dev/null < /sys/fs/cgroup/pids/pids.max; echo "pids $p"
echo "fsize $(ulimit -f)"
echo "nofile $(ulimit -n)"
while read -r _ _ _ _ point options _; do
  [ "$point" = / ] && echo "rootfs ${options%%,*}"
done < /proc/self/mountinfo
if command -v git >/dev/null 2>&1; then echo "git yes"; else echo "git no"; fi
exit 0
"#;

pub(super) fn run(container: &Container) -> Result<Report, SandboxError> {
    let output = Command::new(&container.cli)
        .args(container.cli_prefix())
        .args(["exec", "-u", &container.user, "-w"])
        .arg(&container.workspace)
        .args([container.name.as_str(), "bash", "-c", PROBE])
        .env_clear()
        .envs(std::env::vars().filter(|(k, _)| k == "PATH" || k == "HOME"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| refused(format!("cannot run {}: {e}", container.cli.display())))?;
    if !output.status.success() {
        return Err(refused(format!(
            "a shell cannot run in the container from {} (the image needs bash): {} {}",
            container.image,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let seen = Seen::parse(&String::from_utf8_lossy(&output.stdout));
    verify(container, &seen)?;
    if container.needs_git && seen.one("git") != "yes" {
        return Err(refused(format!(
            "the image {} has no git, which wright needs in a git repository (it reads and commits the agent's changes with git inside the sandbox); pass --docker-image with an image that has bash and git (for example buildpack-deps:bookworm-scm, rust:1 or python:3.12)",
            container.image
        )));
    }
    let one = |key: &str| seen.one(key);

    let memory = match one("memory").parse::<u64>() {
        // cgroup v1 says "no limit" with a huge number.
        Ok(bytes) if bytes < 1 << 60 => format!("memory {} MiB", bytes >> 20),
        _ => "memory unlimited".into(),
    };
    let pids = match one("pids") {
        "" | "max" => "processes unlimited".to_string(),
        n => format!("{n} processes"),
    };
    let fsize = match one("fsize").parse::<u64>() {
        Ok(blocks) if blocks >= 1 << 20 => format!("files up to {} GiB", blocks >> 20),
        Ok(blocks) => format!("files up to {} MiB", blocks >> 10),
        Err(_) => "files of any size".into(),
    };
    let user = if container.user.starts_with("0:") {
        format!("user {} (root owns the workspace)", container.user)
    } else {
        format!("user {} (owner of the workspace)", container.user)
    };
    Ok(Report {
        namespaces: format!(
            "docker: container {} from {}, own pid/mount/ipc/uts namespaces, image read-only",
            container.name, container.image
        ),
        landlock: if container.copies() {
            format!(
                "read-write {} only (a copy, at the same path, on the engine at {}: sent in before each command, brought back after it); a private /tmp",
                container.workspace.display(),
                container.host
            )
        } else {
            format!(
                "read-write {} only (bind-mounted at the same path); private tmpfs /tmp",
                container.workspace.display()
            )
        },
        network: if container.network {
            "allowed (Docker's bridge network)".into()
        } else {
            "none (only loopback)".into()
        },
        seccomp: if one("Seccomp") == "2" && container.users_tree {
            "wright's seccomp profile for the user's own tree, an allow-list (Unix sockets refused, socketpair kept; namespaces, keyrings, io_uring, ptrace refused)".into()
        } else if one("Seccomp") == "2" {
            "Docker's default seccomp profile".into()
        } else {
            "no seccomp filter (the daemon runs without one)".into()
        },
        capabilities: format!("none (cap_drop ALL), no-new-privileges, {user}"),
        limits: format!("{memory}, {pids}, {fsize}, {} open files", one("nofile")),
        level: Some(Level::Docker),
        network_allowed: container.network,
        writable: vec![container.workspace.clone()],
    })
}

/// The probe's `KEY VALUE` lines.
struct Seen(HashMap<String, Vec<String>>);

impl Seen {
    fn parse(text: &str) -> Self {
        let mut seen: HashMap<String, Vec<String>> = HashMap::new();
        for line in text.lines() {
            if let Some((key, value)) = line.split_once(' ') {
                seen.entry(key.to_string())
                    .or_default()
                    .push(value.trim().to_string());
            }
        }
        Self(seen)
    }

    fn all(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    fn one(&self, key: &str) -> &str {
        self.all(key).first().map(String::as_str).unwrap_or("")
    }
}

/// Fails closed unless each guarantee holds inside the container.
fn verify(container: &Container, seen: &Seen) -> Result<(), SandboxError> {
    let one = |key: &str| seen.one(key);
    let broken = |what: String| {
        Err(refused(format!(
            "the container {} does not confine as asked: {what}",
            container.name
        )))
    };
    let (uid, gid) = container.user.split_once(':').unwrap_or(("", ""));
    if one("Uid") != uid || one("Gid") != gid {
        return broken(format!(
            "it runs as {}:{}, not {}",
            one("Uid"),
            one("Gid"),
            container.user
        ));
    }
    if one("CapEff").is_empty() || one("CapEff").chars().any(|c| c != '0') {
        return broken(format!("capabilities {} remain", one("CapEff")));
    }
    if one("NoNewPrivs") != "1" {
        return broken("no-new-privileges is off".into());
    }
    let interfaces = seen.all("net");
    if !container.network && interfaces.iter().any(|n| *n != "lo") {
        return broken(format!("it has network interfaces {interfaces:?}"));
    }
    if one("rootfs") != "ro" {
        return broken("its root filesystem is writable".into());
    }
    // The user's own tree: its sockets are refused only by the filter.
    if container.users_tree && one("Seccomp") != "2" {
        return broken(
            "it has no seccomp filter, which refuses Unix sockets in the user's own tree".into(),
        );
    }
    Ok(())
}
