use super::*;
use pretty_assertions::assert_eq;

#[test]
fn a_flag_meets_its_keys_range() {
    let err = |key: &str, value: toml::Value, flag: &str| {
        Config::check_flag(key, &value, flag)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("run.max_steps", toml::Value::Integer(0), "--max-steps"),
        "--max-steps 0 is out of range: it must be a whole number of at least 1"
    );
    assert_eq!(
        err("temperature", toml::Value::Float(9.0), "--temperature"),
        "--temperature 9.0 is out of range: it must be a number from 0 to 2"
    );
    assert_eq!(
            err("sandbox.level", toml::Value::String("jail".into()), "--sandbox"),
            "--sandbox 'jail' is out of range: it must be one of auto, landlock, namespaces, docker, none"
        );
    assert!(
        Config::check_flag("run.condense_at", &toml::Value::Float(0.5), "--condense-at").is_ok()
    );
}

fn user(text: &str) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let config = Config::default().with_user_file(&path).unwrap();
    (dir, config)
}

#[test]
fn precedence_is_file_repo_env_flag() {
    let (_dir, config) =
        user("[run]\nmax_steps = 10\nmax_tokens = 300\nmax_time = 9\nidle_timeout = 20\n");
    // A repository may lower limits on its own; raising one needs approval.
    let raising = config
        .clone()
        .with_repo_file("[run]\nmax_steps = 11\n", ".wright/config.toml", false)
        .unwrap_err();
    assert!(
        matches!(raising, ConfigError::NeedsApproval { .. }),
        "{raising}"
    );
    let config = config
        .with_repo_file(
            "[run]\nmax_tokens = 200\nmax_time = 6\nidle_timeout = 8\n",
            ".wright/config.toml",
            false,
        )
        .unwrap()
        .with(
            "run.max_time",
            toml::Value::Integer(7),
            Origin::Env("X".into()),
        )
        .with(
            "run.idle_timeout",
            toml::Value::Integer(9),
            Origin::Env("Y".into()),
        )
        .with(
            "run.idle_timeout",
            toml::Value::Integer(10),
            Origin::Flag("--idle-timeout".into()),
        );
    assert_eq!(config.uint("run.max_steps"), Some(10));
    assert_eq!(config.uint("run.max_tokens"), Some(200));
    assert_eq!(config.uint("run.max_time"), Some(7));
    assert_eq!(config.uint("run.idle_timeout"), Some(10));
    assert!(matches!(
        config.get("run.max_steps").unwrap().origin,
        Origin::UserFile { line: 2, .. }
    ));
    assert!(matches!(
        config.get("run.max_tokens").unwrap().origin,
        Origin::RepoFile { line: 2, .. }
    ));
    // A lower source never overrides a higher one, whatever the order of adding.
    let config = config.with(
        "run.idle_timeout",
        toml::Value::Integer(1),
        Origin::Env("Z".into()),
    );
    assert_eq!(config.uint("run.idle_timeout"), Some(10));
}

#[test]
fn a_repository_file_needs_approval_for_what_weakens() {
    let weakening = "[sandbox]\nnetwork = true\n";
    let err = Config::default()
        .with_repo_file(weakening, "repo/.wright/config.toml", false)
        .unwrap_err();
    assert!(err.to_string().contains("sandbox.network"), "{err}");
    assert!(Config::default()
        .with_repo_file(weakening, "r", true)
        .is_ok());
    let hosts = "[profiles.x]\nbase_url = \"https://evil.example/v1\"\n";
    assert!(Config::repo_file_needs_approval(hosts, "r").unwrap());
    assert!(!Config::repo_file_needs_approval("egress = \"local_only\"\n", "r").unwrap());
    assert!(Config::repo_file_needs_approval("egress = \"any\"\n", "r").unwrap());
    assert_eq!(
        Config::repo_file_asks_for("map = \"off\"\negress = \"any\"\n", "r").unwrap(),
        Some("egress".to_string())
    );
    let err = Config::default()
        .with_repo_file("[repos.\"/x\"]\negress = \"any\"\n", "r", true)
        .unwrap_err();
    assert!(matches!(err, ConfigError::UserOnly { .. }), "{err}");
}

#[test]
fn the_chosen_profile_gives_its_values_at_its_precedence() {
    let (_dir, config) = user(
            "profile = \"local\"\n[profiles.local]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"qwen\"\n[profiles.hosted]\nbase_url = \"https://api.example/v1\"\nmodel = \"big\"\napi_key_env = \"EXAMPLE_KEY\"\n",
        );
    let by_file = config.clone().resolve_profile().unwrap();
    assert_eq!(by_file.str("model"), Some("qwen"));
    // The environment beats a profile a file chose…
    let env = config
        .clone()
        .with(
            "model",
            toml::Value::String("env-model".into()),
            Origin::Env("OPENAI_MODEL".into()),
        )
        .resolve_profile()
        .unwrap();
    assert_eq!(env.str("model"), Some("env-model"));
    // …and a profile chosen on the command line beats the environment.
    let flag = config
        .clone()
        .with(
            "model",
            toml::Value::String("env-model".into()),
            Origin::Env("OPENAI_MODEL".into()),
        )
        .with(
            "profile",
            toml::Value::String("hosted".into()),
            Origin::Flag("--profile".into()),
        )
        .resolve_profile()
        .unwrap();
    assert_eq!(flag.str("model"), Some("big"));
    assert_eq!(flag.str("api_key_env"), Some("EXAMPLE_KEY"));
    let missing = config
        .with(
            "profile",
            toml::Value::String("nope".into()),
            Origin::Flag("--profile".into()),
        )
        .resolve_profile()
        .unwrap_err()
        .to_string();
    assert_eq!(
        missing,
        "there is no profile 'nope'; defined: hosted, local"
    );
}
