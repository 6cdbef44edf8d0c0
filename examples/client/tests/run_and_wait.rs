//! The example against the real `stead` binary: it starts a server through the client
//! library, runs a job and exits with the job's code.

use std::process::Command;

/// The `stead` binary of this workspace, built beside this example.
fn stead() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("stead")
}

struct Server(tempfile::TempDir);

impl Drop for Server {
    fn drop(&mut self) {
        // The server the example started must not outlive the test.
        let _ = Command::new(stead())
            .arg("--state-dir")
            .arg(self.0.path())
            .arg("stop")
            .output();
    }
}

#[test]
fn a_program_with_only_the_client_library_runs_a_job_and_gets_its_code() {
    let stead = stead();
    assert!(
        stead.exists(),
        "build the workspace first: {} is missing",
        stead.display()
    );
    let server = Server(tempfile::tempdir().unwrap());
    let dir = server.0.path();
    let add = Command::new(&stead)
        .arg("--state-dir")
        .arg(dir)
        .args(["job", "add", "seven", "--shell", "--", "echo hi; exit 7"])
        .output()
        .unwrap();
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );

    let out = Command::new(env!("CARGO_BIN_EXE_stead-run-and-wait"))
        .arg("seven")
        .env("STEAD_STATE_DIR", dir)
        .env("STEAD_BIN", &stead)
        .env_remove("STEAD_LOG")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("run 1 of seven: failed"), "{said}");
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
