//! `stead completions SHELL` and `stead man`, run as the real binary: each shell's script
//! names the visible subcommands and not the hidden `monitor`, the man page is roff, and
//! `man --dir` writes a page per subcommand. Neither command touches a state directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `stead` with `args` against a state directory that must stay uncreated, and
/// returns its stdout, asserting it succeeded, wrote nothing to stderr, and left that
/// directory alone.
fn stead(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let output = Command::new(env!("CARGO_BIN_EXE_stead"))
        .args(args)
        .env("STEAD_STATE_DIR", &state)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_success(args, &output);
    assert!(
        !state.exists(),
        "`stead {args:?}` created the state directory"
    );
    String::from_utf8(output.stdout).unwrap()
}

fn assert_success(args: &[&str], output: &Output) {
    assert!(
        output.status.success(),
        "`stead {args:?}` failed with {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "`stead {args:?}` wrote to stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Asserts `text` names the visible subcommands and never the hidden one.
fn assert_names_visible_subcommands(what: &str, text: &str) {
    for sub in ["status", "job", "gate", "restart", "completions", "man"] {
        assert!(text.contains(sub), "{what} does not mention `{sub}`");
    }
    assert!(
        !text.contains("monitor"),
        "{what} mentions the hidden `monitor`"
    );
}

#[test]
fn bash_completions_name_the_subcommands_and_parse() {
    let script = stead(&["completions", "bash"]);
    assert!(script.contains("complete"), "no `complete` in:\n{script}");
    assert_names_visible_subcommands("the bash script", &script);

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("stead.bash");
    std::fs::write(&path, &script).unwrap();
    match Command::new("bash").arg("-n").arg(&path).output() {
        Ok(check) => assert!(
            check.status.success(),
            "bash -n rejects the script: {}",
            String::from_utf8_lossy(&check.stderr)
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("bash is not installed: syntax check skipped");
        }
        Err(e) => panic!("cannot run bash: {e}"),
    }
}

#[test]
fn zsh_completions_are_a_compdef_file() {
    let script = stead(&["completions", "zsh"]);
    assert!(
        script.starts_with("#compdef stead"),
        "does not start with `#compdef stead`:\n{script}"
    );
    assert_names_visible_subcommands("the zsh script", &script);
}

#[test]
fn fish_completions_complete_stead() {
    let script = stead(&["completions", "fish"]);
    assert!(
        script.contains("complete -c stead"),
        "no `complete -c stead` in:\n{script}"
    );
    assert_names_visible_subcommands("the fish script", &script);
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_stead"))
        .args(["completions", "tcsh"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}

/// Asserts `page` is a roff man page titled `title` in section 1.
fn assert_man_page(page: &str, title: &str) {
    let th = page
        .lines()
        .find(|line| line.starts_with(".TH"))
        .unwrap_or_else(|| panic!("no .TH line in:\n{page}"));
    assert!(
        th.starts_with(&format!(".TH {title} 1 ")),
        "the title line is {th:?}"
    );
    // Before the title only the roff preamble: requests, no text.
    for line in page.lines().take_while(|line| !line.starts_with(".TH")) {
        assert!(line.starts_with('.'), "text before .TH: {line:?}");
    }
    assert!(page.contains(".SH NAME"), "no NAME section in:\n{page}");
    assert!(
        page.contains(".SH SYNOPSIS"),
        "no SYNOPSIS section in:\n{page}"
    );
}

#[test]
fn man_prints_the_stead_page() {
    let page = stead(&["man"]);
    assert_man_page(&page, "stead");
    assert_names_visible_subcommands("the man page", &page);
}

#[test]
fn man_dir_writes_a_page_per_subcommand_and_lists_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("share/man/man1");
    let listed = stead(&["man", "--dir", dir.to_str().unwrap()]);

    let listed: Vec<PathBuf> = listed.lines().map(PathBuf::from).collect();
    let mut on_disk: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    on_disk.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        sorted, on_disk,
        "the paths printed are not the files written"
    );
    assert_eq!(
        listed[0],
        dir.join("stead.1"),
        "stead.1 is not listed first"
    );

    let name = |path: &Path| path.file_name().unwrap().to_str().unwrap().to_owned();
    let names: Vec<String> = listed.iter().map(|path| name(path)).collect();
    for expected in [
        "stead.1",
        "stead-status.1",
        "stead-job.1",
        "stead-job-add.1",
        "stead-gate.1",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not written: {names:?}"
        );
    }
    assert!(
        !names
            .iter()
            .any(|n| n.contains("monitor") || n.contains("help")),
        "a page for a hidden or help subcommand: {names:?}"
    );

    assert_man_page(
        &std::fs::read_to_string(dir.join("stead.1")).unwrap(),
        "stead",
    );
    let gate = std::fs::read_to_string(dir.join("stead-gate.1")).unwrap();
    assert_man_page(&gate, "stead-gate");
    assert!(gate.contains("gate"));

    // Writing again over the same directory replaces the pages.
    let again = stead(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(again.lines().count(), listed.len());
}
