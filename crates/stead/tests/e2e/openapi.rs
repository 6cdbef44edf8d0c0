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

    /// The documented schema of an operation's JSON request body.
    fn request_schema(&self, method: &str, path: &str) -> &Value {
        let op = &self.doc["paths"][path][method.to_lowercase()];
        let body = self.resolve(&op["requestBody"]);
        let schema = &body["content"]["application/json"]["schema"];
        assert!(schema.is_object(), "{method} {path} documents no JSON body");
        schema
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

/// What [`populated`] made: the server, its API, a run that goes on until it is
/// cancelled, and runs whose shapes are worth fetching one by one.
struct Populated {
    dir: StateDir,
    api: Api,
    long: i64,
    /// A failed run and the retry waiting out its delay, a run with parameters, a run
    /// after another job's success, and a run waiting for its queue beside the one
    /// holding the queue's place.
    runs: Vec<i64>,
}

/// A server with one of everything: jobs with every optional field, a service with every
/// field, a live hold, a queue and two notifiers, a paused job, and runs that succeeded,
/// failed (one followed by a retry waiting out its delay), were cancelled or skipped,
/// carry parameters, ran after another job, or wait for their queue.
fn populated() -> Populated {
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
    json(&dir, &["queue", "set", "gpu", "--parallel", "1"]);
    // Nothing listens on the discard port: deliveries fail and stay pending.
    json(
        &dir,
        &[
            "notify",
            "add",
            "ops",
            "--url",
            "http://127.0.0.1:9/x",
            "--event",
            "failed",
        ],
    );
    json(
        &dir,
        &[
            "notify",
            "add",
            "signed",
            "--url",
            "http://127.0.0.1:9/y",
            "--event",
            "recovered",
            "--event",
            "failed",
            "--job",
            "failing",
            "--sign",
        ],
    );
    add_job(&dir, "chained", &["--after", "everything"], "true");
    add_job(
        &dir,
        "flaky",
        &[
            "--retries",
            "1",
            "--retry-delay",
            "1h",
            "--retry-max-delay",
            "2h",
        ],
        "exit 3",
    );
    add_job(
        &dir,
        "hog",
        &["--queue", "gpu", "--concurrency", "allow"],
        "sleep 298.789",
    );
    add_job(&dir, "params", &[], "echo \"$K\" \"$@\"");
    add_job(&dir, "resting", &["--every", "1h"], "true");
    json(&dir, &["job", "pause", "resting", "--for", "1h"]);
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
    let mut chained = Vec::new();
    wait_until("a run after everything has succeeded", || {
        chained = runs_of(&dir, "chained");
        chained.iter().any(|r| r["status"] == "succeeded")
    });
    dir.run(&["run", "failing", "--wait"]);
    let with_params = json(
        &dir,
        &["run", "params", "--wait", "--env", "K=V", "--", "a", "b"],
    );

    let failed = json(&dir, &["run", "flaky"])["id"].as_i64().unwrap();
    let retry = wait_status(&dir, failed, "failed")["followed_by"]
        .as_i64()
        .expect("the retry is written with the failure");
    assert_eq!(run_of(&dir, retry)["status"], "queued");

    let holding = json(&dir, &["run", "hog"])["id"].as_i64().unwrap();
    wait_status(&dir, holding, "running");
    let queued = json(&dir, &["run", "hog"])["id"].as_i64().unwrap();
    assert_eq!(run_of(&dir, queued)["waiting"], "a place in queue gpu");

    let long = json(&dir, &["run", "interval"])["id"].as_i64().unwrap();
    wait_status(&dir, long, "running");
    wait_until("a delivery to ops has failed", || {
        json(&dir, &["notify", "ls"])
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == "ops" && n["last_error"].is_string())
    });
    let api = Api::start(&dir);
    let runs = vec![
        failed,
        retry,
        with_params["id"].as_i64().unwrap(),
        chained[0]["id"].as_i64().unwrap(),
        holding,
        queued,
    ];
    Populated {
        dir,
        api,
        long,
        runs,
    }
}

