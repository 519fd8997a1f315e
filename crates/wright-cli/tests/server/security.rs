//! The server's doors: bad input of every kind answered with a clear 4xx and nothing
//! changed; the key on every route, Host and Origin checked, the browser's one-time
//! address; a public address only with a key of one's own.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_4xx_and_changes_nothing() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let served = Served::start(&h, &[], &[]).await;
    let unknown = "20260101-000000-abcd";
    for (path, method) in [
        (format!("/api/conversations/{unknown}"), "GET"),
        (format!("/api/conversations/{unknown}/events"), "GET"),
        (format!("/api/conversations/{unknown}/interrupt"), "POST"),
        (format!("/api/conversations/{unknown}/diff"), "GET"),
        (format!("/api/conversations/{unknown}"), "DELETE"),
    ] {
        let request = match method {
            "GET" => served.http.get(served.url(&path)),
            "POST" => served.http.post(served.url(&path)),
            _ => served.http.delete(served.url(&path)),
        };
        let (status, body) = served.send(request.bearer_auth(&served.key)).await;
        assert_eq!(status, 404, "{method} {path}: {body}");
        assert_eq!(body["error"], "not_found", "{body}");
    }
    let (status, body) = served
        .post(
            &format!("/api/conversations/{unknown}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    // Ids that would leave the conversations' directory.
    for path in [
        "/api/conversations/..%2F..%2Fetc",
        "/api/conversations/..%5Cwindows",
        "/api/conversations/a.b/events",
    ] {
        let (status, body) = served.get(path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"], "bad_id", "{body}");
    }
    let (status, body) = served.get("/sockets/events/..%2Fx").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_id")));
    let post_raw = |body: String| {
        served
            .http
            .post(served.url("/api/conversations"))
            .bearer_auth(&served.key)
            .header("content-type", "application/json")
            .body(body)
    };
    let (status, body) = served.send(post_raw("{\"task\":".into())).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_json")));
    let huge = json!({"workspace": h.repo(), "task": "x".repeat(300 * 1024)}).to_string();
    let (status, body) = served.send(post_raw(huge)).await;
    assert_eq!((status, body["error"].as_str()), (413, Some("too_large")));
    let workspace = h.repo().to_str().unwrap();
    for (request, why) in [
        (
            json!({"workspace": workspace, "task": "x", "colour": 1}),
            "unknown field",
        ),
        (json!({"workspace": workspace}), "no task"),
        (
            json!({"workspace": workspace, "task": "x", "settings": {"max_step": 3}}),
            "misspelt setting",
        ),
    ] {
        let (status, body) = served.post("/api/conversations", request).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad_json")),
            "{why}: {body}"
        );
    }
    for (request, why) in [
        (
            json!({"workspace": workspace, "task": "  "}),
            "the task is empty",
        ),
        (
            json!({"workspace": "relative/dir", "task": "x"}),
            "absolute path",
        ),
        (
            json!({"workspace": "/no/such/dir", "task": "x"}),
            "absolute path",
        ),
        (
            json!({"workspace": workspace, "task": "x", "settings": {"max_steps": -1}}),
            "settings.max_steps",
        ),
    ] {
        let (status, body) = served.post("/api/conversations", request).await;
        assert_eq!(status, 400, "{body}");
        let code = match why {
            "settings.max_steps" => "bad_settings",
            _ => "bad_request",
        };
        assert_eq!(body["error"], code, "{body}");
        assert!(
            body["message"].as_str().unwrap().contains(why),
            "{why}: {body}"
        );
    }
    let (status, body) = served.get("/api/conversations/x/events?limit=0").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_query")));
    let (status, body) = served.get("/api/conversations/x/events?after=no").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_query")));
    let (status, body) = served.get("/api/nothing").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    let (status, body) = served
        .send(
            served
                .http
                .put(served.url("/api/conversations"))
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (405, Some("method_not_allowed"))
    );
    // A plain GET where a WebSocket is wanted.
    let (status, _) = served.get("/sockets/events/20260101-000000-abcd").await;
    assert!((400..500).contains(&status), "{status}");
    // The OpenAI-compatible endpoint wants a workspace given at start.
    let (status, body) = served
        .post(
            "/v1/chat/completions",
            json!({"model": "wright", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--workspace"),
        "{body}"
    );
    // Nothing of it made a conversation.
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!((status, list), (200, json!({"conversations": []})));
    assert!(!h.data.path().join("wright/conversations").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_wants_the_key_and_the_right_host_and_origin() {
    let h = Harness::new();
    let key = "k".repeat(40);
    let served = Served::start(&h, &[], &[("WRIGHT_SERVER_KEY", &key)]).await;
    assert_eq!(served.key, key);
    let routes = [
        ("GET", "/api/conversations"),
        ("POST", "/api/conversations"),
        ("GET", "/api/conversations/20260101-000000-abcd"),
        ("GET", "/api/conversations/20260101-000000-abcd/events"),
        ("POST", "/api/conversations/20260101-000000-abcd/interrupt"),
        ("POST", "/api/conversations/20260101-000000-abcd/messages"),
        ("DELETE", "/api/conversations/20260101-000000-abcd"),
        ("GET", "/api/conversations/20260101-000000-abcd/diff"),
        ("GET", "/api/conversations/20260101-000000-abcd/live-diff"),
        ("GET", "/api/settings"),
        ("GET", "/api/models"),
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
        ("GET", "/sockets/events/20260101-000000-abcd"),
        ("GET", "/openapi.json"),
        ("POST", "/api/conversations/20260101-000000-abcd/ask"),
        ("GET", "/"),
        ("GET", "/ui/app.js"),
        ("GET", "/no/such/route"),
    ];
    let request = |method: &str, path: &str| {
        let url = served.url(path);
        match method {
            "GET" => served.http.get(url),
            "POST" => served.http.post(url).json(&json!({})),
            _ => served.http.delete(url),
        }
    };
    for (method, path) in routes {
        let (status, body) = served.send(request(method, path)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("missing_key")),
            "{method} {path}"
        );
        let wrong = request(method, path).bearer_auth("k".repeat(39));
        let (status, body) = served.send(wrong).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("wrong_key")),
            "{method} {path}"
        );
        // The key in the query counts on the socket only.
        let query = request(method, &format!("{path}?session_api_key={key}"));
        let (status, _) = served.send(query).await;
        let expected = if path.starts_with("/sockets/") {
            404
        } else {
            401
        };
        assert_eq!(status, expected, "{method} {path}?session_api_key=");
    }
    let list = "/api/conversations";
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("X-Session-API-Key", &key),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("Authorization", format!("bearer {key}")),
        )
        .await;
    assert_eq!(status, 200, "the scheme's case does not matter");
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("Authorization", format!("Basic {key}")),
        )
        .await;
    assert_eq!(status, 401);
    // Both headers: both must be right.
    let both = |bearer: &str, header: &str| {
        served
            .http
            .get(served.url(list))
            .bearer_auth(bearer)
            .header("X-Session-API-Key", header)
    };
    assert_eq!(served.send(both(&key, &key)).await.0, 200);
    assert_eq!(served.send(both(&key, "nope")).await.0, 401);
    assert_eq!(served.send(both("nope", &key)).await.0, 401);
    // Another host's name (DNS rebinding) or another origin: refused, key or not.
    let port = served.base.rsplit(':').next().unwrap().to_string();
    for host in [
        format!("evil.example:{port}"),
        "localhost.evil.example".into(),
    ] {
        let (status, body) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Host", host.as_str()),
            )
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("bad_host")),
            "{host}"
        );
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let (status, _) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Host", host.as_str()),
            )
            .await;
        assert_eq!(status, 200, "{host}");
    }
    // Another program's page on this machine (another port) is another origin too.
    let other_port = format!("http://localhost:{}", port.parse::<u16>().unwrap() ^ 1);
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example:80",
        "http://localhost",
        other_port.as_str(),
    ] {
        let (status, body) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Origin", origin),
            )
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("bad_origin")),
            "{origin}"
        );
    }
    let own = format!("http://localhost:{port}");
    let response = served
        .http
        .get(served.url(list))
        .bearer_auth(&key)
        .header("Origin", own.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // CORS stays closed: no header lets another page read an answer.
    assert!(response
        .headers()
        .keys()
        .all(|name| !name.as_str().starts_with("access-control-")));
    // The socket: refused without its key (the handshake fails), taken with it in the
    // query (here on a conversation that does not exist: 404, after the key was checked).
    let socket = served.ws_url("/sockets/events/20260101-000000-abcd");
    let refused = tokio_tungstenite::connect_async(socket.as_str()).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401)
        }
        other => panic!("a socket without the key: {other:?}"),
    }
    let with_key = format!("{socket}?session_api_key={key}");
    match tokio_tungstenite::connect_async(with_key.as_str()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 404)
        }
        other => panic!("a socket on no conversation: {other:?}"),
    }
    // The document is generated: every route is in it.
    let (status, document) = served.get("/openapi.json").await;
    assert_eq!(status, 200);
    for path in [
        "/api/conversations",
        "/api/conversations/{id}",
        "/api/conversations/{id}/events",
        "/api/conversations/{id}/interrupt",
        "/api/conversations/{id}/messages",
        "/api/conversations/{id}/diff",
        "/api/conversations/{id}/live-diff",
        "/api/conversations/{id}/ask",
        "/api/settings",
        "/api/models",
        "/v1/models",
        "/v1/chat/completions",
        "/sockets/events/{id}",
    ] {
        assert!(document["paths"][path].is_object(), "{path} missing");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_reachable_from_elsewhere_needs_a_key_of_your_own() {
    let h = Harness::new();
    let refused = h
        .wright(&["serve", "--host", "0.0.0.0", "--port", "0"], &[])
        .await;
    assert_eq!(refused.status.code(), Some(2));
    let said = crate::common::stderr(&refused);
    assert!(said.contains("WRIGHT_SERVER_KEY"), "{said}");
    let weak = h
        .wright(&["serve", "--port", "0"], &[("WRIGHT_SERVER_KEY", "short")])
        .await;
    assert_eq!(weak.status.code(), Some(2));
    let said = crate::common::stderr(&weak);
    assert!(said.contains("at least 32 characters"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_trades_the_one_time_address_for_a_strict_cookie() {
    let h = Harness::new();
    let served = Served::start(&h, &[], &[]).await;
    let token_url = served.browser.clone();
    assert!(
        token_url.starts_with(&format!("{}/auth?token=", served.base)),
        "{token_url}"
    );
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (status, body) = served
        .send(browser.get(served.url("/auth?token=0123")))
        .await;
    assert_eq!((status, body["error"].as_str()), (401, Some("wrong_token")));
    // Another site's page cannot spend it: the Origin is checked before the token.
    let (status, _) = served
        .send(
            browser
                .get(&token_url)
                .header("Origin", "http://evil.example"),
        )
        .await;
    assert_eq!(status, 403);
    let opened = browser.get(&token_url).send().await.unwrap();
    assert_eq!(opened.status(), 303);
    assert_eq!(opened.headers()["location"], "/");
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(&served.key), "the cookie is not the key");
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = |path: &str| {
        browser
            .get(served.url(path))
            .header("Cookie", pair.as_str())
    };
    let (status, _) = served.send(with_cookie("/api/conversations")).await;
    assert_eq!(status, 200);
    // The cookie opens the UI: its page, under its strict policy.
    let page = with_cookie("/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(page.text().await.unwrap().contains("/ui/app.js"));
    let (status, _) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", "wright_session=forged"),
        )
        .await;
    assert_eq!(status, 401);
    // Once only.
    let (status, body) = served.send(browser.get(&token_url)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("wrong_token")));
}

/// Cookies ignore ports: another local program's page may leave a `wright_session` of its
/// own. It counts as no cookie (the key, the right cookie and the one-time address still
/// sign in); and a page on another port, the same site, cannot make the server work on
/// the right cookie with no `Origin` (an `<img>` to `/api/doctor`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stray_cookie_locks_nobody_out_and_the_cookie_alone_does_no_cross_port_work() {
    let h = Harness::new();
    let served = Served::start(&h, &[], &[]).await;
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let stray = "wright_session=set-by-another-port";
    let (status, _) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", stray)
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(status, 200, "the key with a stray cookie");
    let (status, body) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", stray),
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (401, Some("missing_key")));
    // The one-time address still signs the browser in, and its cookie beside the stray
    // one opens the UI.
    let opened = browser
        .get(&served.browser)
        .header("Cookie", stray)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 303);
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    let both = format!("{stray}; {}", cookie.split(';').next().unwrap());
    let (status, _) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", both.as_str()),
        )
        .await;
    assert_eq!(status, 200, "the right cookie beside a stray one");

    // Work on the cookie alone: only from the server's own page.
    let doctor = || {
        browser
            .get(served.url("/api/doctor"))
            .query(&[("sandbox", "sideways")])
            .header("Cookie", both.as_str())
    };
    let (status, body) = served.send(doctor()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("not_same_origin"))
    );
    let (status, _) = served
        .send(doctor().header("Sec-Fetch-Site", "same-site"))
        .await;
    assert_eq!(status, 403, "a page on another port is the same site");
    let (status, body) = served
        .send(doctor().header("Sec-Fetch-Site", "same-origin"))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("bad_settings")),
        "{body}"
    );
    let (status, body) = served
        .send(
            browser
                .get(served.url("/api/doctor"))
                .query(&[("sandbox", "sideways")])
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("bad_settings"))
    );
    // Reading on the cookie alone needs nothing more (a page load, a list).
    let (status, _) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", both.as_str()),
        )
        .await;
    assert_eq!(status, 200);
}
