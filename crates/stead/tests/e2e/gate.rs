//! Restarts wait: readiness, the gate, holds, and gated restarts of stead and of a
//! declared service, end to end.

use std::process::Stdio;

use serde_json::Value;

use crate::harness::*;

/// A job depending on `web` whose runs block until `gate` exists.
fn blocked_job(dir: &StateDir, name: &str, gate: &std::path::Path, extra: &[&str]) {
    let mut args = vec!["--depends-on", "web"];
    args.extend_from_slice(extra);
    add_job(
        dir,
        name,
        &args,
        &format!("while [ ! -e {} ]; do sleep 0.02; done", gate.display()),
    );
}

fn web(dir: &StateDir, restart: &str, ready: &str) {
    json(
        dir,
        &[
            "service",
            "add",
            "web",
            "--restart",
            restart,
            "--ready",
            ready,
            "--systemd-unit",
            "web.service",
        ],
    );
}

#[test]
fn the_gate_waits_for_a_dependent_run_and_clears_as_soon_as_it_ends() {
    let dir = StateDir::new();
    let gate = dir.path().join("gate");
    web(&dir, "true", "true");
    blocked_job(&dir, "sync", &gate, &[]);
    let id = json(&dir, &["run", "sync"])["id"].as_i64().unwrap();
    wait_status(&dir, id, "running");

    let readiness = json(&dir, &["readiness", "--service", "web"]);
    assert_eq!(readiness["ready"], false);
    assert_eq!(readiness["blockers"][0]["kind"], "run");
    assert_eq!(readiness["blockers"][0]["id"], id);

    let mut waiting = dir
        .stead(&["gate", "--service", "web", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(waiting.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    assert!(line.contains(&format!("run {id} of sync")), "{line}");
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the gate did not wait"
    );

    std::fs::write(&gate, b"").unwrap();
    let out = waiting.wait_with_output().unwrap();
    let cleared = now_ms();
    assert_eq!(out.status.code(), Some(0));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["outcome"], "clear");
    let ended = ms_of(run_of(&dir, id)["ended_at"].as_str().unwrap());
    // Event-driven: the gate answers on the run's end, not at its next print (15 s).
    assert!(
        cleared - ended < 2_000,
        "the gate cleared {} ms after the run ended",
        cleared - ended
    );
}

#[test]
fn a_gate_that_times_out_exits_75_and_nothing_is_restarted() {
    let dir = StateDir::new();
    let gate = dir.path().join("gate");
    web(&dir, "true", "true");
    blocked_job(&dir, "sync", &gate, &[]);
    let id = json(&dir, &["run", "sync"])["id"].as_i64().unwrap();
    wait_status(&dir, id, "running");
    let restarted = dir.path().join("restarted");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} --state-dir {} gate --service web --timeout 1s --interval 1s && touch {}",
            env!("CARGO_BIN_EXE_stead"),
            dir.path().display(),
            restarted.display()
        ))
        .envs([("STEAD_LEASE_MS", "2000"), ("STEAD_HEARTBEAT_MS", "250")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("deferred"),
        "{}",
        text(&out.stderr)
    );
    assert!(!restarted.exists(), "the chain went on after a deferral");
    std::fs::write(&gate, b"").unwrap();
    wait_status(&dir, id, "succeeded");
}