#[test]
fn the_document_lists_exactly_the_routes_the_server_answers() {
    let spec = Spec::load();
    let dir = StateDir::new();
    let api = Api::start(&dir);
    spec.conforms("GET", "/api", &api.get("/api"));
    assert_eq!(spec.operations(), routed(&api));
}

/// Every (METHOD, path) the server answers: the endpoints its index lists, and the page
/// and its assets, which are not API endpoints but are documented (the script's modules
/// as one path, `/assets/js/{module}.js`).
fn routed(api: &Api) -> BTreeSet<(String, String)> {
    let mut routed: BTreeSet<(String, String)> = api.get("/api").json()["endpoints"]
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
    for (path, _) in dashboard_files() {
        routed.insert(("GET".into(), documented_asset(&path).into()));
    }
    routed
}

#[test]
fn every_answer_matches_its_documented_schema() {
    let spec = Spec::load();
    let Populated {
        dir,
        api,
        long,
        runs,
    } = populated();
    fields_are_reached(&spec, &api);
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
    let mut cases: Vec<(&str, String, &str)> = vec![
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
            "/api/runs/1/checkpoints".into(),
            "/api/runs/{id}/checkpoints",
        ),
        (
            "GET",
            "/api/runs/424242/checkpoints".into(),
            "/api/runs/{id}/checkpoints",
        ),
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
        ("GET", "/api/queues".into(), "/api/queues"),
        ("GET", "/api/notifiers".into(), "/api/notifiers"),
        ("GET", "/api/jobs/resting".into(), "/api/jobs/{name}"),
        ("GET", "/api/runs?status=queued".into(), "/api/runs"),
        (
            "POST",
            "/api/jobs/resting/unpause".into(),
            "/api/jobs/{name}/unpause",
        ),
        (
            "POST",
            "/api/jobs/nope/unpause".into(),
            "/api/jobs/{name}/unpause",
        ),
        // A pause names how long in its body.
        (
            "POST",
            "/api/jobs/resting/pause".into(),
            "/api/jobs/{name}/pause",
        ),
    ];
    for id in &runs {
        cases.push(("GET", format!("/api/runs/{id}"), "/api/runs/{id}"));
    }
    let mut statuses = BTreeSet::new();
    for (method, path, template) in &cases {
        let answer = api.send(method, path, Some(&api.token));
        spec.conforms(method, template, &answer);
        statuses.insert(answer.status);
    }
    // The endpoints that take a body, with good and bad ones: each answer as expected,
    // and as documented.
    let pause = "/api/jobs/{name}/pause";
    let run = "/api/jobs/{name}/run";
    let later = "2099-01-01T00:00:00Z";
    let bodies: Vec<(&str, &str, Value, u16)> = vec![
        (
            "/api/jobs/params/run",
            run,
            json!({ "env": { "K": "W" }, "args": ["c", "d e"] }),
            201,
        ),
        ("/api/jobs/params/run", run, json!({}), 201),
        (
            "/api/jobs/params/run",
            run,
            json!({ "env": { "STEAD_RUN_ID": "1" } }),
            400,
        ),
        (
            "/api/jobs/params/run",
            run,
            json!({ "env": { "1X": "a" } }),
            400,
        ),
        (
            "/api/jobs/params/run",
            run,
            json!({ "env": { "K": 1 } }),
            400,
        ),
        ("/api/jobs/params/run", run, json!({ "argv": ["a"] }), 400),
        ("/api/jobs/params/run", run, json!(["a"]), 400),
        ("/api/jobs/nope/run", run, json!({ "args": ["a"] }), 404),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "for": "1h" }),
            200,
        ),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "until": later }),
            200,
        ),
        ("/api/jobs/resting/pause", pause, json!({}), 400),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "for": "1h", "until": later }),
            400,
        ),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "until": "2001-01-01T00:00:00Z" }),
            400,
        ),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "until": "tomorrow" }),
            400,
        ),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "for": "a while" }),
            400,
        ),
        (
            "/api/jobs/resting/pause",
            pause,
            json!({ "for": "1h", "why": "lunch" }),
            400,
        ),
        ("/api/jobs/resting/pause", pause, json!("1h"), 400),
        ("/api/jobs/nope/pause", pause, json!({ "for": "1h" }), 404),
        // Well formed, but the job has nothing to hold back: no schedule, after no job.
        ("/api/jobs/params/pause", pause, json!({ "for": "1h" }), 409),
        (
            "/api/jobs/resting/unpause",
            "/api/jobs/{name}/unpause",
            json!({ "for": "1h" }),
            400,
        ),
    ];
    for (path, template, body, expected) in &bodies {
        let answer = api.post_json(path, body);
        assert_eq!(
            answer.status,
            *expected,
            "POST {path} {body}: {}",
            answer.text()
        );
        spec.conforms("POST", template, &answer);
        if answer.status < 300 {
            // A body the server took is one the document allows.
            spec.check(
                spec.request_schema("POST", template),
                body,
                &format!("the body of POST {path}"),
            );
        }
        statuses.insert(answer.status);
    }
    let paused = api.get("/api/jobs/resting");
    spec.conforms("GET", "/api/jobs/{name}", &paused);
    assert_eq!(paused.json()["paused_until"], "2099-01-01T00:00:00.000Z");

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

