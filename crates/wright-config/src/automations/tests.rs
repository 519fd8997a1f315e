use super::*;

const GOOD: &str = r#"
[automations.fix-issues]
on = "webhook"
forge = "github"
secret_env = "HOOK_SECRET"
repository = "https://github.com/o/r.git"
task = "Fix issue {issue.number}: {issue.title}\n\n{issue.body}"
label = "wright"
max_steps = 30

[automations.fix-issues.result]
push = true
pull_request = true
token_secret = "GITHUB_TOKEN"
api_repository = "o/r"

[automations.nightly]
on = "schedule"
schedule = "0 3 * * *"
timezone = "+01:00"
repository = "/srv/repo"
task = "run the tests"
when_busy = "skip"
"#;

#[test]
fn a_webhook_and_a_schedule_load_typed() {
    let loaded = parse(GOOD, "c.toml").unwrap();
    assert_eq!(loaded.len(), 2);
    let fix = &loaded[0];
    assert_eq!(fix.name, "fix-issues");
    assert_eq!(
        fix.trigger,
        Trigger::Webhook {
            forge: Forge::Github,
            secret_env: "HOOK_SECRET".into()
        }
    );
    assert_eq!(fix.label.as_deref(), Some("wright"));
    assert_eq!(fix.authors, Association::TRUSTED.to_vec());
    assert_eq!(fix.max_steps, Some(30));
    assert_eq!(fix.max_running, 1);
    assert_eq!(fix.when_busy, WhenBusy::Queue);
    assert!(fix.result.push && fix.result.pull_request);
    assert_eq!(fix.result.api_url, GITHUB_API);
    assert_eq!(fix.result.base, "main");
    let nightly = &loaded[1];
    assert_eq!(
        nightly.trigger,
        Trigger::Schedule {
            cron: "0 3 * * *".into(),
            timezone: "+01:00".into(),
            missed: Missed::RunOnce
        }
    );
    assert_eq!(nightly.when_busy, WhenBusy::Skip);
    assert!(!nightly.result.push);
}

fn refused(text: &str) -> String {
    parse(text, "c.toml").unwrap_err().to_string()
}

#[test]
fn wrong_definitions_are_refused_with_the_line_and_why() {
    let base = "[automations.a]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\n";
    assert_eq!(
        refused(&format!("{base}task = \"x\"\nlabl = \"y\"\n")),
        "c.toml line 7: unknown key automations.a.labl (did you mean automations.a.label?)"
    );
    assert_eq!(
            refused(&format!("{base}task = \"{{issue.titel}}\"\n")),
            "c.toml line 6: automation 'a': the task names {issue.titel}, which no event has; it may name {issue.title}, {issue.body}, {issue.number}, {issue.url}, {sender}, {repository}"
        );
    assert!(
        refused(&format!("{base}\n")).contains("task is missing"),
        "no task"
    );
    assert!(refused(
            "[automations.a]\non = \"webhook\"\nrepository = \"/r\"\ntask = \"t\"\nforge = \"github\"\n"
        )
        .contains("secret_env is missing"));
    assert!(refused(&format!(
        "{base}task = \"t\"\n[automations.a.result]\npull_request = true\n"
    ))
    .contains("needs result.push = true"));
    assert!(refused(&format!(
        "{base}task = \"t\"\n[automations.a.result]\npush = true\npull_request = true\n"
    ))
    .contains("api_repository"));
    assert!(refused(
            "[automations.a]\non = \"schedule\"\nschedule = \"* * *\"\nrepository = \"/r\"\ntask = \"t\"\n"
        )
        .contains("has 3 fields"));
    assert!(refused(
            "[automations.a]\non = \"schedule\"\nschedule = \"* * * * *\"\ntimezone = \"Mars/Olympus\"\nrepository = \"/r\"\ntask = \"t\"\n"
        )
        .contains("timezone 'Mars/Olympus'"));
    assert!(
        refused(&format!("{base}task = \"t\"\nauthors = [\"anyone\"]\n"))
            .contains("'anyone' is not an author association")
    );
    assert!(refused(
            "[automations.a]\non = \"schedule\"\nschedule = \"* * * * *\"\nrepository = \"/r\"\ntask = \"{issue.body}\"\n"
        )
        .contains("a schedule has no event"));
    assert!(refused(
            "[automations.a]\non = \"webhook\"\nforge = \"gitlab\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\ntask = \"t\"\n[automations.a.result]\npush = true\npull_request = true\napi_repository = \"o/r\"\n"
        )
        .contains("GitHub's API only"));
    assert!(refused("[automations.a]\non = \"hourly\"\n")
        .contains("automations.a.on must be one of webhook, schedule"));
    assert!(refused(
            "[automations.a]\non = \"schedule\"\nschedule = \"* * * * *\"\nrepository = \"/r\"\ntask = \"t\"\n[automations.a.result]\npush = true\n"
        )
        .contains("needs the repository as a URL"));
}

#[test]
fn a_repository_file_may_not_define_automations() {
    let err = crate::Config::default()
        .with_repo_file(GOOD, ".wright/config.toml", true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("only your own configuration file may set"),
        "{err}"
    );
}

#[test]
fn offsets_and_fields() {
    assert_eq!(fixed_offset_seconds("+02:00"), Some(7200));
    assert_eq!(fixed_offset_seconds("-05:30"), Some(-19800));
    assert_eq!(fixed_offset_seconds("UTC"), Some(0));
    assert_eq!(fixed_offset_seconds("Europe/Paris"), None);
    assert_eq!(
        template_fields("a {issue.title} b {sender}"),
        vec!["issue.title".to_string(), "sender".to_string()]
    );
}
