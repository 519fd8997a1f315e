//! A real PostgreSQL server for one test: its own cluster in a temporary directory, made
//! by Debian's `initdb` and run by its `pg_ctl`, listening on 127.0.0.1 at a free port
//! (and on a socket in that directory, never the system's), with password authentication
//! for the role `wright`. Stopped (`immediate`) and removed when dropped.
//!
//! `initdb` refuses to run as root: when the test runs as root, the cluster's directory is
//! given to an unprivileged user (`nobody`, or `WRIGHT_TEST_PG_USER`) and the programs run
//! as that user through `runuser`; run as anyone else, they run as the caller. So the same
//! test binary works in the root pass and in the unprivileged pass of `.ci/run`.

use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

/// The password of the role `wright` in every test cluster.
pub const PASSWORD: &str = "wright-test-password";

/// One running test cluster.
pub struct Postgres {
    dir: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    run_as: Option<String>,
    port: u16,
}

impl Postgres {
    /// Starts a cluster, or `None` (said loudly on stderr) when PostgreSQL's server programs
    /// are not installed. Any other failure panics: a test must not pass by skipping.
    pub fn start() -> Option<Self> {
        let Some(bin) = server_bin() else {
            say(
                "\n!!!!!!!! PostgreSQL's initdb is not installed (apt-get install postgresql): this database test is SKIPPED !!!!!!!!\n",
            );
            return None;
        };
        let run_as = running_as_root()
            .then(|| std::env::var("WRIGHT_TEST_PG_USER").unwrap_or_else(|_| "nobody".to_string()));
        let dir = std::env::temp_dir().join(format!(
            "wright-pg-{}-{}",
            std::process::id(),
            next_serial()
        ));
        must(
            std::fs::create_dir_all(&dir),
            "create the cluster directory",
        );
        // Only the cluster's user (and root) go in.
        must(
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)),
            "chmod the cluster directory",
        );
        let data = dir.join("data");
        let password_file = dir.join("password");
        must(
            std::fs::write(&password_file, PASSWORD),
            "write the password file",
        );
        if let Some(user) = &run_as {
            let status = must(
                Command::new("chown")
                    .arg("-R")
                    .arg(format!("{user}:"))
                    .arg(&dir)
                    .status(),
                "run chown",
            );
            assert!(status.success(), "chown of {} to {user}", dir.display());
        }
        let mut cluster = Self {
            dir,
            data,
            bin,
            run_as,
            port: 0,
        };
        cluster.run(
            "initdb",
            &[
                "--no-sync",
                "--username=wright",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                &format!("--pwfile={}", password_file.display()),
                &format!("--pgdata={}", cluster.data.display()),
            ],
        );
        // A port found free may be taken before the server binds it: try a few.
        for _ in 0..5 {
            cluster.port = free_port();
            let options = format!(
                "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories={} -c fsync=off -c max_connections=200",
                cluster.port,
                cluster.dir.display()
            );
            let log = cluster.dir.join("log");
            let started = cluster.try_run(
                "pg_ctl",
                &[
                    "start",
                    "--wait",
                    "--silent",
                    &format!("--pgdata={}", cluster.data.display()),
                    &format!("--log={}", log.display()),
                    &format!("--options={options}"),
                ],
            );
            if started {
                return Some(cluster);
            }
            say(&format!(
                "PostgreSQL did not start on port {}: {}",
                cluster.port,
                std::fs::read_to_string(&log).unwrap_or_default()
            ));
        }
        panic!("PostgreSQL did not start in {}", cluster.dir.display());
    }

    /// The port it listens on, at 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A URL of the database `name` (see `create_database`), without the password (which
    /// is `PASSWORD`, given apart as a user must).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://wright@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates the database `name` (with `createdb`, as the cluster's user).
    pub fn create_database(&self, name: &str) {
        self.run(
            "createdb",
            &[
                "--host",
                &self.dir.display().to_string(),
                "--port",
                &self.port.to_string(),
                "--username=wright",
                name,
            ],
        );
    }

    fn run(&self, program: &str, args: &[&str]) {
        assert!(self.try_run(program, args), "{program} {args:?} failed");
    }

    fn try_run(&self, program: &str, args: &[&str]) -> bool {
        let path = self.bin.join(program);
        let mut command = match &self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.arg("-u").arg(user).arg("--").arg(&path);
                command
            }
            None => Command::new(&path),
        };
        // The socket in the cluster's own directory, trusted only for its user's tools.
        // Their chatter (initdb's) to nobody; their errors to the test's output.
        command
            .args(args)
            .env("PGPASSWORD", PASSWORD)
            .current_dir(&self.dir)
            .stdout(std::process::Stdio::null());
        match command.status() {
            Ok(status) => status.success(),
            Err(error) => panic!("cannot run {}: {error}", path.display()),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.try_run(
            "pg_ctl",
            &[
                "stop",
                "--mode=immediate",
                "--silent",
                &format!("--pgdata={}", self.data.display()),
            ],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest installed PostgreSQL's server programs (Debian's layout), or those named
/// by `WRIGHT_TEST_PG_BIN`.
fn server_bin() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("WRIGHT_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn running_as_root() -> bool {
    // `/proc/self` belongs to the process's effective user.
    Path::new("/proc/self")
        .metadata()
        .map(|meta| meta.uid() == 0)
        .unwrap_or(false)
}

fn free_port() -> u16 {
    let listener = must(std::net::TcpListener::bind("127.0.0.1:0"), "bind a port");
    must(listener.local_addr(), "read the bound port").port()
}

fn next_serial() -> u64 {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `result`'s value, or a panic naming what failed (this is test set-up).
fn must<T, E: std::fmt::Display>(result: Result<T, E>, what: &str) -> T {
    result.unwrap_or_else(|error| panic!("cannot {what}: {error}"))
}

/// A line on the test's stderr (the test's own output, shown when it fails).
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}