/// What the handler of a route answers besides its success and what every route of its
/// kind answers (below), read from the handlers: their errors' codes, with the status
/// `status_of` gives each.
fn handler_refusals(method: &str, path: &str) -> &'static [u16] {
    match (method, path) {
        ("GET", "/api/runs") => &[400],
        (
            "GET",
            "/api/jobs/{name}" | "/api/runs/{id}" | "/api/runs/{id}/log" | "/api/readiness",
        )
        | (
            "POST",
            "/api/jobs/{name}/run"
            | "/api/jobs/{name}/enable"
            | "/api/jobs/{name}/disable"
            | "/api/jobs/{name}/unpause",
        ) => &[400, 404],
        ("POST", "/api/jobs/{name}/pause" | "/api/runs/{id}/cancel") => &[400, 404, 409],
        ("GET", "/assets/js/{module}.js") => &[404],
        _ => &[],
    }
}

#[test]
fn every_status_each_route_can_answer_is_documented() {
    let spec = Spec::load();
    let dir = StateDir::new();
    let api = Api::start(&dir);
    for (method, path) in &routed(&api) {
        let protected = path == "/metrics" || path.starts_with("/api");
        // Before any route looks at it: a malformed request (absolute form, two Hosts, a
        // body on a GET), the site rules, a body past the limit.
        let mut can = vec![400, 403, 413];
        if protected {
            can.push(401);
        }
        // Whatever asks the ledger or the dispatcher: every route of the API but its index.
        if protected && path != "/api" {
            can.extend([500, 503]);
        }
        can.push(if path == "/api/jobs/{name}/run" {
            201
        } else {
            200
        });
        can.extend(handler_refusals(method, path));
        let op = &spec.doc["paths"][path][method.to_lowercase()];
        let missing: Vec<u16> = can
            .into_iter()
            .filter(|status| op["responses"].get(status.to_string()).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "{method} {path} can answer {missing:?}, which the document does not declare"
        );
    }
}

