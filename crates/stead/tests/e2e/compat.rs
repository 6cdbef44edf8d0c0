//! Wire compatibility with the released protocol, `stead/1`, from recorded transcripts.
//!
//! `tests/fixtures/protocol/server.json` holds requests as a `stead/1` client sends them
//! and the answers of the server of version 0.1.0 (the first release): every later server
//! must answer them alike, so an old client keeps working with an upgraded server.
//! `tests/fixtures/protocol/cli.json` holds what the 0.1.0 command line sent for `status`,
//! `gate`, `restart` and `stop`, and what that server answered: a fake server answers the
//! current command line from it, which must send the same requests, so an upgraded binary
//! can gate, restart and replace the server that still runs.
//!
//! Volatile values (ids of processes and servers, times, paths) are normalized before
//! comparing (see [`normalize`]). `STEAD_RECORD_TRANSCRIPT=1` rewrites both files from the
//! build under test; that is only right when the protocol itself moves on (`stead/2`).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::harness::*;

const MACHINE_ID: &str = "compat-machine";
const HOST_NAME: &str = "compat-host";
/// What every time normalizes to: a valid RFC 3339 instant, so a replayed answer parses.
const TIME: &str = "2000-01-01T00:00:00.000Z";
const DIR_MARK: &str = "$STATE_DIR";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/protocol")
        .join(name)
}

fn recording() -> bool {
    std::env::var_os("STEAD_RECORD_TRANSCRIPT").is_some_and(|v| v == "1")
}

fn compat_dir() -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_MACHINE_ID", MACHINE_ID);
    dir.set_env("STEAD_HOST_NAME", HOST_NAME);
    dir
}

/// Replaces what differs between two runs of the same exchange by fixed values of the
/// same JSON type: times, process and server ids, the state directory's path.
fn normalize(value: &Value, dir: &Path) -> Value {
    let dir = dir.to_string_lossy();
    match value {
        Value::Object(map) => {
            let in_flight = map.contains_key("trigger")
                && matches!(
                    map.get("status").and_then(Value::as_str),
                    Some("queued" | "running")
                );
            let mut out = Map::new();
            for (key, v) in map {
                let v = match key.as_str() {
                    "server_id" if v.is_string() => json!("<server_id>"),
                    "start_identity" if v.is_string() => json!("<start_identity>"),
                    "boot_id" => json!("<boot_id>"),
                    "version" => json!("<version>"),
                    "pid" | "monitor_pid" if v.is_number() => json!(0),
                    // Whether a monitor has marked a fresh run running yet is a race.
                    "status" if in_flight => json!("running"),
                    "started_at" if in_flight => json!(TIME),
                    "monitor_pid" if in_flight => json!(0),
                    // The transcript's `applied` job fires every five minutes: whether
                    // one falls inside a readiness answer's window depends on the wall
                    // clock when the test runs, so such a note is not compared.
                    "notes" if v.is_array() => Value::Array(
                        v.as_array()
                            .unwrap()
                            .iter()
                            .filter(|n| {
                                !n.as_str()
                                    .is_some_and(|n| n.starts_with("applied fires at"))
                            })
                            .map(|n| normalize(n, Path::new(dir.as_ref())))
                            .collect(),
                    ),
                    _ => normalize(v, Path::new(dir.as_ref())),
                };
                out.insert(key.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| normalize(v, Path::new(dir.as_ref())))
                .collect(),
        ),
        Value::String(s) if s.parse::<jiff::Timestamp>().is_ok() => json!(TIME),
        Value::String(s) => Value::String(s.replace(dir.as_ref(), DIR_MARK)),
        other => other.clone(),
    }
}

/// Whether `got` says everything `want` says: the same values, where objects may have
/// gained fields (a field added to an answer breaks no client of the protocol; one
/// removed or changed does), and the list of methods an unknown method's error names
/// may have gained methods at its end.
fn extends(got: &Value, want: &Value) -> bool {
    const ANSWERS: &str = "; this server answers: ";
    match (got, want) {
        (Value::String(got), Value::String(want))
            if want.starts_with("unknown method") && want.contains(ANSWERS) =>
        {
            got.strip_prefix(want.as_str())
                .is_some_and(|more| more.is_empty() || more.starts_with(", "))
        }
        (Value::Object(got), Value::Object(want)) => want
            .iter()
            .all(|(key, w)| got.get(key).is_some_and(|g| extends(g, w))),
        (Value::Array(got), Value::Array(want)) => {
            got.len() == want.len() && got.iter().zip(want).all(|(g, w)| extends(g, w))
        }
        _ => got == want,
    }
}

/// A normalized line: JSON when it parses, else the text itself.
fn normalize_line(line: &str, dir: &Path) -> Value {
    match serde_json::from_str::<Value>(line) {
        Ok(value) => normalize(&value, dir),
        Err(_) => Value::String(line.to_string()),
    }
}

/// Fills a normalized answer back in for a client in `dir`.
fn denormalize(value: &Value, dir: &Path) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), denormalize(v, dir)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| denormalize(v, dir)).collect()),
        Value::String(s) => Value::String(s.replace(DIR_MARK, &dir.to_string_lossy())),
        other => other.clone(),
    }
}

