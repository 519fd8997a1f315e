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
    assert!(!fix.result.comment);
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
            "c.toml line 6: automation 'a': the task names {issue.titel}, which event = \"issue\" does not fill; it may name {issue.title}, {issue.body}, {issue.number}, {issue.url}, {sender}, {repository}"
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
    let gitlab = "[automations.a]\non = \"webhook\"\nforge = \"gitlab\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\ntask = \"t\"\n[automations.a.result]\npush = true\npull_request = true\ncomment = true\napi_repository = \"o/r\"\n";
    assert!(refused(gitlab).contains("on GitLab or Gitea needs result.api_url"));
    let loaded = parse(
        &format!("{gitlab}api_url = \"https://gitlab.example.com/api/v4\"\n"),
        "c.toml",
    )
    .unwrap();
    assert!(loaded[0].result.pull_request && loaded[0].result.comment);
    assert!(refused(&format!(
        "{base}task = \"t\"\n[automations.a.result]\ncomment = true\n"
    ))
    .contains("result.comment needs result.api_repository"));
    assert!(refused(
            "[automations.a]\non = \"schedule\"\nschedule = \"* * * * *\"\nrepository = \"/r\"\ntask = \"t\"\n[automations.a.result]\ncomment = true\n"
        )
        .contains("has no issue to comment on"));
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
    assert!(valid_timezone("Europe/Paris") && valid_timezone("America/New_York"));
    assert!(!valid_timezone("Mars/Olympus") && !valid_timezone("+25:00"));
    assert_eq!(
        template_fields("a {issue.title} b {sender}"),
        vec!["issue.title".to_string(), "sender".to_string()]
    );
}

#[test]
fn events_other_than_issues_have_their_own_fields_and_filters() {
    let base = "[automations.a]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\n";
    let fix = parse(
        &format!("{base}event = \"check_run\"\nbranch = \"release\"\ntask = \"Fix {{check_run.name}} on {{branch}}: {{check_run.log}}\"\n"),
        "c.toml",
    )
    .unwrap()
    .remove(0);
    assert_eq!(fix.event, EventKind::CheckRun);
    assert_eq!(fix.branch.as_deref(), Some("release"));
    let mentioned = parse(
        &format!(
            "{base}event = \"comment\"\nmention = \"wright-bot\"\ntask = \"{{comment.body}}\"\n"
        ),
        "c.toml",
    )
    .unwrap()
    .remove(0);
    assert_eq!(
        (mentioned.event, mentioned.mention.as_str()),
        (EventKind::Comment, "wright-bot")
    );
    let issue = parse(&format!("{base}task = \"t\"\n"), "c.toml")
        .unwrap()
        .remove(0);
    assert_eq!(
        (issue.event, issue.mention.as_str()),
        (EventKind::Issue, "wright")
    );

    assert!(refused(&format!("{base}event = \"push\"\ntask = \"{{issue.body}}\"\n"))
        .contains("the task names {issue.body}, which event = \"push\" does not fill; it may name {branch}, {commit}, {commits}, {sender}, {repository}"));
    assert!(refused(&format!(
        "{base}event = \"push\"\nlabel = \"x\"\ntask = \"t\"\n"
    ))
    .contains("label needs event = \"issue\""));
    assert!(
        refused(&format!("{base}branch = \"main\"\ntask = \"t\"\n")).contains("branch needs event")
    );
    assert!(refused(&format!(
        "{base}event = \"push\"\nmention = \"w\"\ntask = \"t\"\n"
    ))
    .contains("mention needs event = \"comment\""));
    assert!(refused(&format!(
        "{base}event = \"comment\"\nmention = \"@w x\"\ntask = \"t\"\n"
    ))
    .contains("is not a user name"));
    assert!(
        refused(&format!("{base}event = \"release\"\ntask = \"t\"\n"))
            .contains("must be one of issue, check_run, comment, push")
    );
    assert!(refused(&format!(
        "{base}event = \"check_run\"\ntask = \"t\"\n[automations.a.result]\ncomment = true\napi_repository = \"o/r\"\n"
    ))
    .contains("has no issue to comment on"));
    assert!(refused(
        "[automations.a]\non = \"schedule\"\nschedule = \"* * * * *\"\nrepository = \"/r\"\nevent = \"push\"\ntask = \"t\"\n"
    )
    .contains("event needs on = \"webhook\""));
}

#[test]
fn a_schedule_that_opens_an_issue_names_its_tests_and_forge() {
    let nightly = "[automations.n]\non = \"schedule\"\nschedule = \"0 3 * * *\"\nrepository = \"https://h/r.git\"\ntask = \"t\"\n";
    let loaded = parse(
        &format!("{nightly}tests = \"cargo test\"\nforge = \"gitlab\"\n[automations.n.result]\nissue = true\napi_repository = \"o/r\"\napi_url = \"https://gitlab.example.com/api/v4\"\n"),
        "c.toml",
    )
    .unwrap()
    .remove(0);
    assert_eq!(loaded.forge, Forge::Gitlab);
    assert_eq!(loaded.tests.as_deref(), Some("cargo test"));
    assert!(loaded.result.issue);
    let github = parse(&format!("{nightly}[automations.n.result]\n"), "c.toml")
        .unwrap()
        .remove(0);
    assert_eq!(github.forge, Forge::Github);
    assert!(refused(&format!(
        "{nightly}[automations.n.result]\nissue = true\napi_repository = \"o/r\"\n"
    ))
    .contains("result.issue needs tests"));
    assert!(refused(&format!(
        "{nightly}tests = \"make test\"\n[automations.n.result]\nissue = true\n"
    ))
    .contains("result.issue needs result.api_repository"));
    assert!(refused(&format!("{nightly}tests = \"make test\"\nforge = \"gitea\"\n[automations.n.result]\nissue = true\napi_repository = \"o/r\"\n"))
        .contains("needs result.api_url"));
}
