//! stead's own command lines, as the guard reads them: the gate that opens a chain
//! (only a real one counts: waiting, aimed at the guard's own ledger), and the stop
//! that needs one.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use std::sync::LazyLock;

use regex::Regex;
use stead_protocol::STEAD_SERVICE;

use super::opts::{self, Spec};
use super::words::{Arg, basename};

/// Services whose gate has passed.
pub(crate) type Gates = BTreeSet<String>;

/// The environment variable naming stead's state directory.
pub(crate) const STATE_DIR_ENV: &str = "STEAD_STATE_DIR";

/// The stead the guard protects: its ledger, and what tells a real gate for it from
/// another. A gate counts only when it is aimed at this state directory and run by a
/// real stead.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    /// The guard's state directory; `None` when not known, and then only a gate with
    /// no `--state-dir` and no `STEAD_STATE_DIR` counts.
    pub state_dir: Option<PathBuf>,
    /// Where `stead` with neither goes in the command's environment.
    pub default_state_dir: Option<PathBuf>,
    /// The socket of the guard's server, which only stead may talk to.
    pub socket: Option<PathBuf>,
    /// The stead executable the guard itself is: a gate run by path must be this one
    /// (`/tmp/x/stead gate` could be anything). `None`: any absolute path is taken.
    pub exe: Option<PathBuf>,
}

impl Protected {
    /// Whether a stead command line given this state directory (`None`: none given)
    /// reaches the guard's ledger.
    fn is_own(&self, dir: Option<&Arg>) -> bool {
        let Some(own) = &self.state_dir else {
            return dir.is_none();
        };
        match dir {
            None => self
                .default_state_dir
                .as_ref()
                .is_some_and(|d| same_dir(d, own)),
            // A relative path depends on a directory the command may have left.
            Some(dir) if dir.is_exact() => absolute(&dir.text).is_some_and(|d| same_dir(&d, own)),
            Some(_) => false,
        }
    }

    /// Whether a program word runs the real stead: `stead` looked up in `PATH`, or an
    /// absolute path to the guard's own executable (`./stead` and `/tmp/x/stead` could
    /// be anything).
    fn is_stead(&self, program: &Arg) -> bool {
        if program.text == "stead" {
            return true;
        }
        let Some(path) = absolute(&program.text) else {
            return false;
        };
        match &self.exe {
            None => true,
            Some(exe) => match (path.canonicalize(), exe.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            },
        }
    }

    /// The words before a subcommand that aim it at the guard's ledger: none when a
    /// bare `stead` does already.
    fn flag(&self) -> String {
        match &self.state_dir {
            Some(own) if !self.is_own(None) => {
                format!(
                    " --state-dir {}",
                    shell_words::quote(&own.to_string_lossy())
                )
            }
            _ => String::new(),
        }
    }

    /// A stead subcommand aimed at the guard's ledger, as the guard suggests it.
    pub(crate) fn command(&self, subcommand: &str) -> String {
        format!("stead{} {subcommand}", self.flag())
    }

    /// The gate for one service, as the guard suggests it.
    pub(crate) fn gate_for(&self, service: &str) -> String {
        match service {
            STEAD_SERVICE => self.command("gate"),
            name => self.command(&format!("gate --service {}", shell_words::quote(name))),
        }
    }
}

/// An absolute path as written in a command (`~` is the home directory); `None` for a
/// relative one.
fn absolute(text: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (text.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(text),
    };
    path.is_absolute().then_some(path)
}

/// Whether two paths name one directory: the same once `.`, `..` and repeated
/// slashes are resolved, or the same file once links are.
fn same_dir(a: &Path, b: &Path) -> bool {
    let lexical = |p: &Path| {
        let mut out = PathBuf::new();
        for part in p.components() {
            match part {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    };
    if lexical(a) == lexical(b) {
        return true;
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The subcommand of a `stead` command line and the words after it, past the global
/// `--state-dir` (a `--help` or `--version` before it reads as the subcommand, and is
/// no gate or stop).
pub(crate) fn subcommand(argv: &[Arg]) -> Option<(&str, &[Arg])> {
    if basename(&argv.first()?.text) != "stead" {
        return None;
    }
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        match arg.text.as_str() {
            "--state-dir" => i += 2,
            text if text.starts_with("--state-dir=") => i += 1,
            _ => break,
        }
    }
    let sub = argv.get(i).filter(|a| a.is_exact())?;
    Some((sub.text.as_str(), &argv[i + 1..]))
}

/// Whether a stead command line only asks for help or a version.
pub(crate) fn asks_help(rest: &[Arg]) -> bool {
    rest.iter()
        .take_while(|a| a.text != "--")
        .any(|a| matches!(a.text.as_str(), "-h" | "--help" | "-V" | "--version"))
}

/// A definition of `stead` as a function (`stead() {`, `function stead`), an alias, or
/// a hashed path (`hash -p /bin/true stead`).
static REDEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(^|[^\w./-])stead\s*\(\s*\)|\bfunction\s+stead\b|\balias\b[^;&|\n]*[\s=]stead=|\balias\s+stead=|\bhash\b[^;&|\n]*\bstead\b",
    )
    .expect("a valid pattern")
});