fn write_fixture(name: &str, value: &Value) {
    let path = fixture(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = serde_json::to_string_pretty(value).unwrap();
    text.push('\n');
    std::fs::write(&path, text).unwrap();
}

fn read_fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name))
        .unwrap_or_else(|e| panic!("{}: {e}", fixture(name).display()));
    serde_json::from_str(&text).unwrap()
}

/// A raw connection to a state directory's server.
struct Wire {
    reader: BufReader<UnixStream>,
}

impl Wire {
    fn open(socket: &str) -> (Self, String) {
        let stream = UnixStream::connect(socket).expect("connect to the server");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut wire = Self {
            reader: BufReader::new(stream),
        };
        let hello = wire.read_line();
        (wire, hello)
    }

    fn read_line(&mut self) -> String {
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .expect("a line from the server");
        assert!(line.ends_with('\n'), "the server closed the connection");
        line.trim_end_matches('\n').to_string()
    }

    fn exchange(&mut self, line: &str) -> String {
        let stream = self.reader.get_mut();
        stream.write_all(line.as_bytes()).unwrap();
        stream.write_all(b"\n").unwrap();
        self.read_line()
    }
}

/// The requests of the server transcript, in order. `None` marks a pause that is not
/// part of the transcript: the run of the `sleeper` job must be running before it is
/// cancelled, or the answer would depend on how fast its monitor started.
fn server_script() -> Vec<Option<&'static str>> {
    vec![
        Some(r#"{"id":1,"method":"status"}"#),
        Some(r#"{"id":2,"method":"status","params":{}}"#),
        Some(r#"{"id":3,"method":"job_add","params":{"name":"hello","command":["echo","hi"]}}"#),
        Some(
            r#"{"id":4,"method":"job_add","params":{"name":"nightly","cron":"0 3 * * *","tz":"UTC","command":["true"],"timeout":"10m","concurrency":"replace","env":{"A":"1"},"alternatives":[["false"]],"on_failure":"true","landed_check":"false","catch_up":"all","catch_up_window":"2h","depends_on":["stead"]}}"#,
        ),
        Some(
            r#"{"id":5,"method":"job_add","params":{"name":"bad","cron":"61 * * * *","command":["true"]}}"#,
        ),
        Some(r#"{"id":6,"method":"job_add","params":{"name":"hello","command":["true"]}}"#),
        Some(
            r#"{"id":7,"method":"job_add","params":{"name":"sleeper","shell":true,"command":["sleep 60"]}}"#,
        ),
        Some(
            r#"{"id":8,"method":"job_add","params":{"name":"ticker","every":"1h","command":["true"],"enabled":false}}"#,
        ),
        Some(r#"{"id":9,"method":"job_list"}"#),
        Some(r#"{"id":10,"method":"job_get","params":{"name":"nightly"}}"#),
        Some(r#"{"id":11,"method":"job_get","params":{"name":"missing"}}"#),
        Some(r#"{"id":12,"method":"job_set_enabled","params":{"name":"nightly","enabled":false}}"#),
        Some(
            r#"{"id":13,"method":"apply","params":{"jobs":[{"name":"applied","cron":"*/5 * * * *","tz":"Europe/Berlin","command":["true"]}],"services":[{"name":"db","restart":"true"}],"dry_run":true}}"#,
        ),
        Some(
            r#"{"id":14,"method":"apply","params":{"jobs":[{"name":"applied","cron":"*/5 * * * *","tz":"Europe/Berlin","command":["true"]}],"services":[{"name":"db","restart":"true"}]}}"#,
        ),
        Some(r#"{"id":15,"method":"run_now","params":{"job":"hello"}}"#),
        Some(r#"{"id":16,"method":"run_wait","params":{"id":1,"timeout_ms":20000}}"#),
        Some(r#"{"id":17,"method":"run_get","params":{"id":1}}"#),
        Some(r#"{"id":18,"method":"run_get","params":{"id":99}}"#),
        Some(r#"{"id":19,"method":"run_list","params":{"limit":10}}"#),
        Some(r#"{"id":20,"method":"run_list"}"#),
        Some(r#"{"id":21,"method":"run_list","params":{"limit":0}}"#),
        Some(r#"{"id":22,"method":"run_now","params":{"job":"sleeper"}}"#),
        None,
        Some(r#"{"id":23,"method":"run_list","params":{"status":"running"}}"#),
        Some(r#"{"id":24,"method":"run_cancel","params":{"id":2}}"#),
        Some(r#"{"id":25,"method":"run_cancel","params":{"id":2}}"#),
        Some(r#"{"id":26,"method":"run_list","params":{"job":"sleeper","before_id":3}}"#),
        Some(
            r#"{"id":27,"method":"service_add","params":{"name":"web","restart":"true","ready":"true","systemd_unit":"web.service"}}"#,
        ),
        Some(r#"{"id":28,"method":"service_add","params":{"name":"stead"}}"#),
        Some(r#"{"id":29,"method":"service_list"}"#),
        Some(
            r#"{"id":30,"method":"hold_acquire","params":{"name":"deploy","service":"web","ttl":"10m"}}"#,
        ),
        Some(r#"{"id":31,"method":"hold_list"}"#),
        Some(r#"{"id":32,"method":"readiness","params":{"service":"web"}}"#),
        Some(
            r#"{"id":33,"method":"readiness","params":{"service":"web","window":"2m","wait_ms":50,"unless":{"service":"web","window":"2m","ready":true,"blockers":[],"wedged_holds":[],"notes":[]}}}"#,
        ),
        Some(r#"{"id":34,"method":"hold_release","params":{"name":"deploy"}}"#),
        Some(r#"{"id":35,"method":"hold_release","params":{"name":"deploy"}}"#),
        Some(r#"{"id":36,"method":"readiness"}"#),
        Some(r#"{"id":37,"method":"restart_begin","params":{"service":"web"}}"#),
        Some(r#"{"id":38,"method":"service_list"}"#),
        Some(r#"{"id":39,"method":"restart_end","params":{"service":"web"}}"#),
        Some(r#"{"id":40,"method":"http","params":{"start":false}}"#),
        Some(r#"{"id":41,"method":"http"}"#),
        Some(r#"{"id":42,"method":"hosts"}"#),
        Some(r#"{"id":43,"method":"no_such_method"}"#),
        Some(r#"not json"#),
        Some(r#"{"method":"status"}"#),
        Some(r#"{"id":44,"method":"job_get","params":[1]}"#),
        Some(r#"{"id":45,"method":"job_get","params":{"nom":"hello"}}"#),
        Some(r#"{"id":46,"method":"job_remove","params":{"name":"hello"}}"#),
        Some(r#"{"id":47,"method":"service_remove","params":{"name":"web"}}"#),
        Some(r#"{"id":48,"method":"job_remove","params":{"name":"hello"}}"#),
        Some(r#"{"id":49,"method":"stop","params":{}}"#),
    ]
}

/// Every request of the released protocol, answered by this server as 0.1.0 answered it.
#[test]
fn the_server_answers_stead_1_requests_as_released() {
    let dir = compat_dir();
    let status = dir.status();
    let socket = status["socket"].as_str().unwrap().to_string();
    let (mut wire, hello) = Wire::open(&socket);
    let mut exchanges = vec![json!({ "hello": normalize_line(&hello, dir.path()) })];
    for step in server_script() {
        let Some(line) = step else {
            wait_status(&dir, 2, "running");
            continue;
        };
        let answer = wire.exchange(line);
        exchanges.push(json!({ "send": line, "recv": normalize_line(&answer, dir.path()) }));
    }
    let got = Value::Array(exchanges);
    if recording() {
        write_fixture("server.json", &got);
        return;
    }
    let want = read_fixture("server.json");
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            extends(g, w),
            "exchange {i} differs from the released server's answer\n got: {}\nwant: {}",
            serde_json::to_string_pretty(g).unwrap(),
            serde_json::to_string_pretty(w).unwrap()
        );
    }
    assert_eq!(got.len(), want.len(), "the number of exchanges differs");
}

/// The command lines of the CLI transcript, each run against the server in turn.
const CLI_COMMANDS: &[&[&str]] = &[
    &["status", "--json"],
    &["gate", "--service", "web", "--json"],
    &["restart", "--service", "web", "--json"],
    &["stop", "--json"],
];

/// One recorded connection: the hello and the request/answer pairs.
#[derive(Default)]
struct Conversation {
    hello: Option<Value>,
    exchanges: Vec<Value>,
}

/// Serves `socket` until the test ends, handing each accepted connection to `serve`.
fn listen(socket: &Path, serve: impl Fn(UnixStream) + Send + Sync + 'static) {
    let listener = UnixListener::bind(socket).expect("bind the stand-in socket");
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream));
        }
    });
}

/// Records the released CLI's conversations through a proxy in front of a real server.
fn record_cli() -> Value {
    let server = compat_dir();
    json(
        &server,
        &[
            "service",
            "add",
            "web",
            "--restart",
            "true",
            "--ready",
            "true",
        ],
    );
    let upstream = server.status()["socket"].as_str().unwrap().to_string();
    let front = compat_dir();
    std::fs::create_dir_all(front.path()).unwrap();
    let log: Arc<Mutex<Conversation>> = Arc::default();
    let (server_dir, front_dir) = (server.path().to_path_buf(), front.path().to_path_buf());
    {
        let log = log.clone();
        listen(&front.path().join("stead.sock"), move |client| {
            let (mut up, hello) = Wire::open(&upstream);
            log.lock().unwrap().hello = Some(normalize_line(&hello, &server_dir));
            let mut client_out = client.try_clone().unwrap();
            writeln!(client_out, "{hello}").unwrap();
            for line in BufReader::new(client).lines() {
                let Ok(line) = line else { break };
                let answer = up.exchange(&line);
                log.lock().unwrap().exchanges.push(json!({
                    "send": normalize_line(&line, &front_dir),
                    "recv": normalize_line(&answer, &server_dir),
                }));
                if writeln!(client_out, "{answer}").is_err() {
                    break;
                }
            }
        });
    }
    let mut commands = Vec::new();
    for args in CLI_COMMANDS {
        let out = front.run(args);
        let taken = std::mem::take(&mut *log.lock().unwrap());
        commands.push(json!({
            "args": args,
            "exit": out.status.code(),
            "hello": taken.hello,
            "exchanges": taken.exchanges,
        }));
    }
    Value::Array(commands)
}

/// The current CLI against a stand-in that answers as the released server did: each
/// request must be the one the released CLI sent.
#[test]
fn the_cli_speaks_stead_1_to_a_released_server() {
    if recording() {
        write_fixture("cli.json", &record_cli());
        return;
    }
    let commands = read_fixture("cli.json");
    let front = compat_dir();
    std::fs::create_dir_all(front.path()).unwrap();
    let expected: Arc<Mutex<Vec<Value>>> = Arc::default();
    let hello: Arc<Mutex<Value>> = Arc::default();
    let mismatches: Arc<Mutex<Vec<String>>> = Arc::default();
    {
        let (expected, hello, mismatches) = (expected.clone(), hello.clone(), mismatches.clone());
        let front_dir = front.path().to_path_buf();
        listen(&front.path().join("stead.sock"), move |client| {
            let mut out = client.try_clone().unwrap();
            let greeting = denormalize(&hello.lock().unwrap(), &front_dir);
            writeln!(out, "{greeting}").unwrap();
            for line in BufReader::new(client).lines() {
                let Ok(line) = line else { break };
                let next = {
                    let mut queue = expected.lock().unwrap();
                    (!queue.is_empty()).then(|| queue.remove(0))
                };
                let Some(next) = next else {
                    mismatches
                        .lock()
                        .unwrap()
                        .push(format!("an unexpected request: {line}"));
                    break;
                };
                let sent = normalize_line(&line, &front_dir);
                if sent != next["send"] {
                    mismatches.lock().unwrap().push(format!(
                        "sent {sent}\nwhere the released CLI sent {}",
                        next["send"]
                    ));
                    break;
                }
                let answer = denormalize(&next["recv"], &front_dir);
                if writeln!(out, "{answer}").is_err() {
                    break;
                }
            }
        });
    }
    for command in commands.as_array().unwrap() {
        let args: Vec<&str> = command["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        *hello.lock().unwrap() = command["hello"].clone();
        *expected.lock().unwrap() = command["exchanges"].as_array().unwrap().clone();
        let out = front.run(&args);
        let problems = std::mem::take(&mut *mismatches.lock().unwrap());
        assert!(
            problems.is_empty(),
            "stead {args:?}: {}",
            problems.join("\n")
        );
        let left = expected.lock().unwrap().len();
        assert_eq!(
            left, 0,
            "stead {args:?} left {left} recorded requests unsent"
        );
        assert_eq!(
            out.status.code(),
            command["exit"].as_i64().map(|c| c as i32),
            "stead {args:?} exited differently: {}",
            text(&out.stderr)
        );
    }
}

/// The ledger of the first release (`stead-store/tests/fixtures/ledger-0.1.0.db`), made by
/// stead 0.1.0 (schema 5) with six jobs (every field of a spec among them), a service, a
/// hold and runs of every ending: succeeded, failed, cancelled, skipped, interrupted and
/// resumed, interrupted and given up, and one interrupted run still owed. Every later
/// build opens it, migrates it and serves it with nothing lost.
#[test]
fn a_ledger_of_the_first_release_is_served_with_nothing_lost() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_MACHINE_ID", "fixture-machine");
    dir.set_env("STEAD_RESUME_DELAY_MS", "50");
    // The owed run was cut long ago by now: it is settled, not resumed.
    dir.set_env("STEAD_RESUME_MAX_AGE_MS", "1000");
    std::fs::create_dir_all(dir.path()).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../stead-store/tests/fixtures/ledger-0.1.0.db");
    std::fs::copy(&fixture, dir.path().join("stead.db")).unwrap();

    let runs = json(&dir, &["runs"]);
    let (seen, since): (Vec<(i64, &str, &str)>, Vec<_>) = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["job"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .partition(|(id, _, _)| *id <= 8);
    // Past the release's rows, only fires its jobs missed since may have been recorded
    // already (how many depends on the day and hour the test runs): each a row of a
    // scheduled job, with a trigger a fire has.
    for row in runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"].as_i64() > Some(8))
    {
        assert!(
            matches!(row["trigger"].as_str(), Some("scheduled" | "catch_up")),
            "a row the release did not write is not a fire: {row} (all after it: {since:?})"
        );
    }
    assert_eq!(
        seen,
        [
            (8, "sleeper", "interrupted"),
            (7, "sleeper", "skipped"),
            (6, "sleeper", "interrupted"),
            (5, "ticker", "succeeded"),
            (4, "sleeper", "interrupted"),
            (3, "sleeper", "cancelled"),
            (2, "failing", "failed"),
            (1, "hello", "succeeded"),
        ]
    );
    let resumed = run_of(&dir, 6);
    assert_eq!(resumed["trigger"], "resume");
    assert_eq!(resumed["parent_id"], 4);
    assert_eq!(resumed["original_trigger"], "on_demand");
    assert_eq!(run_of(&dir, 4)["resolution"], "resumed as run 6");
    assert_eq!(run_of(&dir, 2)["exit_code"], 3);
    // The debt the release left owed is settled by this build's resumer.
    wait_until("the owed run 8 is settled", || {
        run_of(&dir, 8)["resolution"]
            .as_str()
            .is_some_and(|r| r.starts_with("not resumed: "))
    });

    let jobs = json(&dir, &["job", "ls"]);
    let names: Vec<&str> = jobs
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["failing", "hello", "nightly", "sleeper", "ticker", "webjob"]
    );
    let nightly = json(&dir, &["job", "show", "nightly"]);
    for (field, value) in [
        ("cron", json!("0 3 * * *")),
        ("tz", json!("Europe/Berlin")),
        ("timeout", json!("10m")),
        ("concurrency", json!("replace")),
        ("env", json!({"A": "1"})),
        ("alternatives", json!([["echo", "fallback"]])),
        ("on_failure", json!("cat >/dev/null")),
        ("landed_check", json!("false")),
        ("catch_up", json!("all")),
        ("catch_up_window", json!("2h")),
        ("depends_on", json!(["stead"])),
    ] {
        assert_eq!(nightly[field], value, "nightly's {field}: {nightly}");
    }
    let ticker = json(&dir, &["job", "show", "ticker"]);
    assert_eq!(ticker["enabled"], false);
    assert_eq!(ticker["every"], "1h");

    let services = json(&dir, &["service", "ls"]);
    assert_eq!(services[1]["name"], "web");
    assert_eq!(services[1]["systemd_unit"], "web.service");
    assert_eq!(services[1]["dependents"], json!(["webjob"]));
    let holds = json(&dir, &["hold", "ls"]);
    assert_eq!(holds[0]["name"], "deploy");
    assert_eq!(holds[0]["service"], "web");

    // New runs take new ids: none is ever reused. (Not necessarily 9: the scheduler
    // records the fires the release's jobs missed since, a number that depends on the
    // day and hour the test runs, e.g. nightly's 03:00 Berlin catch-up.)
    let run = json(&dir, &["run", "hello", "--wait"]);
    assert!(run["id"].as_i64().unwrap() > 8, "{run}");
    assert_eq!(run["status"], "succeeded");
    let doctor = dir.run(&["doctor", "--json"]);
    assert!(doctor.status.success(), "{}", text(&doctor.stdout));
}
