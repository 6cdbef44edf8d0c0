//! `docs/openapi.yaml` checked against the live server: the documented operations are
//! exactly the routed ones, and every answer — successes, errors, event data — validates
//! against the documented schema for its status (JSON Schema 2020-12, formats asserted).
//! The schemas forbid undocumented fields, so a field added to a wire type without the
//! document fails here.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::api::{Answer, Api, Events, dashboard_files};
use crate::harness::*;

struct Spec {
    doc: Value,
}

impl Spec {
    fn load() -> Self {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.yaml");
        let text = std::fs::read_to_string(path).expect("docs/openapi.yaml");
        let doc: Value = serde_norway::from_str(&text).expect("openapi.yaml is YAML");
        assert_eq!(doc["openapi"], "3.2.0");
        Self { doc }
    }

    /// Every (METHOD, path) the document describes.
    fn operations(&self) -> BTreeSet<(String, String)> {
        let mut ops = BTreeSet::new();
        for (path, item) in self.doc["paths"].as_object().unwrap() {
            for method in ["get", "post", "put", "patch", "delete"] {
                if item.get(method).is_some() {
                    ops.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
        ops
    }

    /// Follows a local `$ref`.
    fn resolve<'a>(&'a self, mut value: &'a Value) -> &'a Value {
        while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
            let pointer = reference.strip_prefix('#').expect("a local $ref");
            value = self
                .doc
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {reference}"));
        }
        value
    }

    /// The documented response of an operation for a status.
    fn response(&self, method: &str, path: &str, status: u16) -> &Value {
        let op = &self.doc["paths"][path][method.to_lowercase()];
        assert!(op.is_object(), "{method} {path} is not documented");
        let response = op["responses"]
            .get(status.to_string())
            .unwrap_or_else(|| panic!("{method} {path} does not document status {status}"));
        self.resolve(response)
    }

    /// Checks a JSON value against a schema of the document.
    fn check(&self, schema: &Value, instance: &Value, what: &str) {
        let mut root = schema.clone();
        root.as_object_mut()
            .expect("a schema object")
            .insert("components".into(), self.doc["components"].clone());
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("{what}: the documented schema is invalid: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{what} does not match the document:\n  {}\n{}",
            errors.join("\n  "),
            serde_json::to_string_pretty(instance).unwrap()
        );
    }

    /// Checks one answer against the document: its status is documented for the
    /// operation, its content type is the documented one, and a JSON body validates.
    fn conforms(&self, method: &str, path: &str, answer: &Answer) {
        let what = format!("{method} {path} → {}", answer.status);
        let response = self.response(method, path, answer.status);
        let content = response["content"]
            .as_object()
            .unwrap_or_else(|| panic!("{what}: no documented content"));
        let media = answer
            .content_type
            .split(';')
            .next()
            .unwrap()
            .trim()
            .to_string();
        let documented = content
            .get(&media)
            .unwrap_or_else(|| panic!("{what}: content type {media} is not documented"));
        if media == "application/json" {
            self.check(&documented["schema"], &answer.json(), &what);
        }
    }
}

/// A server with one of everything: jobs with every optional field, a service with every
/// field, a live hold, and runs that succeeded, failed, were cancelled or skipped.
fn populated() -> (StateDir, Api, i64) {
    let dir = StateDir::new();
    std::fs::create_dir_all(dir.path()).unwrap();
    let file = dir.path().join("jobs.toml");
    std::fs::write(
        &file,
        r#"
[[service]]
name = "web"
restart = "true"
ready = "true"
systemd_unit = "web.service"
launchd_label = "dev.example.web"
process = "web"

[[job]]
name = "everything"
cron = "*/5 * * * *"
tz = "Europe/Berlin"
command = ["echo $GREETING; exit 3"]
shell = true
cwd = "/tmp"
env = { GREETING = "hi" }
timeout = "1m"
concurrency = "forbid"
alternatives = [["true"]]
on_failure = "true"
landed_check = "false"
catch_up = "all"
catch_up_window = "1h"
resume = false
depends_on = ["web"]
hosts = ["this-host"]
resume_on = "any"

[[job]]
name = "interval"
every = "1h"
command = ["sleep", "299.789"]
enabled = false

[[job]]
name = "failing"
every = "1h"
command = ["false"]
"#,
    )
    .unwrap();
    json(&dir, &["apply", file.to_str().unwrap()]);
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
    json(&dir, &["run", "everything", "--wait"]);
    dir.run(&["run", "failing", "--wait"]);
    let long = json(&dir, &["run", "interval"])["id"].as_i64().unwrap();
    wait_status(&dir, long, "running");
    let api = Api::start(&dir);
    (dir, api, long)
}

#[test]
fn the_document_lists_exactly_the_routes_the_server_answers() {
    let spec = Spec::load();
    let dir = StateDir::new();
    let api = Api::start(&dir);
    let index = api.get("/api");
    spec.conforms("GET", "/api", &index);
    let mut routed: BTreeSet<(String, String)> = index.json()["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap().to_string(),
                e["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The page and its assets are not API endpoints, but they are documented (the script's
    // modules as one path, `/assets/js/{module}.js`).
    for (path, _) in dashboard_files() {
        routed.insert(("GET".into(), documented_asset(&path).into()));
    }
    assert_eq!(spec.operations(), routed);
}

#[test]
fn every_answer_matches_its_documented_schema() {
    let spec = Spec::load();
    let (dir, api, long) = populated();
    let forbid_overlap = {
        // A second run of a forbid job while one is in flight is skipped: a `skipped` row.
        let gate = dir.path().join("never");
        add_job(
            &dir,
            "single",
            &["--every", "1h", "--concurrency", "forbid"],
            &format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display()),
        );
        let first = json(&dir, &["run", "single"])["id"].as_i64().unwrap();
        wait_status(&dir, first, "running");
        json(&dir, &["run", "single"])["id"].as_i64().unwrap()
    };
    assert_eq!(run_of(&dir, forbid_overlap)["status"], "skipped");

    let long_path = format!("/api/runs/{long}");
    let cases: Vec<(&str, String, &str)> = vec![
        ("GET", "/api/status".into(), "/api/status"),
        ("GET", "/api/jobs".into(), "/api/jobs"),
        ("GET", "/api/jobs/everything".into(), "/api/jobs/{name}"),
        ("GET", "/api/jobs/interval".into(), "/api/jobs/{name}"),
        ("GET", "/api/jobs/nope".into(), "/api/jobs/{name}"),
        ("GET", "/api/runs".into(), "/api/runs"),
        (
            "GET",
            "/api/runs?job=everything&limit=2".into(),
            "/api/runs",
        ),
        ("GET", "/api/runs?limit=0".into(), "/api/runs"),
        ("GET", long_path.clone(), "/api/runs/{id}"),
        ("GET", "/api/runs/424242".into(), "/api/runs/{id}"),
        (
            "GET",
            format!("/api/runs/{forbid_overlap}"),
            "/api/runs/{id}",
        ),
        ("GET", "/api/runs/1/log".into(), "/api/runs/{id}/log"),
        (
            "GET",
            "/api/runs/1/log?offset=999999".into(),
            "/api/runs/{id}/log",
        ),
        ("GET", "/api/services".into(), "/api/services"),
        ("GET", "/api/holds".into(), "/api/holds"),
        ("GET", "/api/readiness".into(), "/api/readiness"),
        ("GET", "/api/readiness?service=web".into(), "/api/readiness"),
        (
            "GET",
            "/api/readiness?service=nope".into(),
            "/api/readiness",
        ),
        ("GET", "/metrics".into(), "/metrics"),
        ("GET", "/api/hosts".into(), "/api/hosts"),
        (
            "POST",
            "/api/jobs/failing/run".into(),
            "/api/jobs/{name}/run",
        ),
        ("POST", "/api/jobs/nope/run".into(), "/api/jobs/{name}/run"),
        (
            "POST",
            "/api/jobs/failing/disable".into(),
            "/api/jobs/{name}/disable",
        ),
        (
            "POST",
            "/api/jobs/failing/enable".into(),
            "/api/jobs/{name}/enable",
        ),
        (
            "POST",
            format!("{long_path}/cancel"),
            "/api/runs/{id}/cancel",
        ),
        ("POST", "/api/runs/1/cancel".into(), "/api/runs/{id}/cancel"),
    ];
    let mut statuses = BTreeSet::new();
    for (method, path, template) in &cases {
        let answer = api.send(method, path, Some(&api.token));
        spec.conforms(method, template, &answer);
        statuses.insert(answer.status);
    }
    // The cases reach successes and every kind of refusal a client can cause.
    for status in [200, 201, 400, 404, 409] {
        assert!(statuses.contains(&status), "no case answered {status}");
    }
    let cancelled = wait_status(&dir, long, "cancelled");
    spec.check(
        &json!({ "$ref": "#/components/schemas/Run" }),
        &cancelled,
        "a cancelled run",
    );

    // Refusals: no token, and a page of another origin.
    spec.conforms("GET", "/api/jobs", &api.send("GET", "/api/jobs", None));
    let (status, raw) = api.raw(&format!(
        "GET /api/jobs HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\n",
        api.authority()
    ));
    assert_eq!(status, 403);
    let body: Value = serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    spec.check(
        &spec.response("GET", "/api/jobs", 403)["content"]["application/json"]["schema"],
        &body,
        "a 403",
    );
    for (path, _) in dashboard_files() {
        let answer = api.send("GET", &path, None);
        spec.conforms("GET", documented_asset(&path), &answer);
    }
    let missing = api.send("GET", "/assets/js/nope.js", None);
    assert_eq!(missing.status, 404);
    spec.conforms("GET", "/assets/js/{module}.js", &missing);
}

/// The documented path of a dashboard file: its own, or the one path of every module.
fn documented_asset(path: &str) -> &str {
    if path.starts_with("/assets/js/") {
        "/assets/js/{module}.js"
    } else {
        path
    }
}

#[test]
fn event_data_matches_the_documented_schemas() {
    let spec = Spec::load();
    let (dir, api, long) = populated();
    let events_op = spec.response("GET", "/api/events", 200);
    let item = &events_op["content"]["text/event-stream"]["itemSchema"];
    // The data schema of each event, from the itemSchema's branches (OpenAPI 3.2).
    let data_schema = |name: &str| -> Value {
        item["oneOf"]
            .as_array()
            .expect("the events are branches of itemSchema")
            .iter()
            .find(|branch| branch["properties"]["event"]["const"] == name)
            .unwrap_or_else(|| panic!("event {name:?} is not documented"))["properties"]["data"]
            ["contentSchema"]
            .clone()
    };
    let check = |name: &str, data: &Value| {
        // The item itself (its name is one the document knows, its data a string)...
        spec.check(
            item,
            &json!({ "event": name, "data": data.to_string() }),
            &format!("a {name} event"),
        );
        // ...and its data against the branch's content schema.
        spec.check(&data_schema(name), data, &format!("a {name} event's data"));
    };
    let mut events = Events::open(&api);
    let mut seen = BTreeSet::new();
    let (name, data) = events.next();
    assert_eq!(name, "hello");
    check(&name, &data);
    seen.insert(name);

    json(&dir, &["cancel", &long.to_string()]);
    json(&dir, &["job", "enable", "interval"]);
    while seen.len() < 3 {
        let (name, data) = events.next();
        check(&name, &data);
        seen.insert(name);
    }
    assert_eq!(
        seen,
        BTreeSet::from(["hello".to_string(), "run".into(), "changed".into()])
    );
}
