//! wright as a library: a conversation on a repository, run to its end, its events read.
//!
//! ```text
//! cargo run -p wright-session --example fix_a_test -- REPO "the tests fail, fix it" \
//!     http://127.0.0.1:8080/v1 [MODEL]
//! ```
//!
//! The agent works in a clone of REPO on a new branch (`wright/ID`), every command in the
//! sandbox; the example prints each action as it happens, then where the change went
//! and the log's path (`wright show ID` reads it, `wright apply ID` takes the change).
//! `cargo test --examples` runs it against wright's scripted model server.

use anyhow::Context;
use wright_core::Observer;
use wright_llm::StreamDelta;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_session::working_copy::Outcome;

/// Writes `text` to stdout without the control sequences it may hold.
fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().write_all(wright_protocol::printable(text).as_bytes());
}

/// Prints what the agent does, one line an action.
struct Printer;

impl Observer for Printer {
    fn event(&mut self, event: &Event) {
        if let EventBody::Action {
            tool, arguments, ..
        } = &event.body
        {
            // The agent chose these: no terminal control sequence gets through.
            let line = format!("{:>3} {tool} {arguments}\n", event.id);
            print(&line);
        }
    }
    fn delta(&mut self, _delta: &StreamDelta) {}
}

/// The example itself: a few lines of the library.
async fn fix(
    repo: &str,
    task: &str,
    server: &str,
    model: Option<&str>,
    launcher: Option<wright_session::Launcher>,
) -> anyhow::Result<wright_session::Ran> {
    let mut builder = wright_session::Builder::new(repo)?.model_server(server);
    if let Some(model) = model {
        builder = builder.model(model);
    }
    // Default: `wright-launcher` (or `wright`) beside this program.
    if let Some(launcher) = launcher {
        builder = builder.launcher(launcher);
    }
    let ran = builder.run(task, &mut Printer).await?;
    let changes = match &ran.finished.changes {
        Outcome::Branch { branch, .. } => format!("on branch {branch}"),
        Outcome::NoChanges => "none".to_string(),
        Outcome::NotGit { .. } | Outcome::InPlace { .. } => "in the directory".to_string(),
        Outcome::Failed { reason, kept } => format!("{reason}; kept in {}", kept.display()),
    };
    print(&format!(
        "{:?} ({:?}); changes: {changes}; log: {}\n",
        ran.outcome.state,
        ran.outcome.stop,
        ran.finished.log_path.display()
    ));
    Ok(ran)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // This program is the sandbox's launcher too: it must look first.
    wright_session::launch_if_asked();
    let launcher = wright_session::Launcher::this_program()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [repo, task, server, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: fix_a_test REPO TASK SERVER_URL [MODEL]");
    };
    fix(
        repo,
        task,
        server,
        rest.first().map(String::as_str),
        Some(launcher),
    )
    .await
    .context("the run failed")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wright_protocol::AgentState;
    use wright_protocol::StopReason;
    use wright_testkit::failing_python_repo;
    use wright_testkit::git;
    use wright_testkit::reply;
    use wright_testkit::ScriptedServer;
    use wright_testkit::BUG;
    use wright_testkit::FIX;

    #[tokio::test]
    async fn the_example_fixes_a_test_on_a_branch() {
        let data = tempfile::tempdir().unwrap();
        std::env::set_var("XDG_DATA_HOME", data.path());
        std::env::set_var("XDG_CACHE_HOME", data.path().join("cache"));
        std::env::set_var("XDG_CONFIG_HOME", data.path().join("config"));
        let repo = tempfile::tempdir().unwrap();
        failing_python_repo(repo.path());
        let server = ScriptedServer::start(vec![
            reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
            ),
            reply().call("terminal", json!({"command": "python3 -m unittest"})),
            reply().call("finish", json!({"message": "fixed"})),
        ])
        .await
        .unwrap();
        let ran = super::fix(
            repo.path().to_str().unwrap(),
            "the tests fail, fix it",
            &server.url(),
            Some("test-model"),
            None,
        )
        .await
        .unwrap();
        assert_eq!(
            (ran.outcome.state, ran.outcome.stop),
            (AgentState::Finished, StopReason::Finished)
        );
        let branch = format!("wright/{}", ran.finished.id);
        let handed = git(repo.path(), &["show", &format!("{branch}:export.py")]);
        assert!(handed.contains(FIX), "{handed}");
        assert!(ran.finished.log_path.is_file());
    }
}
