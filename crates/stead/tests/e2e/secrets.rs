//! Secrets end to end: a value set with `stead secret set` reaches the command of a job
//! that names it, and nothing else: not the ledger, the logs, the server's log, any
//! command's output or the HTTP API. A run on a host that lacks it fails to start, and a
//! notifier's URL is shown with its token masked.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::api::Api;
use crate::harness::*;

const VALUE: &str = "tok-5e3f9a1c-d00d-never-shown";

/// `stead secret set NAME`, the value on stdin as a script would give it.
pub fn set_secret(dir: &StateDir, name: &str, value: &str) {
    let mut child = dir
        .stead(&["secret", "set", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("stead runs");
    writeln!(child.stdin.take().unwrap(), "{value}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains(value));
}

/// Every file under `root` whose bytes hold `needle`, but `except`.
fn files_holding(root: &Path, needle: &str, except: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file()
                && path != except
                && std::fs::read(&path)
                    .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn a_secret_reaches_its_command_alone_and_is_masked_everywhere_else() {
    let dir = StateDir::new();
    set_secret(&dir, "API_TOKEN", VALUE);
    let listed = json(&dir, &["secret", "ls"]);
    assert_eq!(listed[0]["name"], "API_TOKEN", "{listed}");
    assert!(listed[0]["set_at"].is_string(), "{listed}");
    assert!(!listed.to_string().contains(VALUE));

    let out_file = dir.root().join("handed.txt");
    let script = format!(
        "echo \"token=$API_TOKEN\"; echo \"gh=$GH\" >&2; printf %s \"$GH\" > {}",
        out_file.display()
    );
    add_job(
        &dir,
        "leaky",
        &["--secret", "API_TOKEN", "--secret", "GH=API_TOKEN"],
        &script,
    );
    let run = json(&dir, &["run", "leaky", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    let id = run["id"].as_i64().unwrap().to_string();

    // The command had the value, as both variables.
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), VALUE);
    // Its log has the mask instead.
    let log = text(&dir.run(&["logs", &id]).stdout);
    assert!(log.contains("token=[secret API_TOKEN]\n"), "{log}");
    assert!(log.contains("gh=[secret API_TOKEN]\n"), "{log}");

    // What the CLI shows, as text and JSON.
    for args in [
        vec!["show", &id],
        vec!["show", &id, "--json"],
        vec!["runs"],
        vec!["runs", "--json"],
        vec!["job", "show", "leaky"],
        vec!["job", "show", "leaky", "--json"],
        vec!["job", "ls"],
        vec!["job", "ls", "--json"],
        vec!["logs", &id],
        vec!["status", "--json"],
    ] {
        let out = dir.run(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(!shown.contains(VALUE), "{args:?} shows the value: {shown}");
    }
    // The job keeps the names only.
    let job = json(&dir, &["job", "show", "leaky"]);
    assert_eq!(
        job["secrets"],
        serde_json::json!(["API_TOKEN", "GH=API_TOKEN"])
    );

    // The HTTP API.
    let api = Api::start(&dir);
    for path in [
        format!("/api/runs/{id}"),
        format!("/api/runs/{id}/log"),
        "/api/runs".to_string(),
        "/api/jobs/leaky".to_string(),
        "/api/jobs".to_string(),
    ] {
        let answer = api.get(&path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        assert!(!answer.text().contains(VALUE), "{path}: {}", answer.text());
    }
    assert!(
        api.get(&format!("/api/runs/{id}/log"))
            .text()
            .contains("[secret API_TOKEN]")
    );

    // No file of the state directory holds it but the store: not the ledger (its
    // plans, its write-ahead log), the run's log, nor the server's log.
    let store = dir.path().join("secrets.json");
    assert_eq!(
        files_holding(dir.path(), VALUE, &store),
        Vec::<String>::new()
    );
    assert_eq!(files_holding(dir.path(), VALUE, Path::new("")).len(), 1);

    // `stead doctor` checks the store is the user's own and private.
    assert_eq!(doctor_check(&dir, "secrets")["health"], "ok");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
    let check = doctor_check(&dir, "secrets");
    assert_eq!(check["health"], "problem", "{check}");
    assert!(
        check["fix"].as_str().unwrap().contains("chmod 600"),
        "{check}"
    );
    // And a run refuses a store others may read.
    let refused = json_anyway(&dir, &["run", "leaky", "--wait"]);
    assert_eq!(refused["status"], "failed", "{refused}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(reason.contains("has mode 0644"), "{reason}");

    // Removed (the store private again), it is gone from the list and from the file.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    json(&dir, &["secret", "rm", "API_TOKEN"]);
    assert_eq!(json(&dir, &["secret", "ls"]), serde_json::json!([]));
    assert_eq!(
        files_holding(dir.path(), VALUE, Path::new("")),
        Vec::<String>::new()
    );
    let out = dir.run(&["secret", "rm", "API_TOKEN"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn a_run_needing_a_secret_this_host_lacks_fails_to_start_naming_it() {
    let dir = StateDir::new();
    let ran = dir.root().join("ran");
    let file = dir.root().join("jobs.toml");
    std::fs::write(
        &file,
        format!(
            "[[job]]\nname = \"needs\"\nsecrets = [\"GH=GITHUB_TOKEN\"]\ncommand = [\"touch\", \"{}\"]\n",
            ran.display()
        ),
    )
    .unwrap();
    let out = dir.run(&["apply", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = dir.run(&["run", "needs", "--wait"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let run = &runs_of(&dir, "needs")[0];
    assert_eq!(run["status"], "failed", "{run}");
    let reason = run["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("failed to start: secret GITHUB_TOKEN is not set on host "),
        "{reason}"
    );
    assert!(!ran.exists(), "the command never ran");

    // A bad name is refused at once, as data.
    let out = dir.run(&["job", "add", "bad", "--secret", "GH=", "--", "true"]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let out = dir.run(&["secret", "set", "1BAD"]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
}

#[test]
fn a_notifiers_token_is_masked_in_notify_ls_and_the_api() {
    let dir = StateDir::new();
    let urls = [
        "http://127.0.0.1:9/hook?auth=tk-QUERY-TOKEN&topic=ops",
        "http://me:pw-USERINFO-TOKEN@127.0.0.1:9/hook",
    ];
    for (i, url) in urls.iter().enumerate() {
        let name = format!("n{i}");
        let added = dir.run(&["notify", "add", &name, "--url", url, "--json"]);
        assert!(added.status.success(), "{}", text(&added.stderr));
        assert!(
            !text(&added.stdout).contains("TOKEN"),
            "{}",
            text(&added.stdout)
        );
    }
    let api = Api::start(&dir);
    let tested = dir.run(&["notify", "test", "n0", "--json"]);
    let shown = [
        text(&dir.run(&["notify", "ls"]).stdout),
        text(&dir.run(&["notify", "ls", "--json"]).stdout),
        text(&tested.stdout),
        text(&tested.stderr),
        api.get("/api/notifiers").text(),
    ];
    for shown in &shown {
        assert!(!shown.contains("TOKEN"), "{shown}");
    }
    assert!(shown[1].contains("?auth=***&topic=***"), "{}", shown[1]);
    assert!(
        shown[1].contains("http://***@127.0.0.1:9/hook"),
        "{}",
        shown[1]
    );
    assert!(shown[4].contains("?auth=***&topic=***"), "{}", shown[4]);
}