#[test]
fn a_gate_against_a_stopped_server_exits_0_and_starts_nothing() {
    let dir = StateDir::new();
    dir.status();
    assert!(dir.run(&["stop"]).status.success());
    let out = dir.run(&["gate", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["outcome"], "server_down");
    assert!(dir.server_pids().is_empty(), "the gate started a server");
}

#[test]
fn live_holds_block_wedged_holds_do_not_and_force_does_not_wait() {
    let dir = StateDir::new();
    web(&dir, "true", "true");
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
    let out = dir.run(&["gate", "--service", "web", "--timeout", "1s"]);
    assert_eq!(out.status.code(), Some(75));
    assert!(
        text(&out.stderr).contains("hold turn"),
        "{}",
        text(&out.stderr)
    );

    let forced = dir.run(&["gate", "--service", "web", "--force"]);
    assert_eq!(forced.status.code(), Some(0));
    assert!(
        text(&forced.stderr).contains("--force"),
        "{}",
        text(&forced.stderr)
    );

    json(&dir, &["hold", "release", "turn"]);
    json(
        &dir,
        &[
            "hold",
            "acquire",
            "stuck",
            "--service",
            "web",
            "--ttl",
            "1s",
        ],
    );
    let expires = ms_of(
        json(&dir, &["hold", "ls"])[0]["expires_at"]
            .as_str()
            .unwrap(),
    );
    wait_until("the hold's TTL passes", || now_ms() > expires);
    let readiness = json(&dir, &["readiness", "--service", "web"]);
    assert_eq!(readiness["ready"], true, "{readiness}");
    assert_eq!(readiness["wedged_holds"][0]["name"], "stuck");
    assert_eq!(
        dir.run(&["gate", "--service", "web"]).status.code(),
        Some(0)
    );
}

#[test]
fn a_fire_due_inside_the_window_blocks() {
    let dir = StateDir::new();
    web(&dir, "true", "true");
    add_job(
        &dir,
        "minutely",
        &["--depends-on", "web", "--cron", "* * * * *"],
        "true",
    );
    let readiness = json(&dir, &["readiness", "--service", "web", "--window", "2m"]);
    assert_eq!(readiness["ready"], false);
    assert_eq!(readiness["blockers"][0]["kind"], "fire");
    assert_eq!(readiness["blockers"][0]["job"], "minutely");
    // A restart of stead itself cuts no fire: it is made up after the restart.
    let stead = json(&dir, &["readiness", "--window", "2m"]);
    assert_eq!(stead["ready"], true, "{stead}");
    assert!(
        stead["notes"][0]
            .as_str()
            .unwrap()
            .contains("minutely fires at"),
        "{stead}"
    );
}

#[test]
fn restarting_stead_cuts_no_run_and_proves_a_new_server() {
    let dir = StateDir::new();
    let gate = dir.path().join("gate");
    for name in ["one", "two"] {
        add_job(
            &dir,
            name,
            &[],
            &format!("while [ ! -e {} ]; do sleep 0.02; done", gate.display()),
        );
    }
    let ids: Vec<i64> = ["one", "two"]
        .iter()
        .map(|n| json(&dir, &["run", n])["id"].as_i64().unwrap())
        .collect();
    for id in &ids {
        wait_status(&dir, *id, "running");
    }
    let readiness = json(&dir, &["readiness"]);
    assert_eq!(
        readiness["ready"], true,
        "runs do not block a restart of stead"
    );
    assert!(readiness["notes"][0].as_str().unwrap().contains("2 run(s)"));

    let before = dir.status();
    let report = json(&dir, &["restart"]);
    assert_eq!(report["restarted"], true);
    assert_eq!(report["old_server_id"], before["server_id"]);
    assert_ne!(report["new_server_id"], before["server_id"]);
    assert!(!is_alive(before["pid"].as_u64().unwrap() as u32));
    for id in &ids {
        assert_eq!(run_of(&dir, *id)["status"], "running");
    }
    std::fs::write(&gate, b"").unwrap();
    for id in &ids {
        wait_status(&dir, *id, "succeeded");
    }
}

#[test]
fn a_service_restart_waits_for_a_dependent_run_and_force_cuts_it_to_be_resumed() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let up = dir.path().join("web-up");
    let restarts = dir.path().join("restarts");
    web(
        &dir,
        &format!("echo x >> {}; touch {}", restarts.display(), up.display()),
        &format!("test -e {}", up.display()),
    );
    let gate = dir.path().join("gate");
    add_job(
        &dir,
        "sync",
        &["--depends-on", "web"],
        &format!(
            "if [ \"$STEAD_ATTEMPT\" = 1 ]; then while [ ! -e {} ]; do sleep 0.02; done; fi",
            gate.display()
        ),
    );
    let id = json(&dir, &["run", "sync"])["id"].as_i64().unwrap();
    wait_status(&dir, id, "running");

    // Without --force the restart waits, and defers: nothing is restarted.
    let out = dir.run(&["restart", "--service", "web", "--timeout", "1s"]);
    assert_eq!(out.status.code(), Some(75), "{}", text(&out.stderr));
    assert!(!restarts.exists());

    // With --force the dependent run is cut, owed, and resumed once web is ready.
    let report = json(&dir, &["restart", "--service", "web", "--force"]);
    assert_eq!(report["restarted"], true);
    let cut = wait_status(&dir, id, "interrupted");
    assert_eq!(cut["reason"], "interrupted: its service web was restarted");
    let mut resumed = Value::Null;
    wait_until("the cut run is resumed", || {
        resumed = json(&dir, &["runs", "--job", "sync"])
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["parent_id"] == id)
            .cloned()
            .unwrap_or(Value::Null);
        resumed.is_object()
    });
    wait_status(&dir, resumed["id"].as_i64().unwrap(), "succeeded");
    assert_eq!(std::fs::read_to_string(&restarts).unwrap(), "x\n");
}

