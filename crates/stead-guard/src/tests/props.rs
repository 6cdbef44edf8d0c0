//! Properties over generated commands: a refused command stays refused inside any
//! wrapper, shell, subshell, group, conditional, loop or function, and split anywhere
//! by a line continuation; any piece of a command line of stead's own processes, as a
//! `pkill -f` pattern, is refused; and random nesting of any depth and size never
//! crashes the guard and never allows what it cannot read.

use proptest::prelude::*;

use super::{check, installed, refused_service};
use crate::Verdict;
use crate::limits;
use crate::shell::{self, Context};
use crate::stead_cmd::Protected;

/// The most bytes the parsers may be handed per byte of command, and besides: each
/// byte is read as part of at most eight nested scripts and sixteen nested expansions.
const WORK_PER_BYTE: usize = 64;
const WORK_BASE: usize = 1 << 16;

/// The guard's work on a command, in bytes handed to the parsers (0 when it is
/// refused before parsing).
fn work(command: &str) -> usize {
    let owned = command.to_owned();
    let walked = limits::contained(
        limits::stack(limits::substitutions(command)),
        limits::DEADLINE,
        move || {
            let dirs = Protected::default();
            let ctx = Context::bare(&dirs, limits::MAX_SUBSTITUTIONS);
            shell::walk(&owned, &ctx).map_or(0, |walk| walk.work)
        },
    );
    walked.expect("the reader finishes")
}

/// Commands that are refused on their own, each for the service given.
const REFUSED: &[(&str, &str)] = &[
    ("pkill stead", "stead"),
    ("stead stop", "stead"),
    ("systemctl --user restart web.service", "web"),
    ("systemctl restart web", "web"),
    ("killall -9 postgres", "db"),
    ("./bin/restart-db --graceful", "db"),
    ("launchctl kickstart -k gui/501/com.example.web", "web"),
    ("kill $(pgrep web-server)", "web"),
    ("service web restart", "web"),
    ("docker restart web", "web"),
];

/// Commands refused although they name no service (every process, stead's own command
/// line): what the guard cannot read there is not refused for a mention.
const NAMING_NOTHING: &[(&str, &str)] = &[
    ("kill -9 -1", "stead"),
    ("pkill -f 'serve --spawned'", "stead"),
];

/// How a wrapping takes the command and what it makes of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Before a simple command, making a simple command (`sudo CMD`).
    Prefix,
    /// Around the command quoted as one word, making a simple command (`sh -c 'CMD'`).
    Quoted,
    /// Around any command, making a compound one (`( CMD )`, `if …; then CMD; fi`).
    Compound,
}
use Kind::{Compound, Prefix, Quoted};

