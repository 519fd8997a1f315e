//! The check of one attempt, in a process of its own (`wright eval-check`, hidden): the
//! commit the run handed over is checked out into a fresh directory and the task's check
//! runs there inside the sandbox. Its own process because ending a sandbox kills every
//! child of the process that made it (what the agent's commands left orphaned comes to
//! it): in `wright eval` itself that would kill the other attempts running beside it.

use super::runner::tail;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use serde::Deserialize;
use serde::Serialize;
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;
use wright_sandbox::RunLimits;
use wright_session::sandbox_setup::Placement;
use wright_session::sandbox_setup::SandboxSetup;
use wright_tools::shell_quote;

/// What to check, given on stdin as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckSpec {
    /// The attempt's repository (wright made it; the run's branch is in it).
    pub repo: PathBuf,
    /// The commit to check.
    pub tip: String,
    /// The directory to check it out in (must not exist yet).
    pub dir: PathBuf,
    /// The suite's files of the task, for the protected paths.
    pub files: PathBuf,
    pub protect: Vec<String>,
    pub check: String,
    pub timeout_secs: u64,
    pub sandbox: Option<String>,
    pub profile: Option<String>,
}

/// What the check did, printed on stdout as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub code: Option<i32>,
    pub timed_out: bool,
    pub passed: bool,
    /// The last lines of its output.
    pub output: String,
}

/// No arguments: the spec comes on stdin.
#[derive(Args)]
pub struct EvalCheckArgs {}

/// `wright eval-check`: reads a `CheckSpec` on stdin, prints a `CheckOutcome`.
pub fn eval_check(_args: EvalCheckArgs) -> Result<u8> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the check's spec")?;
    let spec: CheckSpec = serde_json::from_str(&text).context("the check's spec is not valid")?;
    let outcome = run(&spec)?;
    say!("{}", serde_json::to_string(&outcome)?);
    Ok(0)
}

fn run(spec: &CheckSpec) -> Result<CheckOutcome> {
    let common = crate::settings::CommonArgs {
        profile: spec.profile.clone(),
        sandbox: spec.sandbox.clone(),
        ..Default::default()
    };
    let settings = crate::settings::SessionSettings::resolve(&common, None)?;
    let tip = Oid::parse(&spec.tip).context("the commit to check is not an object id")?;
    let repo = UserRepo::at(&spec.repo);
    repo.clone_shared(&spec.dir)?;
    let mut read_only = repo.git_dirs()?;
    read_only.push(spec.files.clone());
    let placement = Placement {
        writable: spec.dir.clone(),
        read_only,
        protected: wright_sandbox::Protected::new(),
        needs_git: true,
        users_tree: false,
    };
    let name = format!("eval-check-{}", wright_core::new_conversation_id());
    let setup = SandboxSetup::new(
        settings.sandbox_mode()?,
        settings.sandbox_options(),
        &placement,
        &name,
        &wright_session::Launcher::this_program()?,
        &wright_session::Grants::none(),
    )
    .context("cannot make the sandbox for the check")?;
    AgentRepo::new(&setup.sandbox, &setup.env, &spec.dir)
        .check_out_new_branch("wright-eval-check", &tip)
        .context("cannot check out the run's result")?;
    let captured = setup
        .sandbox
        .capture(
            &spec.dir,
            &setup.env,
            "bash",
            &["-c", &script(spec)],
            b"",
            RunLimits {
                timeout: Duration::from_secs(spec.timeout_secs),
                max_stdout: 1 << 20,
                max_stderr: 1 << 20,
            },
        )
        .context("cannot run the check")?;
    let _ = setup.stop_leftovers();
    Ok(CheckOutcome {
        code: captured.code,
        timed_out: captured.timed_out,
        passed: captured.success(),
        output: tail(&captured),
    })
}

/// The protected files put back as the suite has them (in the sandbox: no link the agent
/// made is followed out), then the check.
fn script(spec: &CheckSpec) -> String {
    let mut script = String::from("set -e\n");
    for path in &spec.protect {
        script.push_str(&format!(
            "rm -rf -- {target}\nmkdir -p -- \"$(dirname -- {target})\"\ncp -R -- {source} {target}\n",
            target = shell_quote(path),
            source = shell_quote(&spec.files.join(path).display().to_string()),
        ));
    }
    script.push_str("set +e\n");
    script.push_str(&spec.check);
    script.push('\n');
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_are_quoted_and_put_back_before_the_check() {
        let spec = CheckSpec {
            repo: "/r".into(),
            tip: String::new(),
            dir: "/d".into(),
            files: "/suite/it's".into(),
            protect: vec!["tests/a b.rs".into()],
            check: "cargo test".into(),
            timeout_secs: 1,
            sandbox: None,
            profile: None,
        };
        let script = script(&spec);
        assert!(
            script.contains("cp -R -- '/suite/it'\\''s/tests/a b.rs' 'tests/a b.rs'\n"),
            "{script}"
        );
        assert!(script.ends_with("set +e\ncargo test\n"), "{script}");
    }
}
