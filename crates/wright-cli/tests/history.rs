//! `wright ls` and `wright show` read conversations back.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_and_show_read_a_finished_conversation() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply()
            .text("Listing.")
            .call("terminal", json!({"command": "echo visible-output"})),
        reply().call("finish", json!({"message": "all done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "list the files please", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));

    let listed = stdout(&h.wright(&["ls"], &[]).await);
    assert!(
        listed.contains("finished")
            && listed.contains("2 steps  in your tree  list the files please"),
        "{listed}"
    );
    let id = listed.split_whitespace().next().unwrap().to_string();

    let shown = h.wright(&["show", &id[..12]], &[]).await;
    let text = stdout(&shown);
    assert!(text.contains("user: list the files please"), "{text}");
    assert!(text.contains("→ terminal echo visible-output"), "{text}");
    assert!(text.contains("visible-output"), "{text}");
    assert!(
        text.contains("[finished: the model called finish]"),
        "{text}"
    );

    let missing = h.wright(&["show", "nope"], &[]).await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no conversation 'nope'"));
}