/// A way to run a command: `{}` stands for it, `{q}` for it quoted as one word, `{bang}`
/// for it after a `!`, quoted.
const WRAPPINGS: &[(&str, Kind)] = &[
    ("sudo -u root {}", Prefix),
    ("sudo -- {}", Prefix),
    ("doas {}", Prefix),
    ("env A=1 {}", Prefix),
    ("nohup {}", Prefix),
    ("exec {}", Prefix),
    ("command {}", Prefix),
    ("time {}", Prefix),
    ("nice -n 5 {}", Prefix),
    ("timeout 5 {}", Prefix),
    ("setsid -w {}", Prefix),
    ("stdbuf -oL {}", Prefix),
    ("chrt -f 10 {}", Prefix),
    ("taskset -c 0 {}", Prefix),
    ("ionice -c 3 {}", Prefix),
    ("flock /tmp/l {}", Prefix),
    ("flock /tmp/l -c {q}", Quoted),
    ("systemd-run --user --wait {}", Prefix),
    ("pkexec {}", Prefix),
    ("run0 {}", Prefix),
    ("setpriv --reuid=0 {}", Prefix),
    ("firejail --quiet {}", Prefix),
    ("bwrap --bind / / {}", Prefix),
    ("unshare -r {}", Prefix),
    ("nsenter -t 1 -m {}", Prefix),
    ("chroot / {}", Prefix),
    ("strace -f -o /tmp/t {}", Prefix),
    ("ltrace {}", Prefix),
    ("perf stat {}", Prefix),
    ("valgrind -q {}", Prefix),
    ("busybox {}", Prefix),
    ("caffeinate -i {}", Prefix),
    ("prlimit --nofile=64 {}", Prefix),
    ("xargs -0 {} < /dev/null", Prefix),
    ("sh -c {q}", Quoted),
    ("bash -lc {q}", Quoted),
    ("zsh -c {q}", Quoted),
    ("dash -c {q}", Quoted),
    ("busybox sh -c {q}", Quoted),
    ("su - root -c {q}", Quoted),
    ("eval {q}", Quoted),
    ("bash <<< {q}", Quoted),
    ("watch -n 1 {q}", Quoted),
    ("ssh host {q}", Quoted),
    ("tmux new -d {q}", Quoted),
    ("script -qc {q} /dev/null", Quoted),
    ("find . -exec sh -c {q} \\;", Quoted),
    ("( {} )", Compound),
    ("( ( {} ) )", Compound),
    ("{ {}; }", Compound),
    ("if true; then {}; fi", Compound),
    ("if false; then :; else {}; fi", Compound),
    ("while true; do {}; break; done", Compound),
    ("until false; do {}; done", Compound),
    ("for i in 1 2; do {}; done", Compound),
    ("case x in *) {};; esac", Compound),
    ("f() { {}; }; f", Compound),
    ("f() { {}; }", Compound),
    ("echo $( {} )", Compound),
    ("true && {}", Compound),
    ("false || {}", Compound),
    ("cargo build; {}", Compound),
    ("trap {q} EXIT", Quoted),
    ("git -c alias.x={bang} x", Quoted),
    ("uv run {}", Prefix),
];

/// Whether a line continuation after `before` is one the shell joins: not in single
/// quotes, not after a backslash.
fn joins_at(before: &str) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in before.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
    }
    !single && !escaped
}

fn wrap(wrapping: &str, command: &str) -> String {
    wrapping
        .replace("{q}", &shell_words::quote(command))
        .replace("{bang}", &shell_words::quote(&format!("!{command}")))
        .replace("{}", command)
}