/// A method a path does not take is answered 405 with the one it takes in `Allow`,
/// whatever the request carries (schemathesis found a TRACE with a body answered 400),
/// before anything else about it is judged, and nothing is done.
#[test]
fn a_method_a_path_does_not_take_is_405_naming_the_one_it_takes() {
    let spec = Spec::load();
    let dir = StateDir::new();
    add_job(&dir, "hello", &["--every", "1h"], "echo hi");
    let api = Api::start(&dir);
    let big = format!("{{\"a\": \"{}\"}}", "x".repeat(100 * 1024));
    // Each with the method its path takes, as the document has it.
    for (method, path, body, takes) in [
        ("TRACE", "/api/runs", "{\"a\": 1}", ("GET", "/api/runs")),
        (
            "TRACE",
            "/api/jobs/hello/run",
            "",
            ("POST", "/api/jobs/{name}/run"),
        ),
        (
            "PATCH",
            "/api/jobs/hello/run",
            "{}",
            ("POST", "/api/jobs/{name}/run"),
        ),
        (
            "PATCH",
            "/api/jobs/hello",
            "not json",
            ("GET", "/api/jobs/{name}"),
        ),
        ("DELETE", "/api/jobs/hello", "", ("GET", "/api/jobs/{name}")),
        (
            "DELETE",
            "/api/runs/1/cancel",
            "{}",
            ("POST", "/api/runs/{id}/cancel"),
        ),
        (
            "PUT",
            "/api/jobs/hello/pause",
            "{\"for\": \"1h\"}",
            ("POST", "/api/jobs/{name}/pause"),
        ),
        (
            "PUT",
            "/api/jobs/hello/disable",
            big.as_str(),
            ("POST", "/api/jobs/{name}/disable"),
        ),
        ("OPTIONS", "/api/status", "", ("GET", "/api/status")),
        (
            "GET",
            "/api/jobs/hello/run",
            "",
            ("POST", "/api/jobs/{name}/run"),
        ),
        ("POST", "/api/runs", "{}", ("GET", "/api/runs")),
        ("POST", "/", "", ("GET", "/")),
        (
            "DELETE",
            "/assets/js/main.js",
            "",
            ("GET", "/assets/js/{module}.js"),
        ),
        ("HEAD", "/api/status", "", ("GET", "/api/status")),
    ] {
        let answer = api.any(method, path, body);
        let what = format!("{method} {path}: {}", answer.text());
        assert_eq!(answer.status, 405, "{what}");
        assert!(
            spec.operations()
                .contains(&(takes.0.to_string(), takes.1.to_string())),
            "{takes:?} is documented"
        );
        assert_eq!(answer.header("allow"), Some(takes.0), "{what}");
        if method != "HEAD" {
            assert_eq!(answer.json()["code"], "method_not_allowed", "{what}");
            spec.check(
                &json!({ "$ref": "#/components/schemas/Error" }),
                &answer.json(),
                &what,
            );
        }
    }
    // Nothing was done, and a path that is not routed is still not found.
    let hello = json(&dir, &["job", "show", "hello"]);
    assert_ne!(hello["enabled"], false, "{hello}");
    assert!(hello["paused_until"].is_null(), "{hello}");
    assert!(json(&dir, &["runs"]).as_array().unwrap().is_empty());
    assert_eq!(api.any("DELETE", "/api/nothing", "{}").status, 404);
}

/// Checks that the fixture's answers carry every field the document says is absent when
/// unset, and that they conform: a field written wrongly in the document passes
/// unnoticed while no answer has it.
fn fields_are_reached(spec: &Spec, api: &Api) {
    let list = |path: &str| -> Vec<Value> {
        let answer = api.get(path);
        spec.conforms("GET", path.split('?').next().unwrap(), &answer);
        answer.json().as_array().unwrap().clone()
    };
    let reached = |what: &str, items: &[Value], fields: &[&str]| {
        for field in fields {
            assert!(
                items.iter().any(|item| item.get(*field).is_some()),
                "no {what} has {field}: {items:#?}"
            );
        }
    };
    let runs = list("/api/runs?limit=1000");
    reached(
        "run",
        &runs,
        &["params", "queue", "waiting", "not_before", "followed_by"],
    );
    for trigger in ["retry", "after"] {
        assert!(
            runs.iter().any(|r| r["trigger"] == trigger),
            "no run has trigger {trigger}"
        );
    }
    assert!(
        runs.iter().any(|r| r["waiting"]
            .as_str()
            .is_some_and(|w| w.starts_with("its retry delay"))),
        "no run waits for its retry delay"
    );
    reached(
        "job",
        &list("/api/jobs"),
        &[
            "retries",
            "retry_delay",
            "retry_max_delay",
            "after",
            "queue",
            "paused_until",
        ],
    );
    let notifiers = list("/api/notifiers");
    reached("notifier", &notifiers, &["events", "jobs", "sign"]);
    for field in ["secret_file", "last_error"] {
        assert!(
            notifiers.iter().any(|n| n[field].is_string()),
            "no notifier has a {field}: {notifiers:#?}"
        );
    }
    let queues = list("/api/queues");
    assert_eq!(
        (
            queues[0]["name"].clone(),
            queues[0]["running"].clone(),
            queues[0]["waiting"].clone()
        ),
        ("gpu".into(), 1.into(), 1.into()),
        "{queues:#?}"
    );
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
    let Populated { dir, api, long, .. } = populated();
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
