//! The example against the real `stead` binary: it starts a server through the client
//! library, runs a job, waits for its final attempt and exits as that attempt ended.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `stead` binary of this workspace, built beside this example.
fn stead() -> PathBuf {
    let stead = assert_cmd::cargo::cargo_bin("stead");
    assert!(
        stead.exists(),
        "build the workspace first: {} is missing",
        stead.display()
    );
    stead
}

/// A state directory whose server the example starts, stopped when the test ends.
struct Server(tempfile::TempDir);

impl Server {
    fn new() -> Self {
        Server(tempfile::tempdir().unwrap())
    }

    fn dir(&self) -> &Path {
        self.0.path()
    }

    /// `stead --state-dir DIR ARGS...`, which must succeed.
    fn stead(&self, args: &[&str]) -> Output {
        let out = Command::new(stead())
            .arg("--state-dir")
            .arg(self.dir())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "stead {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `stead job add WORDS... --shell -- SCRIPT`: a job named by the first word.
    fn add_job(&self, words: &str, script: &str) {
        let mut args = vec!["job", "add"];
        args.extend(words.split_whitespace());
        args.extend(["--shell", "--", script]);
        self.stead(&args);
    }

    /// The example, to run `job` on this state directory.
    fn example(&self, job: &str) -> Command {
        let mut example = Command::new(env!("CARGO_BIN_EXE_stead-run-and-wait"));
        example
            .arg(job)
            .env("STEAD_STATE_DIR", self.dir())
            .env("STEAD_BIN", stead())
            .env_remove("STEAD_LOG");
        example
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The server the example started must not outlive the test.
        let _ = Command::new(stead())
            .arg("--state-dir")
            .arg(self.dir())
            .arg("stop")
            .output();
    }
}

/// What the example said on stdout, and its exit code.
fn outcome(out: &Output) -> (String, Option<i32>) {
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    (said, out.status.code())
}

#[test]
fn a_program_with_only_the_client_library_runs_a_job_and_gets_its_code() {
    let server = Server::new();
    server.add_job("seven", "echo hi; exit 7");

    let (said, code) = outcome(&server.example("seven").output().unwrap());
    assert_eq!(code, Some(7), "{said}");
    assert!(said.contains("run 1 of seven: failed"), "{said}");
}

/// A command that runs until it is stopped, and then exits 0 (on SIGTERM, which a cancel
/// and a timeout send), as a tidy program does; it touches `ready` once it listens.
fn tidy(ready: &Path) -> String {
    format!(
        "trap 'exit 0' TERM; touch '{}'; while :; do sleep 0.1; done",
        ready.display()
    )
}

#[test]
fn a_cancelled_run_is_not_a_success_though_its_command_exits_0() {
    let server = Server::new();
    let ready = server.dir().join("listening");
    server.add_job("tidy", &tidy(&ready));

    let example = server
        .example("tidy")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stead(&["cancel", "1"]);

    let (said, code) = outcome(&example.wait_with_output().unwrap());
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("run 1 of tidy: cancelled"), "{said}");
}

#[test]
fn a_timed_out_run_is_not_a_success_though_its_command_exits_0() {
    let server = Server::new();
    let ready = server.dir().join("listening");
    server.add_job("slow --timeout 1s", &tidy(&ready));

    let (said, code) = outcome(&server.example("slow").output().unwrap());
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("run 1 of slow: failed"), "{said}");
    // The command's own code was 0: the run's status, not its code, says it failed.
    let shown = server.stead(&["show", "1", "--json"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("\"exit_code\": 0,"), "{shown}");
}

#[test]
fn a_failure_is_followed_through_its_retry_to_the_final_attempt() {
    let server = Server::new();
    let tried = server.dir().join("tried");
    // The first attempt fails with 3; its retry finds the mark and succeeds.
    let script = format!(
        "test -e '{m}' && exit 0; touch '{m}'; exit 3",
        m = tried.display()
    );
    server.add_job("flaky --retries 1 --retry-delay 200ms", &script);

    let (said, code) = outcome(&server.example("flaky").output().unwrap());
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("run 2 of flaky: succeeded"), "{said}");
}

#[test]
fn without_a_stead_to_start_it_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stead-run-and-wait"))
        .arg("anything")
        .env("STEAD_STATE_DIR", dir.path())
        .env_remove("STEAD_BIN")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(69));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("set STEAD_BIN"), "{said}");
}
