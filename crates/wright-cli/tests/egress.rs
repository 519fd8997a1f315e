//! Where the repository's code may go: `local_only` refuses a server off this machine
//! before anything is sent to it, `ask` needs the user's yes (a flag for one run, or a
//! recorded grant), and every request's destination class is in the log; old logs still
//! read.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::config::init_repo;
use serde_json::json;
use wright_protocol::Destination;
use wright_protocol::EventBody;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

fn finishing() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo working"})),
        reply().call("finish", json!({"message": "done"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_only_refuses_a_hosted_profile_before_anything_is_sent() {
    let h = Harness::new();
    init_repo(h.repo());
    let local = ScriptedServer::start(finishing()).await.unwrap();
    let repo = h.repo().canonicalize().unwrap();
    let user = h.user_config(&format!(
        "profile = \"hosted\"\n[profiles.hosted]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"big\"\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[repos.\"{}\"]\negress = \"local_only\"\n",
        local.url(),
        repo.display()
    ));
    let refused = h.wright(&["run", "say hello"], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains(&format!(
            "this repository's code may only go to a server on this machine (egress = \"local_only\", {}:9), and https://api.example.com/v1 is elsewhere",
            user.display()
        )),
        "{said}"
    );
    // The flag for `ask` does not open `local_only`.
    let flagged = h.wright(&["run", "--allow-remote", "say hello"], &[]).await;
    assert_eq!(flagged.status.code(), Some(2), "{}", stderr(&flagged));
    let run = h
        .wright(&["run", "--profile", "local", "say hello"], &[])
        .await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let start = h
        .events()
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::Start(start) => Some(start),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.version, wright_protocol::LOG_FORMAT_VERSION);
    assert_eq!(start.destination, Some(Destination::Loopback));

    // A repository may ask to keep its code here on its own, without approval.
    let h = Harness::new();
    init_repo(h.repo());
    h.commit_repo_config("egress = \"local_only\"\n");
    let refused = h.run("https://api.example.com/v1", "say hello", &[]).await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(".wright/config.toml at "),
        "{}",
        stderr(&refused)
    );
}

/// This machine's address on its default route (not loopback), if it has one.
fn outward_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // Connecting a UDP socket sends nothing: it only picks the route.
    socket.connect("10.255.255.255:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_off_this_machine_needs_consent_and_the_log_says_where_requests_went() {
    let Some(ip) = outward_address() else {
        eprintln!(
            "!!! no address but loopback here: the consent of egress = ask is not tested !!!"
        );
        return;
    };
    let h = Harness::new();
    init_repo(h.repo());
    let options = ServerOptions {
        bind: std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with([finishing(), finishing()].concat(), options)
        .await
        .unwrap();
    let url = format!("http://{ip}:{}/v1", server.port());
    let host = format!("{ip}:{}", server.port());

    let refused = h.run(&url, "say hello", &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("is not on this machine")
            && said.contains("--allow-remote")
            && said.contains(&format!("wright allow egress {host}")),
        "{said}"
    );
    assert!(server.requests().is_empty(), "something was sent");

    let once = h.run(&url, "say hello", &["--allow-remote"]).await;
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    let class = wright_llm::destination(&url);
    assert!(!class.is_local());
    for event in h.events() {
        match event.body {
            EventBody::Start(start) => assert_eq!(start.destination, Some(class)),
            EventBody::Usage(usage) => assert_eq!(usage.destination, Some(class)),
            _ => {}
        }
    }
    // Nothing recorded by the flag: asked again without it.
    assert_eq!(h.run(&url, "say hello", &[]).await.status.code(), Some(2));

    let allowed = h.wright(&["allow", "egress", &url], &[]).await;
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let listed = stdout(&h.wright(&["allow", "--list"], &[]).await);
    assert!(listed.contains(&host), "{listed}");
    let recorded = h.run(&url, "say hello", &[]).await;
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));
    h.wright(&["deny", "egress", &host], &[]).await;
    assert_eq!(h.run(&url, "say hello", &[]).await.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_of_format_version_1_still_read_and_resume() {
    let h = Harness::new();
    let server = ScriptedServer::start([finishing(), finishing()].concat())
        .await
        .unwrap();
    let first = h.run(&server.url(), "say hello", &[]).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // The same log as version 1 wrote it: no destination, no cost.
    let path = h.log_path();
    let v1: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            let object = value.as_object_mut().unwrap();
            object.remove("destination");
            object.remove("cost");
            if object["kind"] == "start" {
                object.insert("version".into(), json!(1));
            }
            format!("{value}\n")
        })
        .collect();
    assert!(!v1.contains("destination"));
    std::fs::write(&path, &v1).unwrap();
    let id = h.conversation_id();
    let shown = h.wright(&["show", &id], &[]).await;
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains("user: say hello"),
        "{}",
        stdout(&shown)
    );
    let resumed = h
        .wright(
            &["resume", &id, "--base-url", &server.url(), "and again"],
            &[],
        )
        .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));

    // A log from a newer wright is refused with a sentence, and left as it is.
    let newer = v1.replacen("\"version\":1", "\"version\":99", 1);
    std::fs::write(&path, &newer).unwrap();
    let refused = h
        .wright(&["resume", &id, "--base-url", &server.url(), "more"], &[])
        .await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("format version 99, written by a newer wright"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
}

/// A `--base-url` that is neither a URL nor HOST:PORT is said to be one, with a valid
/// example, before any question of where the code may go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_that_is_not_one_is_an_error_not_a_remote_server() {
    let h = Harness::new();
    init_repo(h.repo());
    let refused = h
        .wright(&["run", "--base-url", "not-a-url", "say hello"], &[])
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("invalid model server URL 'not-a-url'")
            && said.contains("http://localhost:8080/v1"),
        "{said}"
    );
    assert!(!said.contains("not on this machine"), "{said}");
    // HOST:PORT stays accepted: a server on this machine, tried (and not found here).
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let short = format!("localhost:{port}");
    let tried = h
        .wright(&["run", "--base-url", &short, "say hello"], &[])
        .await;
    let said = stderr(&tried);
    assert!(!said.contains("invalid model server URL"), "{said}");
    assert!(
        said.contains(&format!("http://localhost:{port}/v1")),
        "{said}"
    );
}