#[test]
fn a_dependent_run_failing_during_a_restart_is_interrupted_and_resumed() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_RESUME_DELAY_MS", "0");
    let down = dir.path().join("web-down");
    let proceed = dir.path().join("proceed");
    // The restart keeps the service down until the test lets it come back.
    web(
        &dir,
        &format!(
            "touch {d}; while [ ! -e {p} ]; do sleep 0.02; done; rm {d}",
            d = down.display(),
            p = proceed.display()
        ),
        "true",
    );
    add_job(
        &dir,
        "client",
        &["--depends-on", "web"],
        &format!(
            "if [ \"$STEAD_ATTEMPT\" = 1 ] && [ -e {} ]; then echo web is down; exit 7; fi",
            down.display()
        ),
    );
    let restart = dir
        .stead(&["restart", "--service", "web", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the restart has taken web down", || down.exists());

    // A run started meanwhile fails because web is down: that is the restart's doing.
    let id = json(&dir, &["run", "client"])["id"].as_i64().unwrap();
    let cut = wait_status(&dir, id, "interrupted");
    assert_eq!(
        cut["reason"],
        "interrupted: its service web was being restarted (exited with code 7)"
    );
    assert_eq!(
        cut["resolution"],
        Value::Null,
        "not resumed while web is down"
    );

    std::fs::write(&proceed, b"").unwrap();
    let out = restart.wait_with_output().unwrap();
    assert!(out.status.success());
    let settled = wait_resolved_gate(&dir, id);
    assert!(
        settled["resolution"]
            .as_str()
            .unwrap()
            .starts_with("resumed as run"),
        "{settled}"
    );
}

fn wait_resolved_gate(dir: &StateDir, id: i64) -> Value {
    let mut run = Value::Null;
    wait_until("the cut run is resolved", || {
        run = run_of(dir, id);
        run["resolution"].is_string()
    });
    run
}

#[test]
fn apply_files_declare_services_and_jobs_must_name_known_ones() {
    let dir = StateDir::new();
    std::fs::create_dir_all(dir.path()).unwrap();
    let file = dir.path().join("stack.toml");
    std::fs::write(
        &file,
        r#"
[[service]]
name = "web"
restart = "true"
ready = "true"
systemd_unit = "web.service"

[[job]]
name = "sync"
depends_on = ["web"]
command = ["true"]
"#,
    )
    .unwrap();
    let first = json(&dir, &["apply", file.to_str().unwrap()]);
    assert_eq!(first["services"]["created"][0], "web", "{first}");
    assert_eq!(first["created"][0], "sync");
    let again = json(&dir, &["apply", file.to_str().unwrap()]);
    assert_eq!(again["services"]["unchanged"][0], "web", "{again}");
    let services = json(&dir, &["service", "ls"]);
    let web = services
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "web")
        .unwrap()
        .clone();
    assert_eq!(web["dependents"][0], "sync");

    // A job naming a service nobody declared is refused, and nothing changes.
    let out = dir.run(&["job", "add", "typo", "--depends-on", "wbe", "--", "true"]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("\"wbe\""),
        "{}",
        text(&out.stderr)
    );

    // A service still named by a job cannot be removed.
    let out = dir.run(&["service", "rm", "web"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("sync"), "{}", text(&out.stderr));

    // Pruning to an empty file removes both, jobs first.
    std::fs::write(&file, "").unwrap();
    let pruned = json(&dir, &["apply", file.to_str().unwrap(), "--prune"]);
    assert_eq!(pruned["removed"][0], "sync", "{pruned}");
    assert_eq!(pruned["services"]["removed"][0], "web");
    assert_eq!(json(&dir, &["service", "ls"]).as_array().unwrap().len(), 1);
}

#[test]
fn the_guard_refuses_an_ungated_restart_and_hands_back_the_gated_one() {
    let dir = StateDir::new();
    web(&dir, "systemctl --user restart web.service", "true");
    let out = dir.run(&[
        "guard",
        "--json",
        "--",
        "systemctl --user restart web.service",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["allowed"], false);
    assert_eq!(verdict["service"], "web");
    let instead = verdict["instead"].as_str().unwrap().to_string();
    // The test's state directory is not the default one, so the gate names it.
    let gate = format!(
        "stead --state-dir {} gate --service web &&",
        shell_words::quote(&dir.path().canonicalize().unwrap().to_string_lossy())
    );
    assert!(instead.starts_with(&gate), "{instead}");
    // What it hands back passes.
    assert_eq!(dir.run(&["guard", "--", &instead]).status.code(), Some(0));
    assert_eq!(
        dir.run(&["guard", "--", "git commit -m 'pkill stead'"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        dir.run(&["guard", "--", "sh -c 'sleep 1; pkill stead'"])
            .status
            .code(),
        Some(2)
    );

    // As an agent's pre-tool-use hook.
    let call = br#"{"tool_name": "Bash", "tool_input": {"command": "stead stop"}}"#;
    let out = crate::guard::hook(&dir, call.to_vec());
    assert_eq!(out.status.code(), Some(2));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(!text(&out.stderr).is_empty());
}

#[test]
fn service_mistakes_get_clear_errors_and_codes() {
    let dir = StateDir::new();
    web(&dir, "true", "true");
    let dup = dir.run(&["service", "add", "web"]);
    assert_eq!(dup.status.code(), Some(1), "{}", text(&dup.stderr));
    assert!(text(&dup.stderr).contains("already exists"));
    let missing = dir.run(&["hold", "release", "nobody"]);
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing.stderr));
    let https = dir.run(&[
        "service",
        "add",
        "api",
        "--ready",
        "https://localhost/health",
    ]);
    assert_eq!(https.status.code(), Some(65), "{}", text(&https.stderr));
    assert!(text(&https.stderr).contains("curl"));
}

#[test]
fn a_run_of_a_disabled_job_still_blocks_a_restart() {
    let dir = StateDir::new();
    let gate = dir.path().join("gate");
    web(&dir, "true", "true");
    blocked_job(&dir, "sync", &gate, &[]);
    let id = json(&dir, &["run", "sync"])["id"].as_i64().unwrap();
    wait_status(&dir, id, "running");
    json(&dir, &["job", "disable", "sync"]);
    let readiness = json(&dir, &["readiness", "--service", "web"]);
    assert_eq!(readiness["ready"], false, "{readiness}");
    std::fs::write(&gate, b"").unwrap();
    wait_status(&dir, id, "succeeded");
}