/// Whether a command (quotes removed) may redefine `stead`, after which only a gate
/// that runs first of all is stead's own.
pub(crate) fn redefined(plain: &str) -> bool {
    REDEFINITION.is_match(plain)
}

const GATE: Spec = Spec::values(
    "",
    &["service", "timeout", "interval", "window", "state-dir"],
);

/// The services a `stead gate` command line waits for (`stead` unless it names one),
/// when it is a real, waiting gate aimed at the guard's ledger; none otherwise:
/// `--help` and `--force` do not wait, and a gate given another `--state-dir` or
/// `STEAD_STATE_DIR` (`env_dir`) waits on another ledger.
pub(crate) fn gate(argv: &[Arg], env_dir: Option<&Arg>, dirs: &Protected) -> Gates {
    let Some(("gate", rest)) = subcommand(argv) else {
        return Gates::new();
    };
    if asks_help(rest) || rest.iter().any(|a| a.text == "--force") || !dirs.is_stead(&argv[0]) {
        return Gates::new();
    }
    let global = opts::scan(&argv[1..], &GATE);
    let flag = global.value("state-dir").cloned();
    if !dirs.is_own(flag.as_ref().or(env_dir)) {
        return Gates::new();
    }
    let scan = opts::scan(rest, &GATE);
    let named: Vec<&Arg> = scan
        .options
        .iter()
        .filter(|o| o.name == "service")
        .filter_map(|o| o.value.as_ref())
        .collect();
    match named.as_slice() {
        [] => Gates::from([STEAD_SERVICE.to_owned()]),
        [one] if one.is_exact() => Gates::from([one.text.clone()]),
        // Named twice, the gate fails; named by an expansion, it gates the unknown.
        _ => Gates::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Arg> {
        shell_words::split(line)
            .unwrap()
            .iter()
            .map(|w| Arg::literal(w))
            .collect()
    }

    #[test]
    fn only_a_waiting_gate_on_the_own_ledger_counts() {
        let dirs = Protected {
            state_dir: Some(PathBuf::from("/srv/stead")),
            default_state_dir: Some(PathBuf::from("/srv/stead")),
            socket: None,
            exe: None,
        };
        let gates = |line: &str| gate(&words(line), None, &dirs);
        assert_eq!(
            gates("stead gate --service web"),
            Gates::from(["web".to_owned()])
        );
        assert_eq!(gates("stead gate"), Gates::from(["stead".to_owned()]));
        assert_eq!(gates("stead --state-dir /srv/stead/ gate").len(), 1);
        assert_eq!(gates("stead gate --state-dir=/srv/./stead").len(), 1);
        for refused in [
            "stead gate --service web --help",
            "stead gate -h",
            "stead -V gate",
            "stead gate --force",
            "stead --state-dir /tmp/other gate",
            "stead gate --service web --service db",
            "stead status",
        ] {
            assert!(gates(refused).is_empty(), "{refused}");
        }
        let other = Arg::literal("/tmp/other");
        assert!(gate(&words("stead gate"), Some(&other), &dirs).is_empty());
        let elsewhere = Protected {
            default_state_dir: Some(PathBuf::from("/home/u/.local/state/stead")),
            ..dirs.clone()
        };
        assert!(gate(&words("stead gate"), None, &elsewhere).is_empty());
        assert_eq!(
            elsewhere.gate_for("web"),
            "stead --state-dir /srv/stead gate --service web"
        );
        assert_eq!(dirs.gate_for("stead"), "stead gate");
    }

    #[test]
    fn redefinitions_of_stead() {
        for line in [
            "stead() { :; }",
            "function stead { :; }",
            "alias stead=true",
            "alias ll=ls stead=true",
            "hash -p /bin/true stead",
        ] {
            assert!(redefined(line), "{line}");
        }
        for line in [
            "stead gate && pkill stead",
            "homestead() { :; }",
            "echo stead",
        ] {
            assert!(!redefined(line), "{line}");
        }
    }
}
