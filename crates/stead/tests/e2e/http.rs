//! The HTTP API end to end: the same answers as the CLI, the token and the Host/Origin
//! rules, the event stream, followed logs, metrics, and the listener's life with the
//! server's (config, `--http`, restarts).

use std::io::Read;
use std::process::Stdio;

use serde_json::Value;

use crate::api::{Api, Events, dashboard_files, free_port};
use crate::harness::*;

/// Strips the fields that move on their own (the lease, the free space) from a status.
fn steady(mut status: Value) -> Value {
    status.as_object_mut().unwrap().remove("lease_expires_at");
    // Free space moves with every write on the machine.
    if let Some(disk) = status["disk"].as_object_mut() {
        disk.remove("free_bytes");
    }
    status
}

#[test]
fn the_api_answers_exactly_what_the_cli_prints_with_json() {
    let dir = StateDir::new();
    add_job(&dir, "hello", &["--every", "1h"], "echo hello");
    json(&dir, &["service", "add", "web", "--restart", "true"]);
    json(
        &dir,
        &[
            "hold",
            "acquire",
            "turn",
            "--service",
            "web",
            "--ttl",
            "10m",
        ],
    );
    let id = json(&dir, &["run", "hello", "--wait"])["id"]
        .as_i64()
        .unwrap();
    let api = Api::start(&dir);

    for (path, args) in [
        ("/api/jobs", vec!["job", "ls"]),
        ("/api/jobs/hello", vec!["job", "show", "hello"]),
        ("/api/runs", vec!["runs"]),
        (
            "/api/runs?job=hello&status=succeeded&limit=5",
            vec![
                "runs",
                "--job",
                "hello",
                "--status",
                "succeeded",
                "--limit",
                "5",
            ],
        ),
        (&format!("/api/runs/{id}"), vec!["show", &id.to_string()]),
        ("/api/services", vec!["service", "ls"]),
        ("/api/holds", vec!["hold", "ls"]),
        (
            "/api/readiness?service=web",
            vec!["readiness", "--service", "web"],
        ),
    ] {
        let answer = api.get(path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        assert!(
            answer.content_type.starts_with("application/json"),
            "{path}"
        );
        assert_eq!(
            answer.json(),
            json(&dir, &args),
            "{path} differs from {args:?}"
        );
    }
    let status = api.get("/api/status").json();
    assert_eq!(steady(status.clone()), steady(dir.status()));
    assert_eq!(status["http"], api.base.as_str());

    let index = api.get("/api").json();
    let listed: Vec<&str> = index["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"/api/events") && listed.contains(&"/metrics"));
}

#[test]
fn actions_run_cancel_and_toggle_jobs_like_the_cli() {
    let dir = StateDir::new();
    add_job(&dir, "long", &["--every", "1h"], "sleep 299.456");
    let api = Api::start(&dir);

    let started = api.post("/api/jobs/long/run");
    assert_eq!(started.status, 201, "{}", started.text());
    let id = started.json()["id"].as_i64().unwrap();
    assert_eq!(started.json()["trigger"], "on_demand");
    wait_status(&dir, id, "running");

    let cancelled = api.post(&format!("/api/runs/{id}/cancel"));
    assert_eq!(cancelled.status, 200, "{}", cancelled.text());
    let run = wait_status(&dir, id, "cancelled");
    assert_eq!(api.get(&format!("/api/runs/{id}")).json(), run);
    wait_until("the cancelled command is gone", || {
        processes_with("299.456") == 0
    });

    let disabled = api.post("/api/jobs/long/disable");
    assert_eq!(disabled.status, 200);
    assert_eq!(disabled.json()["enabled"], false);
    assert_eq!(json(&dir, &["job", "show", "long"])["enabled"], false);
    let enabled = api.post("/api/jobs/long/enable").json();
    assert_eq!(enabled, json(&dir, &["job", "show", "long"]));

    // Bad input is named, in the protocol's error shape, and changes nothing.
    for (method, path, status, code) in [
        ("POST", "/api/jobs/nope/run", 404, "not_found"),
        ("GET", "/api/runs/999999", 404, "not_found"),
        ("GET", "/api/runs/abc", 400, "invalid_params"),
        ("GET", "/api/runs?limit=0", 400, "invalid_params"),
        ("GET", "/api/runs?status=exploded", 400, "invalid_params"),
        ("GET", "/api/runs?colour=red", 400, "invalid_params"),
        ("GET", "/api/readiness?service=nope", 404, "not_found"),
        ("GET", "/api/nothing-here", 404, "not_found"),
        ("DELETE", "/api/jobs/long", 405, "method_not_allowed"),
        ("GET", "/api/jobs/long/run", 405, "method_not_allowed"),
    ] {
        let answer = api.send(method, path, Some(&api.token));
        assert_eq!(answer.status, status, "{method} {path}: {}", answer.text());
        let body = answer.json();
        assert_eq!(body["code"], code, "{method} {path}");
        assert!(!body["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(json(&dir, &["job", "ls"]).as_array().unwrap().len(), 1);
}

#[test]
fn only_the_token_holder_at_this_address_and_origin_gets_in() {
    let dir = StateDir::new();
    let api = Api::start(&dir);
    let token_file = dir.path().join("http-token");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap().trim(),
        api.token
    );

    for path in ["/api/status", "/api/jobs", "/api/events", "/metrics"] {
        let none = api.send("GET", path, None);
        assert_eq!(none.status, 401, "{path} without a token");
        assert_eq!(none.json()["code"], "unauthorized");
        assert!(none.header("www-authenticate").is_some());
        assert_eq!(
            api.send("GET", path, Some("0".repeat(64).as_str())).status,
            401
        );
    }
    assert_eq!(api.send("POST", "/api/jobs/x/run", None).status, 401);

    let host = api.authority().to_string();
    let port = host.rsplit(':').next().unwrap();
    let auth = format!("Authorization: Bearer {}\r\n", api.token);
    // DNS rebinding: the attacker's name in Host, even with the right token.
    let (status, answer) = api.raw(&format!(
        "GET /api/status HTTP/1.1\r\nHost: evil.example:{port}\r\n{auth}"
    ));
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("\"forbidden\""), "{answer}");
    let (status, _) = api.raw(&format!("GET / HTTP/1.1\r\nHost: evil.example:{port}\r\n"));
    assert_eq!(
        status, 403,
        "the page itself is refused to a rebinding name"
    );
    // A page of another site: its Origin, or the browser's cross-site mark.
    for extra in [
        "Origin: http://evil.example\r\n".to_string(),
        format!("Origin: http://localhost:{port}1\r\n"),
        "Origin: null\r\n".to_string(),
        "Sec-Fetch-Site: cross-site\r\n".to_string(),
    ] {
        let (status, answer) = api.raw(&format!(
            "POST /api/jobs/x/run HTTP/1.1\r\nHost: {host}\r\n{auth}{extra}Content-Length: 0\r\n"
        ));
        assert_eq!(status, 403, "{extra}: {answer}");
    }
    // The same request from the dashboard's own origin passes the site rules.
    let (status, answer) = api.raw(&format!(
        "GET /api/status HTTP/1.1\r\nHost: {host}\r\n{auth}Origin: http://{host}\r\nSec-Fetch-Site: same-origin\r\n"
    ));
    assert_eq!(status, 200, "{answer}");
    let (status, _) = api.raw(&format!(
        "GET /api/status HTTP/1.1\r\nHost: localhost:{port}\r\n{auth}"
    ));
    assert_eq!(status, 200, "localhost names this server too");

    // The page needs no token and allows nothing foreign.
    let page = api.send("GET", "/", None);
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert!(csp.contains("script-src 'self'"), "{csp}");
    // So do its style sheet and every module of its script, each as what it is, built in.
    for (path, source) in dashboard_files() {
        let answer = api.send("GET", &path, None);
        assert_eq!(answer.status, 200, "{path}");
        let want = match source.extension().and_then(|e| e.to_str()) {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            _ => "text/html; charset=utf-8",
        };
        assert_eq!(answer.content_type, want, "{path}");
        for (header, value) in [
            ("content-security-policy", csp),
            ("x-content-type-options", "nosniff"),
            ("x-frame-options", "DENY"),
            ("referrer-policy", "no-referrer"),
            ("cache-control", "no-cache"),
        ] {
            assert_eq!(answer.header(header), Some(value), "{path}: {header}");
        }
        assert_eq!(
            answer.text(),
            std::fs::read_to_string(&source).unwrap(),
            "{path} is {}",
            source.display()
        );
    }
    // The page loads its script as a module; the single script it once was is gone.
    assert!(
        page.text()
            .contains(r#"<script type="module" src="/assets/js/main.js"></script>"#)
    );
    assert_eq!(api.send("GET", "/assets/app.js", None).status, 404);
}

#[test]
fn the_event_stream_tells_a_runs_life_and_other_changes() {
    let dir = StateDir::new();
    add_job(&dir, "quick", &["--every", "1h"], "echo quick");
    let api = Api::start(&dir);
    let mut events = Events::open(&api);
    let (first, hello) = events.next();
    assert_eq!(first, "hello");
    assert_eq!(steady(hello), steady(dir.status()));

    let id = api.post("/api/jobs/quick/run").json()["id"]
        .as_i64()
        .unwrap();
    let ended = events.until("the run's end", |event, data| {
        event == "run" && data["id"] == id && data["status"] == "succeeded"
    });
    assert_eq!(ended, run_of(&dir, id), "the event carries the whole row");

    json(&dir, &["job", "disable", "quick"]);
    events.until("a change event", |event, _| event == "changed");
}

#[test]
fn a_followed_log_streams_as_written_and_ends_with_the_run() {
    let dir = StateDir::new();
    let gate = dir.path().join("go");
    add_job(
        &dir,
        "chatty",
        &["--every", "1h"],
        &format!(
            "echo first; while [ ! -e {} ]; do sleep 0.02; done; echo second",
            gate.display()
        ),
    );
    let api = Api::start(&dir);
    let id = api.post("/api/jobs/chatty/run").json()["id"]
        .as_i64()
        .unwrap();
    wait_status(&dir, id, "running");

    let (status, mut body) = api.stream(&format!("/api/runs/{id}/log?follow=true"));
    assert_eq!(status, 200);
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&got).contains("first\n") {
        let n = body.read(&mut buf).expect("the followed log reads");
        assert!(n > 0, "the stream ended before the run did");
        got.extend_from_slice(&buf[..n]);
    }
    std::fs::write(&gate, "").unwrap();
    body.read_to_end(&mut got).expect("the stream ends cleanly");
    assert_eq!(String::from_utf8_lossy(&got), "first\nsecond\n");
    assert_eq!(run_of(&dir, id)["status"], "succeeded");

    let whole = api.get(&format!("/api/runs/{id}/log"));
    assert_eq!(whole.text(), "first\nsecond\n");
    assert_eq!(whole.header("x-stead-log-offset"), Some("13"));
    let rest = api.get(&format!("/api/runs/{id}/log?offset=6"));
    assert_eq!(rest.text(), "second\n");
    assert_eq!(rest.header("x-stead-log-offset"), Some("13"));
    for query in ["offset=99", "offset=99&follow=true"] {
        let past = api.get(&format!("/api/runs/{id}/log?{query}"));
        assert_eq!(past.status, 400, "{query}");
        let message = past.json()["message"].as_str().unwrap().to_string();
        assert!(message.contains("past the end"), "{message}");
    }
}

#[test]
fn metrics_count_the_ledgers_runs_and_the_servers_own_events() {
    let dir = StateDir::new();
    add_job(&dir, "ok", &["--every", "1h"], "true");
    add_job(&dir, "bad", &["--every", "1h"], "exit 3");
    json(&dir, &["run", "ok", "--wait"]);
    json(&dir, &["run", "ok", "--wait"]);
    dir.run(&["run", "bad", "--wait"]);
    let api = Api::start(&dir);
    let before = lease_renewals(&api.get("/metrics").text());
    // A renewal a heartbeat later shows as a counter that moved.
    wait_until("a lease renewal is counted", || {
        lease_renewals(&api.get("/metrics").text()) > before
    });
    let answer = api.get("/metrics");
    assert!(
        answer
            .content_type
            .starts_with("application/openmetrics-text")
    );
    let text = answer.text();
    for line in [
        r#"stead_runs{job="ok",status="succeeded",trigger="on_demand"} 2"#,
        r#"stead_runs{job="bad",status="failed",trigger="on_demand"} 1"#,
        "stead_jobs 2",
        "stead_monitors 0",
        "# EOF",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
}

fn lease_renewals(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(r#"stead_lease_renewals_total{outcome="renewed"} "#))
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn a_configured_address_is_served_by_every_server_and_survives_restarts() {
    let dir = StateDir::new();
    let port = free_port();
    dir.write_config(&format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"));
    let first = dir.status();
    assert_eq!(first["http"], format!("http://127.0.0.1:{port}"));
    let token = std::fs::read_to_string(dir.path().join("http-token")).unwrap();
    let api = Api::at(format!("http://127.0.0.1:{port}"), token.trim().to_string());
    assert_eq!(api.get("/api/status").json()["pid"], first["pid"]);

    // A stop frees the port before the lease, so the next server binds it at once.
    json(&dir, &["stop"]);
    let second = dir.status();
    assert_ne!(second["pid"], first["pid"]);
    assert_eq!(
        api.get("/api/status").json()["pid"],
        second["pid"],
        "same port, same token"
    );

    // So does a crash.
    signal(second["pid"].as_u64().unwrap() as u32, libc::SIGKILL);
    let third = dir.status();
    assert_eq!(api.get("/api/status").json()["pid"], third["pid"]);
}

#[test]
fn unusable_http_addresses_are_refused_with_a_reason() {
    let dir = StateDir::new();
    // Not loopback, without the explicit unsafe flag.
    let out = dir.run(&["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("loopback addresses only"));
    let out = dir.run(&["serve", "--http", "8080"]);
    assert_eq!(out.status.code(), Some(78));
    assert!(text(&out.stderr).contains("expected IP:PORT"));
    let out = dir.run(&["serve", "--http-allow-remote"]);
    assert_eq!(out.status.code(), Some(2), "the unsafe flag needs --http");

    // A port someone else holds: the server that would serve it does not start, and a
    // client starting one on demand says why at once.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    dir.write_config(&format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"));
    let out = dir.run(&["status"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("failed to listen for HTTP on 127.0.0.1:{port}")),
        "{}",
        text(&out.stderr)
    );
    assert!(dir.server_pids().is_empty());
    drop(taken);
    assert_eq!(
        dir.status()["http"],
        format!("http://127.0.0.1:{port}"),
        "once the port is free the same config serves"
    );
}

#[test]
fn serve_with_the_http_flag_listens_where_asked() {
    let dir = StateDir::new();
    let port = free_port();
    let mut server = dir
        .stead(&["serve", "--http", &format!("localhost:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Not `stead status`: it would start a server of its own if it came first.
    wait_until("the server binds its socket", || {
        dir.path().join("stead.sock").exists()
    });
    let status = dir.status();
    assert_eq!(status["http"], format!("http://127.0.0.1:{port}"));
    assert_eq!(status["pid"], server.id());
    let api = Api::start(&dir);
    assert_eq!(
        api.base,
        format!("http://127.0.0.1:{port}"),
        "dashboard reuses it"
    );
    json(&dir, &["stop"]);
    assert!(server.wait().unwrap().success());
}
