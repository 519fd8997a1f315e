//! The agent's process: started inside the conversation's sandbox, in its clone, with
//! the sandbox's scrubbed environment, its table's `env`, its program granted read-only,
//! and a home of its own kept across its runs (so that a resume can load its session).

use anyhow::Context;
use anyhow::Result;
use std::path::PathBuf;
use wright_config::agents::AgentConfig;
use wright_session::Session;

/// Starts the agent's process in the sandbox, in the clone.
pub(super) fn start(session: &Session, agent: &AgentConfig) -> Result<tokio::process::Child> {
    let setup = &session.tools.setup;
    let cwd = session.tools.workspace.root();
    let mut env = setup.env.clone();
    // Its home is kept across its runs (the conversation's own, beneath wright's data
    // directory), so that what it saves of its sessions is there when a resume loads
    // one. Where the sandbox cannot grow (a Docker container), the private one it had.
    let home = agent_home(&session.id)?;
    let sandbox = match setup.sandbox.with_read_write(std::slice::from_ref(&home)) {
        Some(sandbox) => {
            env.retain(|(k, _)| k != "HOME");
            env.push(("HOME".into(), home.display().to_string()));
            sandbox
        }
        None => setup.sandbox.clone(),
    };
    env.extend(agent.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let (program, args) = agent
        .command
        .split_first()
        .context("the agent's command is empty")?;
    // Its program, readable (read-only) inside the sandbox, as an MCP server's is.
    // A Docker container's mounts are fixed: there the program is the image's, by name.
    let granted = which(program, &env).and_then(|path| {
        sandbox
            .with_read_only(std::slice::from_ref(&path))
            .map(|(sandbox, _)| (sandbox, path))
    });
    let (sandbox, program) = match granted {
        Some((sandbox, path)) => (sandbox, path.display().to_string()),
        None => (sandbox, program.clone()),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command: tokio::process::Command = sandbox
        .command(cwd, &env, &program, &args)
        .with_context(|| format!("cannot start the agent {}", agent.name))?
        .into();
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    command
        .spawn()
        .with_context(|| format!("cannot start the agent {} ({program})", agent.name))
}

/// The home the agent of conversation `id` keeps across its runs, made (owner only)
/// when missing. A link there is not followed: the directory must be a directory.
fn agent_home(id: &str) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let home = wright_session::stored::agent_home_dir(id);
    if !home.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&home)
            .with_context(|| format!("cannot make the agent's home {}", home.display()))?;
    }
    let meta = home
        .symlink_metadata()
        .with_context(|| format!("cannot read {}", home.display()))?;
    if !meta.is_dir() {
        anyhow::bail!("the agent's home {} is not a directory", home.display());
    }
    Ok(home)
}

/// `program` as the agent's `PATH` finds it (a name with a `/` as it is).
fn which(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v)?;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}