#[test]
fn every_wrapping_of_every_refused_command_stays_refused() {
    let mut wrong = Vec::new();
    for (command, service) in REFUSED {
        assert_eq!(
            refused_service(&check(command)),
            Some(*service),
            "{command}"
        );
        for (wrapping, _) in WRAPPINGS {
            let wrapped = wrap(wrapping, command);
            if refused_service(&check(&wrapped)) != Some(*service) {
                wrong.push(wrapped);
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} allowed:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The command lines the processes of the stead `installed` guards show, as stead starts them: by hand,
/// by its unit, by a client (`--spawned`), each run's monitor, the spawner.
const STEAD_COMMAND_LINES: &[&str] = &[
    "stead serve",
    "stead --state-dir /var/lib/ledger serve",
    "/opt/tools/bin/stead --state-dir /var/lib/ledger serve",
    "/opt/tools/bin/steadd --state-dir /var/lib/ledger serve --spawned",
    "/opt/tools/bin/steadd --state-dir /var/lib/ledger monitor",
    "/opt/tools/bin/steadd --state-dir /var/lib/ledger spawner",
];

/// Text as an extended regular expression that matches exactly it.
fn literal_pattern(text: &str) -> String {
    let mut pattern = String::new();
    for c in text.chars() {
        if "\\.[](){}*+?|^$".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any piece of the command line of one of stead's processes, as a `pkill -f`
    /// pattern, kills it, and is refused.
    #[test]
    fn a_piece_of_a_stead_command_line_is_refused(
        which in 0..STEAD_COMMAND_LINES.len(),
        start in any::<prop::sample::Index>(),
        len in 1..40usize,
    ) {
        let line = STEAD_COMMAND_LINES[which];
        let start = start.index(line.len());
        let piece = &line[start..line.len().min(start + len)];
        let command = format!("pkill -f -- {}", shell_words::quote(&literal_pattern(piece)));
        let verdict = installed().check(&command);
        prop_assert_eq!(refused_service(&verdict), Some("stead"), "{}", command);
    }

    /// Wrappings stacked on each other keep a refusal.
    #[test]
    fn stacked_wrappings_stay_refused(
        which in 0..REFUSED.len(),
        wrappings in proptest::collection::vec(0..WRAPPINGS.len(), 1..4),
    ) {
        let (command, service) = REFUSED[which];
        let mut wrapped = command.to_owned();
        let mut simple = true;
        for at in wrappings {
            let (wrapping, kind) = WRAPPINGS[at];
            if kind == Prefix && !simple {
                // `sudo ( … )` is no shell command; `sudo sh -c '( … )'` is.
                wrapped = wrap("sh -c {q}", &wrapped);
            }
            wrapped = wrap(wrapping, &wrapped);
            simple = kind != Compound;
        }
        let verdict = check(&wrapped);
        // Past eight nested scripts the guard stops reading and refuses for what the
        // command mentions, which is the same service.
        prop_assert_eq!(refused_service(&verdict), Some(service), "{}", wrapped);
    }

    /// Random nesting of any depth never crashes the guard, never allows what it
    /// cannot read, gives no suggestion for a command refused unread, and does work
    /// (bytes handed to the parsers) linear in the command's size.
    #[test]
    fn random_nesting_never_crashes(
        parts in proptest::collection::vec(0..8usize, 0..3000),
        inner in 0..REFUSED.len(),
    ) {
        const OPEN: &[&str] = &["{ ", "( ", "if true; then ", "while :; do ", "$(", "\"$(", "${x:-", "case x in x) "];
        const CLOSE: &[&str] = &["; }", " )", "; fi", "; done", ")", ")\"", "}", ";; esac"];
        let mut command = String::new();
        for &p in &parts {
            command.push_str(OPEN[p]);
        }
        command.push_str(REFUSED[inner].0);
        for &p in parts.iter().rev() {
            command.push_str(CLOSE[p]);
        }
        match check(&command) {
            Verdict::Allow => prop_assert!(false, "allowed: {}", &command[..command.len().min(200)]),
            Verdict::Refuse(refusal) => {
                prop_assert!(refusal.service.is_some() || refusal.instead.is_none());
            }
        }
        let work = work(&command);
        prop_assert!(work <= WORK_PER_BYTE * command.len() + WORK_BASE, "{work} bytes of work for {}", command.len());
    }

    /// Arbitrary shell-ish text never panics through the guard.
    #[test]
    fn the_guard_never_panics(command in r#"(stead|pkill|sh -c |<<EOF\n|\nEOF|\$\(|\$\{|[a-z $'"`(){}|&;<>\\\n#=*!-]){0,60}"#) {
        let _ = check(&command);
    }
}

proptest! {
    // Few of the places a continuation can go change how the parser reads a command.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// A line continuation anywhere in a refused command (but in single quotes, which
    /// keep it, or after a backslash, which would escape it) is joined by the shell,
    /// which then runs the same command: it stays refused, or is refused unread where
    /// the parser would read it otherwise.
    #[test]
    fn a_continuation_anywhere_keeps_a_refusal(
        which in any::<prop::sample::Index>(),
        wrapping in 0..WRAPPINGS.len(),
        at in any::<prop::sample::Index>(),
    ) {
        let commands: Vec<_> = REFUSED.iter().chain(NAMING_NOTHING).collect();
        let (command, service) = *commands[which.index(commands.len())];
        let wrapped = wrap(WRAPPINGS[wrapping].0, command);
        let at = at.index(wrapped.len() + 1);
        prop_assume!(joins_at(&wrapped[..at]));
        let split = format!("{}\\\n{}", &wrapped[..at], &wrapped[at..]);
        let verdict = check(&split);
        let refused = refused_service(&verdict);
        prop_assert!(refused == Some(service) || refused == Some("(unread)"), "{:?}: {:?}", split, verdict);
    }
}
