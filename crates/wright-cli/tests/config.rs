//! The configuration layer through the binary: files, environment and flags merged value
//! by value (`wright config show` says where each came from), a repository's file read at
//! the start commit and taken only once approved, profiles, the API key by variable name,
//! extra request fields, and unknown keys named with the closest one.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

impl Harness {
    /// Writes the user's own configuration file.
    pub fn user_config(&self, text: &str) -> std::path::PathBuf {
        let path = self.data.path().join("config/wright/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Commits `.wright/config.toml` with `text` in the repository.
    pub fn commit_repo_config(&self, text: &str) {
        let dir = self.repo().join(".wright");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
        git(self.repo(), &["add", "-A"]);
        git(self.repo(), &["commit", "-qm", "configuration"]);
    }

    pub fn conversations(&self) -> usize {
        std::fs::read_dir(self.data.path().join("wright/conversations"))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

/// A repository with one commit.
pub fn init_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "T"]);
    std::fs::write(dir.join("README"), "hello\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "start"]);
}

fn finishing() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo working"})),
        reply().call("finish", json!({"message": "done"})),
    ]
}

/// The `config show` line of `key`.
fn shown<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find(|line| line.split(" = ").next().map(str::trim) == Some(key))
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn precedence_is_file_then_repository_then_environment_then_flag() {
    let h = Harness::new();
    init_repo(h.repo());
    let server = ScriptedServer::start(finishing()).await.unwrap();
    let user = h.user_config(
        "version = 1\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"file-model\"\nmax_reply_tokens = 333\ntemperature = 0.1\n[run]\nmax_steps = 7\nidle_timeout = 300\ncondense_at = 0.5\n",
    );
    h.commit_repo_config(
        "max_reply_tokens = 222\ntemperature = 0.2\n[run]\nidle_timeout = 200\ncondense_at = 0.6\n",
    );
    let url = server.url();
    let env = [
        ("OPENAI_BASE_URL", url.as_str()),
        ("OPENAI_MODEL", "env-model"),
    ];
    let flags = [
        "--model",
        "test-model",
        "--temperature",
        "0.3",
        "--condense-at",
        "0.7",
    ];

    let mut args = vec!["config", "show"];
    args.extend_from_slice(&flags);
    let show = h.wright(&args, &env).await;
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = stdout(&show);
    let user = user.display().to_string();
    // The user's file alone.
    assert!(
        shown(&text, "run.max_steps").ends_with(&format!("= 7  # {user}:7")),
        "{text}"
    );
    // The repository's file over the user's.
    assert!(
        shown(&text, "max_reply_tokens").contains("= 222  # "),
        "{text}"
    );
    assert!(
        shown(&text, "max_reply_tokens").contains(".wright/config.toml at "),
        "{text}"
    );
    assert!(
        shown(&text, "run.idle_timeout").contains("= 200  #"),
        "{text}"
    );
    // The environment over both files.
    assert!(
        shown(&text, "base_url").ends_with("# environment OPENAI_BASE_URL"),
        "{text}"
    );
    // Flags over everything.
    assert!(
        shown(&text, "model").ends_with("= \"test-model\"  # flag --model"),
        "{text}"
    );
    assert!(
        shown(&text, "temperature").ends_with("= 0.3  # flag --temperature"),
        "{text}"
    );
    assert!(
        shown(&text, "run.condense_at").ends_with("= 0.7  # flag --condense-at"),
        "{text}"
    );
    // And wright's own defaults below all of them.
    assert!(
        shown(&text, "run.stream").ends_with("= true  # default"),
        "{text}"
    );

    // The run gets exactly those values.
    let mut args = vec!["run"];
    args.extend_from_slice(&flags);
    args.push("say hello");
    let run = h.wright(&args, &env).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let body = server.chat_requests()[0].json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 222);
    assert!(
        (body["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6,
        "{body}"
    );

    let path = h.wright(&["config", "path"], &[]).await;
    let listed = stdout(&path);
    assert!(
        listed.contains(&user) && listed.contains(".wright/config.toml in commit "),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_file_that_opens_the_network_waits_for_approval_of_its_content() {
    let h = Harness::new();
    init_repo(h.repo());
    let server = ScriptedServer::start([finishing(), finishing(), finishing()].concat())
        .await
        .unwrap();
    let url = server.url();
    h.commit_repo_config("[sandbox]\nnetwork = true\n");

    let refused = h.run(&url, "say hello", &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("sandbox.network") && said.contains("wright allow repo-config"),
        "{said}"
    );
    // Refused before anything was asked of the server or recorded.
    assert!(server.requests().is_empty());
    assert_eq!(h.conversations(), 0);

    let allowed = h.wright(&["allow", "repo-config"], &[]).await;
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert!(
        stdout(&allowed).contains("network = true"),
        "{}",
        stdout(&allowed)
    );
    let run = h.run(&url, "say hello", &[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        crate::common::sandbox_header(&run).contains("network: allowed"),
        "{}",
        stderr(&run)
    );

    // What a conversation reads is the file at the start commit: an uncommitted change
    // (here, one that would not even parse) is not it.
    std::fs::write(
        h.repo().join(".wright/config.toml"),
        "[sandbox]\nnetwrk = true\n",
    )
    .unwrap();
    let uncommitted = h.run(&url, "say hello", &[]).await;
    assert_eq!(
        uncommitted.status.code(),
        Some(0),
        "{}",
        stderr(&uncommitted)
    );
    assert!(crate::common::sandbox_header(&uncommitted).contains("network: allowed"));

    // A changed content asks again, whatever the change.
    h.commit_repo_config("[sandbox]\nnetwork = true\n# and one more line\n");
    let again = h.run(&url, "say hello", &[]).await;
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("sandbox.network"),
        "{}",
        stderr(&again)
    );
    // The flag takes it for one run, and records nothing.
    let once = h.run(&url, "say hello", &["--allow-repo-config"]).await;
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    assert!(crate::common::sandbox_header(&once).contains("network: allowed"));
    let listed = stdout(&h.wright(&["allow", "--list"], &[]).await);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.starts_with("repo-config"), "{listed}");
    let denied = h.wright(&["deny", "repo-config"], &[]).await;
    assert!(
        stdout(&denied).contains("no longer allowed"),
        "{}",
        stdout(&denied)
    );
    assert!(stdout(&h.wright(&["allow", "--list"], &[]).await).contains("nothing allowed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_file_may_not_name_secrets_or_egress_for_others() {
    let h = Harness::new();
    init_repo(h.repo());
    h.commit_repo_config("[repos.\"/elsewhere\"]\negress = \"any\"\n");
    let refused = h
        .run("http://127.0.0.1:9", "hello", &["--allow-repo-config"])
        .await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused)
            .contains("repos./elsewhere.egress, which only your own configuration file may set"),
        "{}",
        stderr(&refused)
    );
    h.commit_repo_config("api_key = \"sk-123\"\n");
    let key = h.run("http://127.0.0.1:9", "hello", &[]).await;
    assert_eq!(key.status.code(), Some(2));
    assert!(
        stderr(&key).contains("line 1: unknown key api_key (did you mean api_key_env?)"),
        "{}",
        stderr(&key)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_keys_name_the_file_the_line_and_the_closest_key() {
    let h = Harness::new();
    let path = h.user_config("version = 1\n\n[run]\nmax_step = 3\n");
    let output = h.run("http://127.0.0.1:9", "hello", &[]).await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output).trim(),
        format!(
            "wright: {} line 4: unknown key run.max_step (did you mean run.max_steps?)",
            path.display()
        )
    );
    h.user_config("version = 2\n");
    let version = h.run("http://127.0.0.1:9", "hello", &[]).await;
    assert!(
        stderr(&version).contains("reads configuration version 1"),
        "{}",
        stderr(&version)
    );
    h.user_config("[sandbox]\nmax_processes = \"many\"\n");
    let typed = h.run("http://127.0.0.1:9", "hello", &[]).await;
    assert!(
        stderr(&typed)
            .contains("line 2: sandbox.max_processes must be a whole number of at least 1"),
        "{}",
        stderr(&typed)
    );
    h.user_config("");
    let flag = h
        .run("http://127.0.0.1:9", "hello", &["--condense-at", "3"])
        .await;
    assert!(
        stderr(&flag)
            .contains("--condense-at 3.0 is out of range: it must be a number from 0.3 to 0.95"),
        "{}",
        stderr(&flag)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_choose_the_server_model_key_and_extra_fields() {
    let h = Harness::new();
    let one = ScriptedServer::start(finishing()).await.unwrap();
    let two = ScriptedServer::start(vec![]).await.unwrap();
    h.user_config(&format!(
        "profile = \"one\"\n[profiles.one]\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"ONE_KEY\"\nmax_reply_tokens = 99\n[profiles.one.extra]\ntop_k = 20\n[profiles.two]\nbase_url = \"{}\"\nmodel = \"missing-model\"\n",
        one.url(),
        two.url()
    ));
    let run = h
        .wright(&["run", "say hello"], &[("ONE_KEY", "sekrit")])
        .await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let request = &one.chat_requests()[0];
    assert_eq!(request.authorization.as_deref(), Some("Bearer sekrit"));
    assert_eq!(request.json()["top_k"], 20);
    assert_eq!(request.json()["max_tokens"], 99);

    let no_key = h.wright(&["run", "say hello"], &[]).await;
    assert_eq!(no_key.status.code(), Some(2));
    assert!(
        stderr(&no_key)
            .contains("says the API key is in the environment variable ONE_KEY, which is not set"),
        "{}",
        stderr(&no_key)
    );
    // The environment picks another profile; a flag beats the environment.
    let by_env = h
        .wright(&["run", "say hello"], &[("WRIGHT_PROFILE", "two")])
        .await;
    assert_eq!(by_env.status.code(), Some(2));
    assert!(
        stderr(&by_env).contains("missing-model"),
        "{}",
        stderr(&by_env)
    );
    let nope = h
        .wright(
            &["run", "--profile", "nope", "say hello"],
            &[("WRIGHT_PROFILE", "two")],
        )
        .await;
    assert!(
        stderr(&nope).contains("there is no profile 'nope'; defined: one, two"),
        "{}",
        stderr(&nope)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_one_profile_or_all_of_them() {
    let h = Harness::new();
    let one = ScriptedServer::start(vec![reply().text("1 2 3"), reply().text("1 2 3")])
        .await
        .unwrap();
    let two = ScriptedServer::start(vec![]).await.unwrap();
    h.user_config(&format!(
        "[profiles.one]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.two]\nbase_url = \"{}\"\nmodel = \"missing-model\"\n",
        one.url(),
        two.url()
    ));
    let single = h
        .wright(&["doctor", "--profile", "one", "--json"], &[])
        .await;
    assert_eq!(single.status.code(), Some(0), "{}", stdout(&single));
    let all = h.wright(&["doctor", "--all", "--json"], &[]).await;
    assert_eq!(all.status.code(), Some(1), "{}", stdout(&all));
    let report: serde_json::Value = serde_json::from_str(&stdout(&all)).unwrap();
    assert_eq!(report["profiles"]["one"]["ok"], true, "{report:#}");
    assert_eq!(report["profiles"]["one"]["model"], "test-model");
    assert_eq!(report["profiles"]["two"]["ok"], false, "{report:#}");
    assert!(
        report["profiles"]["two"]["problems"][0]
            .as_str()
            .unwrap()
            .contains("missing-model"),
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spending_cap_stops_the_run_cleanly() {
    let h = Harness::new();
    let script: Vec<_> = (0..10)
        .map(|n| reply().call("terminal", json!({"command": format!("echo step {n}")})))
        .collect();
    let server = ScriptedServer::start(script).await.unwrap();
    h.user_config(&format!(
        "[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"test-model\"\nprice_in = 1000.0\nprice_out = 1000.0\nmax_cost = 1.5\n",
        server.url()
    ));
    let output = h
        .wright(&["run", "--profile", "hosted", "count"], &[])
        .await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("the spending cap (1.5) was reached"),
        "{}",
        stdout(&output)
    );
    let costs: Vec<f64> = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            wright_protocol::EventBody::Usage(usage) => usage.cost,
            _ => None,
        })
        .collect();
    let spent: f64 = costs.iter().sum();
    assert!(
        spent >= 1.5 && spent - costs.last().unwrap() < 1.5,
        "{costs:?}"
    );
    assert!(server.remaining() > 0, "the cap stopped nothing");
}

/// In a terminal, wright shows the file and asks once; a yes is recorded, a no stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_terminal_the_repository_file_is_shown_and_asked_about_once() {
    let h = Harness::new();
    init_repo(h.repo());
    h.commit_repo_config("[sandbox]\nnetwork = true # for the package index\n");
    let server = ScriptedServer::start([finishing(), finishing()].concat())
        .await
        .unwrap();
    let command = |answer_label: &str| {
        h.terminal_command(
            &format!(
                "run --base-url {} --model test-model \"say hello\" </dev/tty",
                server.url()
            ),
            answer_label,
            30,
        )
    };
    let Some(terminal) = crate::common::terminal::Terminal::start("consent-no", &command("NO"))
    else {
        return;
    };
    let screen = terminal.wait_for("[y/N]");
    assert!(
        screen.contains("network = true # for the package index"),
        "{screen}"
    );
    // The key that needs the approval is named.
    assert!(
        screen.contains(
            "asks for sandbox.network, which a repository may only set with your approval"
        ),
        "{screen}"
    );
    terminal.send(&["n", "Enter"]);
    let screen = terminal.wait_for("NO-EXIT-");
    assert!(
        screen.contains("NO-EXIT-2") && screen.contains("was not approved"),
        "{screen}"
    );
    drop(terminal);
    assert!(server.requests().is_empty());

    let terminal =
        crate::common::terminal::Terminal::start("consent-yes", &command("YES")).unwrap();
    terminal.wait_for("[y/N]");
    terminal.send(&["y", "Enter"]);
    let screen = terminal.wait_for("YES-EXIT-");
    assert!(screen.contains("YES-EXIT-0"), "{screen}");
    drop(terminal);
    // Recorded: the next run does not ask.
    let again = h.run(&server.url(), "say hello", &[]).await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}
