//! The launcher: `wright __sandbox-exec POLICY_JSON -- PROGRAM ARGS…`.
//! `wright __sandbox-exec POLICY_JSON --report` applies everything, then prints the
//! `Report` as JSON instead of running a program: how wright checks, before a run, that
//! confinement really works on this machine.
//! `wright __sandbox-exec POLICY_JSON --join PID -- PROGRAM ARGS…` runs the program in
//! the namespaces of the confined shell PID (see `join`), confined the same way.

use super::cgroup;
use super::files;
use super::join;
use super::limits;
use super::namespaces;
use super::policy::Level;
use super::policy::Policy;
use super::policy::Report;
use super::relay;
use super::syscalls;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The first argument that turns the `wright` binary into the launcher.
pub const SANDBOX_EXEC_ARG: &str = "__sandbox-exec";

/// Runs the launcher with the arguments after `__sandbox-exec`. Never returns: it execs
/// the program or exits (126 when confinement cannot be had, with the reason on stderr).
pub fn launcher_main(args: Vec<OsString>) -> ! {
    match confine_and_run(args) {
        Ok(never) => match never {},
        Err(reason) => {
            // Read by wright (or shown by it through its sanitizer), never by a terminal.
            #[allow(clippy::disallowed_macros)]
            {
                eprintln!("wright sandbox: {reason}");
            }
            std::process::exit(126);
        }
    }
}

enum Never {}

fn confine_and_run(args: Vec<OsString>) -> Result<Never, String> {
    let mut args = args.into_iter();
    let policy_json = args.next().ok_or("missing policy")?;
    let policy: Policy = serde_json::from_str::<Policy>(&policy_json.to_string_lossy())
        .map_err(|e| format!("bad policy: {e}"))?
        .without_grants_beneath_writable();
    let mut mode = args.next().ok_or("missing -- or --report")?;
    // `--mark VAR=TOKEN`: the variable that lets the PTY find the shell in a PID namespace.
    let mut mark = None;
    if mode == "--mark" {
        mark = args.next().map(|m| m.to_string_lossy().into_owned());
        mode = args.next().ok_or("missing -- after --mark")?;
    }
    // `--join PID`: into a running sandbox (the terminal's shell), confined as it is.
    if mode == "--join" {
        let pid = args
            .next()
            .and_then(|p| p.to_string_lossy().parse::<i32>().ok())
            .ok_or("--join needs a process id")?;
        if args.next().is_none_or(|dash| dash != "--") {
            return Err("expected -- after --join PID".into());
        }
        return join_and_run(&policy, pid, args);
    }
    let report_only = mode == "--report";
    if !report_only && mode != "--" {
        return Err(format!(
            "expected -- before the program, got {}",
            mode.to_string_lossy()
        ));
    }

    // The proxy's socket is on the host: connected before the namespaces hide it.
    let control = relay::connect(&policy)?;
    cgroup::join(&policy.cgroup_procs)?;
    let isolated = namespaces::isolate(&policy, mark.as_deref(), report_only)?;
    let proxied = control.is_some();
    if let Some(control) = control {
        if !isolated.own_root {
            return Err(format!(
                "the allowed hosts need a network namespace of the sandbox's own, and there is none here ({}); without one the allow-list cannot be enforced, so nothing runs: use --network (everything), or no --allow-host (no network)",
                isolated.words
            ));
        }
        relay::start(control, report_only)?;
    }
    let limits_words = format!(
        "{}; {}",
        limits::apply_rlimits(&policy, isolated.own_root)?,
        policy.cgroup_description
    );
    // Servers on the namespace's own loopback: only where there is such a namespace.
    let local_tcp = policy.local_tcp && isolated.own_root && !policy.network;
    if local_tcp && !proxied && !report_only {
        relay::loopback_up()?;
    }
    let prepared = files::prepare(&policy, isolated.own_root, local_tcp)?;
    // Without a root of its own the host's socket paths are there to connect to; in the
    // user's own tree, the sockets their programs make there (now or later) are.
    let no_unix_sockets = !isolated.own_root || policy.users_tree;
    let program = syscalls::program(policy.network, no_unix_sockets, proxied || local_tcp)?;
    let capabilities = limits::drop_capabilities()?;
    let (landlock, tcp_blocked) = files::enforce(prepared)?;
    syscalls::apply(&program)?;

    let report = Report {
        namespaces: isolated.words,
        landlock: format!(
            "{landlock}: read-write {}; read-only toolchains",
            policy
                .read_write
                .iter()
                .filter(|p| !p.starts_with("/dev"))
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        network: if policy.network {
            "allowed".into()
        } else if local_tcp && proxied {
            "allowed hosts only, through wright's proxy; TCP on the sandbox's own loopback for local servers (seccomp: TCP sockets only)".into()
        } else if local_tcp {
            "off but the sandbox's own loopback, for local servers (seccomp: TCP sockets only)"
                .into()
        } else if proxied && tcp_blocked {
            format!("allowed hosts only, through wright's proxy (own loopback; seccomp: TCP sockets only; Landlock: TCP connect to port {} only)", crate::egress::PROXY_PORT)
        } else if proxied {
            "allowed hosts only, through wright's proxy (own loopback; seccomp: TCP sockets only; this kernel's Landlock has no TCP rules)".into()
        } else if tcp_blocked {
            "off (seccomp: no IP sockets; Landlock: no TCP)".into()
        } else {
            "off (seccomp: no IP sockets)".into()
        },
        seccomp: if !no_unix_sockets {
            "io_uring, ptrace, process memory, keyrings and TIOCSTI refused".into()
        } else {
            "io_uring, ptrace, process memory, keyrings, TIOCSTI and Unix sockets (socketpair allowed) refused".into()
        },
        capabilities,
        limits: limits_words,
        level: Some(if isolated.own_root {
            Level::OwnRoot
        } else {
            Level::LandlockOnly
        }),
        network_allowed: policy.network,
        writable: policy
            .read_write
            .iter()
            .filter(|p| !p.starts_with("/dev"))
            .cloned()
            .collect(),
    };
    if report_only {
        #[allow(clippy::disallowed_macros)]
        {
            println!(
                "{}",
                serde_json::to_string(&report).map_err(|e| e.to_string())?
            );
        }
        std::process::exit(0);
    }
    exec(args)
}

fn exec(mut args: impl Iterator<Item = OsString>) -> Result<Never, String> {
    let program = args.next().ok_or("missing program")?;
    let error = std::process::Command::new(&program).args(args).exec();
    Err(format!("cannot run {}: {error}", program.to_string_lossy()))
}

/// Joins the shell PID's namespaces, then confines itself as the shell's launcher did
/// (the same policy: the same files, sockets and limits) and execs the program.
fn join_and_run(
    policy: &Policy,
    pid: i32,
    args: impl Iterator<Item = OsString>,
) -> Result<Never, String> {
    cgroup::join(&policy.cgroup_procs)?;
    join::enter(pid)?;
    // Joining a mount namespace leaves the process at its root.
    let cwd = policy
        .workspace
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("/"));
    std::env::set_current_dir(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let local_tcp = policy.local_tcp && !policy.network;
    limits::apply_rlimits(policy, true)?;
    let prepared = files::prepare(policy, true, local_tcp)?;
    let proxied = policy.proxy.is_some();
    let program = syscalls::program(policy.network, policy.users_tree, proxied || local_tcp)?;
    limits::drop_capabilities()?;
    files::enforce(prepared)?;
    syscalls::apply(&program)?;
    exec(args)
}
