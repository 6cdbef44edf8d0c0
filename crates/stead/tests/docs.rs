//! The documentation names only what exists: every path of the repository that the
//! README, the CHANGELOG and `docs/` name in backticks is a file or a directory of this tree, and every
//! `stead` command they name is one the program takes (`stead COMMAND --help` answers).
//! A renamed file or command then fails here rather than leaving the docs to drift.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository's root")
}

/// README.md, CHANGELOG.md and every Markdown file of `docs/`, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let root = root();
    let mut paths = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("an entry of docs/").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a readable document");
            (p, text)
        })
        .collect()
}

/// What the docs quote: each span between backticks, and each line of a fenced block,
/// with whether it is shell (a block marked `sh`, `bash` or `console`).
fn code_spans(text: &str) -> Vec<(String, bool)> {
    let mut spans = Vec::new();
    let mut block: Option<bool> = None;
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => Some(matches!(fence.trim(), "sh" | "bash" | "console")),
            };
            continue;
        }
        if let Some(shell) = block {
            spans.push((line.trim().to_string(), shell));
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let Some(span) = parts.next() {
            spans.push((span.to_string(), false));
            parts.next();
        }
    }
    spans
}

/// The top-level names a repository path starts with.
const TOP: [&str; 8] = [
    "crates/",
    "docs/",
    "scripts/",
    "examples/",
    "web-tests/",
    "mcp-tests/",
    ".github/",
    ".ci/",
];

/// The repository paths a span names: words starting with a top-level directory, up to
/// what ends a path in prose (a colon, a parenthesis, a comma).
fn repo_paths(span: &str) -> Vec<String> {
    span.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '"' | '\'' | '='))
        .filter(|w| TOP.iter().any(|top| w.starts_with(top)))
        .map(|w| {
            w.trim_end_matches([':', '.', ';'])
                .split(['#', '*', '{'])
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = root();
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    for (doc, text) in documents() {
        for (span, _) in code_spans(&text) {
            for path in repo_paths(&span) {
                checked += 1;
                if !root.join(&path).exists() {
                    let doc = doc
                        .strip_prefix(&root)
                        .unwrap_or(&doc)
                        .display()
                        .to_string();
                    missing.insert(format!("{doc}: {path}"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} paths were found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The subcommand words of the `stead …` command lines in a span (a line of a shell
/// block, or an inline span that is a command: it starts with the program).
/// Outside a shell block, a span is a command line only when its first word after the
/// program is a command `known` (its subcommand is then checked): prose that quotes a
/// message (`stead server did not become ready`) is none. Shell blocks are read whole.
fn commands(span: &str, shell: bool, known: &BTreeSet<String>) -> Vec<Vec<String>> {
    if shell {
        // Each command of the line (a comment left out), where the program is the word
        // run, not an argument (`createdb -O stead stead`).
        let line = span.split(" #").next().unwrap_or_default();
        let line = line.strip_prefix("$ ").unwrap_or(line);
        return line
            .split(['&', ';', '|', '('])
            .filter_map(|part| {
                let words: Vec<&str> = part.split_whitespace().collect();
                let program = words.first()?;
                (*program == "stead" || program.ends_with("/stead"))
                    .then(|| subcommand(&words[1..]))
                    .filter(|names| !names.is_empty())
            })
            .collect();
    }
    let words: Vec<&str> = span.split_whitespace().collect();
    let Some(first) = words.first() else {
        return Vec::new();
    };
    if *first != "stead" && !first.ends_with("/stead") {
        return Vec::new();
    }
    let names = subcommand(&words[1..]);
    match names.first() {
        Some(name) if known.contains(name) => vec![names],
        _ => Vec::new(),
    }
}

/// The command's names among the words after the program: past `--state-dir DIR`, up
/// to two words that could be a command's (lowercase, no flag).
fn subcommand(words: &[&str]) -> Vec<String> {
    let mut rest = words.iter().peekable();
    if rest.peek() == Some(&&"--state-dir") {
        rest.next();
        rest.next();
    }
    rest.take_while(|w| {
        !w.is_empty()
            && !w.starts_with('-')
            && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
    })
    .take(2)
    .map(|w| w.to_string())
    .collect()
}

/// Whether `stead WORDS --help` answers; with two words, the second may be the first's
/// argument rather than a subcommand, so one word answering is enough then.
fn takes(words: &[String]) -> bool {
    let helps = |words: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_stead"))
            .args(words)
            .arg("--help")
            .env_remove("STEAD_STATE_DIR")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    helps(words) || (words.len() == 2 && helps(&words[..1]) && !has_subcommands(&words[0]))
}

/// Whether `stead WORD` has subcommands of its own (its help lists "Commands:").
fn has_subcommands(word: &str) -> bool {
    Command::new(env!("CARGO_BIN_EXE_stead"))
        .args([word, "--help"])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("Commands:"))
}

/// The commands `stead --help` lists.
fn known_commands() -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_stead"))
        .arg("--help")
        .output()
        .expect("stead --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A command's line, not its wrapped description.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn every_stead_command_the_docs_name_exists() {
    let known = known_commands();
    assert!(known.contains("run") && known.contains("job"), "{known:?}");
    let mut named = BTreeSet::new();
    for (_, text) in documents() {
        for (span, shell) in code_spans(&text) {
            named.extend(commands(&span, shell, &known));
        }
    }
    assert!(named.len() > 30, "only {} commands found", named.len());
    let unknown: Vec<String> = named
        .iter()
        .filter(|words| !takes(words))
        .map(|words| format!("stead {}", words.join(" ")))
        .collect();
    assert!(
        unknown.is_empty(),
        "commands the docs name that stead does not take:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_scans_find_what_they_look_for() {
    assert_eq!(
        repo_paths("crates/stead-sys/src/exit.rs: the exit watch"),
        ["crates/stead-sys/src/exit.rs"]
    );
    assert_eq!(
        repo_paths("see docs/ledger.md#retention, and (scripts/test)."),
        ["docs/ledger.md", "scripts/test"]
    );
    let known: BTreeSet<String> = ["job", "run", "status"].map(String::from).into();
    assert_eq!(
        commands(
            "stead --state-dir DIR job add nightly --cron '0 2 * * *'",
            false,
            &known
        ),
        [vec!["job".to_string(), "add".to_string()]]
    );
    assert_eq!(
        commands("target/release/stead run hello --wait", false, &known),
        [vec!["run".to_string(), "hello".to_string()]]
    );
    assert!(commands("stead server did not become ready", false, &known).is_empty());
    assert_eq!(
        commands("stead job frobnicate --json", false, &known),
        [vec!["job".to_string(), "frobnicate".to_string()]],
        "a known command's subcommand is checked"
    );
    assert_eq!(
        commands("$ stead gone --now # a comment", true, &known),
        [vec!["gone".to_string()]],
        "in a shell block, every command is checked"
    );
    assert_eq!(
        commands("cargo build && stead status --json", true, &known),
        [vec!["status".to_string()]]
    );
}
