//! A second Docker engine on this machine, standing in for a remote host: its own mount
//! namespace (`unshare -m --propagation private`) in which the temporary directory (where
//! the tests' workspaces live) is an empty tmpfs, its own data root, exec root and pid
//! file, a bridge of its own and no iptables, listening on a Unix socket under a directory
//! of its own and on a loopback TCP port. It shares this machine's network namespace (the
//! TCP port must be reachable), so it must not touch `docker0`: with `--bridge=none`
//! dockerd deletes that interface at start, which breaks the first engine's default
//! network; it gets a bridge made for it instead, deleted when it stops. A bind mount of one of the server's files fails there:
//! only a real copy reaches it. Needs root (dockerd and unshare); `start` says why not
//! otherwise, and the caller skips loudly. Stopped (and its directory removed) on drop.

use std::net::TcpListener;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

pub struct SecondDockerd {
    child: Child,
    dir: PathBuf,
    port: u16,
    /// The bridge made for it (not `docker0`, the first engine's).
    bridge: String,
}

impl SecondDockerd {
    /// Starts the engine and waits (at most a minute) until it answers on its TCP port;
    /// `Err` says why it cannot run here.
    pub fn start() -> Result<Self, String> {
        Self::start_with(true)
    }

    /// The same engine, but seeing this machine's files (its temporary directory is not
    /// hidden): an engine on a Unix socket other than the usual one, where binds work.
    pub fn start_seeing_files() -> Result<Self, String> {
        Self::start_with(false)
    }

    fn start_with(hide: bool) -> Result<Self, String> {
        let uid = Command::new("id").arg("-u").output().map(|out| out.stdout);
        if !uid.is_ok_and(|uid| uid.trim_ascii() == b"0") {
            return Err("a second dockerd needs root".into());
        }
        for program in ["dockerd", "unshare", "docker", "ip"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .output()
                .is_ok_and(|out| out.status.success());
            if !found {
                return Err(format!("{program} is not installed"));
            }
        }
        let hidden = std::env::temp_dir();
        // Beside the hidden directory, never in it: the host must reach the socket.
        let base = if hidden == Path::new("/var/tmp") {
            "/run"
        } else {
            "/var/tmp"
        };
        let dir = PathBuf::from(base).join(format!(
            "wright-dockerd2-{}-{:x}",
            std::process::id(),
            clock_nanos()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?
            .port();
        let log = std::fs::File::create(dir.join("dockerd.log")).map_err(|e| e.to_string())?;
        let log_too = log.try_clone().map_err(|e| e.to_string())?;
        let d = dir.display();
        // `unshare` execs the shell, which execs dockerd: the child's pid is dockerd's.
        let hiding = if hide {
            format!("mount -t tmpfs wright-hidden {} && ", hidden.display())
        } else {
            String::new()
        };
        // At most 15 characters, as a network interface's name must be.
        let bridge = format!(
            "wrd2-{:x}",
            (std::process::id() ^ clock_nanos()) & 0xff_ffff
        );
        let made = Command::new("ip")
            .args(["link", "add", &bridge, "type", "bridge"])
            .output()
            .map_err(|e| format!("cannot run ip: {e}"))?;
        if !made.status.success() {
            return Err(format!(
                "cannot make a bridge for it: {}",
                String::from_utf8_lossy(&made.stderr).trim()
            ));
        }
        let script = format!(
            "{hiding}exec dockerd \
             --data-root {d}/data --exec-root {d}/exec --pidfile {d}/dockerd.pid \
             -H unix://{d}/docker.sock -H tcp://127.0.0.1:{port} \
             --bridge={bridge} --iptables=false --ip6tables=false --cgroup-parent=wright-dockerd2"
        );
        let child = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(log_too)
            .stderr(log)
            .spawn()
            .map_err(|e| {
                let _ = Command::new("ip").args(["link", "del", &bridge]).output();
                format!("cannot start unshare: {e}")
            })?;
        let mut engine = Self {
            child,
            dir,
            port,
            bridge,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if engine.answers() {
                return Ok(engine);
            }
            if let Ok(Some(status)) = engine.child.try_wait() {
                let log =
                    std::fs::read_to_string(engine.dir.join("dockerd.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                return Err(format!("dockerd exited ({status}): {}", tail.join(" | ")));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err("dockerd did not answer within a minute".into())
    }

    /// `tcp://127.0.0.1:PORT`.
    pub fn tcp(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// `unix://DIR/docker.sock`.
    pub fn unix(&self) -> String {
        format!("unix://{}", self.dir.join("docker.sock").display())
    }

    /// `docker -H tcp://… ARGS`, this engine's client.
    pub fn docker(&self, args: &[&str]) -> Command {
        let mut command = Command::new("docker");
        command.arg("-H").arg(self.tcp()).args(args);
        command
    }

    fn answers(&self) -> bool {
        self.docker(&["version", "--format", "{{.Server.Version}}"])
            .output()
            .is_ok_and(|out| out.status.success())
    }
}

impl Drop for SecondDockerd {
    fn drop(&mut self) {
        // SIGTERM first: dockerd stops its containers and its containerd.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Its mounts were in its own namespace, gone with it.
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge])
            .output();
    }
}

fn clock_nanos() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}
