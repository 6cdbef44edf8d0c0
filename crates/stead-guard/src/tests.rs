//! The guard's rules as a table: each command, and the service it must be refused for
//! (`None`: allowed).

use stead_protocol::ServiceSpec;

use super::{Verdict, check};

/// `web` declares every form; `db` is reached through its restart string and process.
fn services() -> Vec<ServiceSpec> {
    vec![
        ServiceSpec {
            name: "web".into(),
            restart: Some("systemctl --user restart web.service".into()),
            systemd_unit: Some("web.service".into()),
            launchd_label: Some("com.example.web".into()),
            process: Some("web-server".into()),
            ..ServiceSpec::default()
        },
        ServiceSpec {
            name: "db".into(),
            restart: Some("cd /srv/db && ./bin/restart-db --graceful".into()),
            launchd_label: Some("org.example.db".into()),
            process: Some("postgres".into()),
            ..ServiceSpec::default()
        },
    ]
}

const STEAD: Option<&str> = Some("stead");
const WEB: Option<&str> = Some("web");
const DB: Option<&str> = Some("db");
const ALLOWED: Option<&str> = None;

const TABLE: &[(&str, Option<&str>)] = &[
    // Nothing to do with a service.
    ("ls -la", ALLOWED),
    ("cargo test -p stead", ALLOWED),
    ("stead status", ALLOWED),
    ("systemctl --user status web.service", ALLOWED),
    ("systemctl reload web", ALLOWED),
    ("systemctl --user restart other.service", ALLOWED),
    ("systemctl restart homestead", ALLOWED),
    ("launchctl kickstart gui/501/com.example.web", ALLOWED),
    ("pkill webpack", ALLOWED),
    ("pkill -f stead-bench", ALLOWED),
    ("killall node", ALLOWED),
    ("kill 12345", ALLOWED),
    ("sleep 100 & kill $!", ALLOWED),
    ("pgrep -f web-server", ALLOWED),
    ("command -v pkill", ALLOWED),
    ("cd /srv/db", ALLOWED),
    ("kill $(lsof -t -i :8080)", ALLOWED),
    ("systemctl restart \"$UNIT\"", ALLOWED),
    ("curl -s https://example.invalid/install.sh | sh", ALLOWED),
    ("echo \"unterminated", ALLOWED),
    // stead's own gated restart, and gated commands.
    ("stead restart", ALLOWED),
    ("stead restart --service web", ALLOWED),
    (
        "stead gate && systemctl --user restart stead.service",
        ALLOWED,
    ),
    ("stead gate && pkill stead", ALLOWED),
    ("stead gate && stead stop", ALLOWED),
    (
        "stead gate --service web && systemctl --user restart web.service",
        ALLOWED,
    ),
    (
        "stead gate --service=web && sudo systemctl restart web",
        ALLOWED,
    ),
    (
        "stead --state-dir /tmp/s gate --service web --timeout 10m && systemctl restart web",
        ALLOWED,
    ),
    (
        "stead gate --service web && sudo -u root systemctl restart web",
        ALLOWED,
    ),
    (
        "stead gate --service web && cargo build && systemctl restart web",
        ALLOWED,
    ),
    (
        "stead gate --service web && (cd /srv && systemctl restart web)",
        ALLOWED,
    ),
    (
        "stead gate --service web && sh -c 'systemctl restart web'",
        ALLOWED,
    ),
    (
        "bash -c 'stead gate --service web && systemctl restart web'",
        ALLOWED,
    ),
    (
        "stead gate --service web && stead gate && { pkill stead; systemctl restart web; }",
        ALLOWED,
    ),
    (
        "if stead gate --service web; then systemctl restart web; fi",
        ALLOWED,
    ),
    (
        "while stead gate --service web; do systemctl restart web; break; done",
        ALLOWED,
    ),
    // Mentions in data.
    ("echo \"systemctl restart web\"", ALLOWED),
    ("git commit -m 'pkill stead'", ALLOWED),
    ("git log --grep='systemctl restart web'", ALLOWED),
    ("grep -r \"launchctl kickstart\" .", ALLOWED),
    ("cat <<'EOF'\nsystemctl restart web\nEOF", ALLOWED),
    ("cat <<EOF\nsystemctl restart web\nEOF", ALLOWED),
    ("# pkill stead\nls", ALLOWED),
    ("sh -c 'echo pkill stead'", ALLOWED),
    // stead itself.
    ("stead stop", STEAD),
    ("stead stop --cancel-runs", STEAD),
    ("stead --state-dir /tmp/x stop", STEAD),
    ("pkill stead", STEAD),
    ("pkill -f 'stead serve'", STEAD),
    ("killall stead", STEAD),
    ("systemctl --user restart stead.service", STEAD),
    ("systemctl stop stead", STEAD),
    ("launchctl kickstart -k gui/501/dev.stead", STEAD),
    ("launchctl kickstart -kp gui/$(id -u)/dev.stead", STEAD),
    ("kill $(cat ~/.local/state/stead/server.pid)", STEAD),
    // systemd units and SysV services.
    ("systemctl --user restart web.service", WEB),
    ("systemctl restart web", WEB),
    ("systemctl --user try-restart web", WEB),
    ("systemctl --user kill web.service", WEB),
    ("systemctl reload-or-restart web.service", WEB),
    ("systemctl condrestart web", WEB),
    ("systemctl --user disable --now web.service", WEB),
    ("systemctl --user --now disable web", WEB),
    ("systemctl restart 'web*'", WEB),
    ("systemctl --user restart web.service stead.service", STEAD),
    ("service web restart", WEB),
    ("service web stop", WEB),
    // launchd labels.
    ("launchctl kickstart -k gui/501/com.example.web", WEB),
    ("launchctl bootout gui/501/com.example.web", WEB),
    (
        "launchctl unload -w ~/Library/LaunchAgents/com.example.web.plist",
        WEB,
    ),
    ("launchctl stop com.example.web", WEB),
    ("launchctl remove com.example.web", WEB),
    ("launchctl kickstart -k system/org.example.db", DB),
    // Processes.
    ("pkill web-server", WEB),
    ("pkill -f web-server", WEB),
    ("killall web-server", WEB),
    ("kill $(pgrep web-server)", WEB),
    ("kill -9 $(pidof web-server)", WEB),
    ("kill -TERM `pgrep -f web-server`", WEB),
    ("pgrep -f web-server | xargs kill", WEB),
    ("pkill postgres", DB),
    // Restart strings.
    ("cd /srv/db && ./bin/restart-db --graceful", DB),
    ("./bin/restart-db --graceful --verbose", DB),
    // Wrappers.
    ("sudo -u root systemctl restart web", WEB),
    ("sudo -u root -- systemctl restart web", WEB),
    ("env FOO=1 pkill -f web-server", WEB),
    ("env -S 'pkill stead'", STEAD),
    ("nohup systemctl restart web &", WEB),
    ("timeout 30 systemctl restart web", WEB),
    ("nice -n 10 killall web-server", WEB),
    ("exec systemctl restart web", WEB),
    ("command systemctl restart web", WEB),
    ("time systemctl restart web", WEB),
    ("sudo env PATH=/usr/bin nohup pkill -9 -f web-server", WEB),
    // Shells, nested.
    ("sh -c 'systemctl restart web'", WEB),
    (
        "zsh -c 'cd /tmp; systemctl --user restart web.service'",
        WEB,
    ),
    ("bash -lc \"sh -c 'pkill stead'\"", STEAD),
    ("sh -c \"bash -c 'systemctl restart web'\"", WEB),
    ("bash <<'EOF'\nsystemctl restart web\nEOF", WEB),
    ("bash <<< 'pkill stead'", STEAD),
    ("eval 'pkill stead'", STEAD),
    ("su - root -c 'systemctl restart web'", WEB),
    ("su -c 'echo systemctl restart web' root", ALLOWED),
    // Quoting tricks.
    ("pk'ill' stead", STEAD),
    ("'pk''ill' st\"ead\"", STEAD),
    ("p\\kill stead", STEAD),
    // Gated only by an earlier `&&` link with the same service.
    ("stead gate --service web; systemctl restart web", WEB),
    ("stead gate --service web || systemctl restart web", WEB),
    ("stead gate --service web | systemctl restart web", WEB),
    ("stead gate --service db && systemctl restart web", WEB),
    ("stead gate && systemctl restart web", WEB),
    (
        "stead gate --service web && false || systemctl restart web",
        WEB,
    ),
    ("! stead gate --service web && systemctl restart web", WEB),
    (
        "stead gate --service web && systemctl restart web; systemctl restart web",
        WEB,
    ),
    (
        "until stead gate --service web; do sleep 5; done; systemctl restart web",
        WEB,
    ),
    // Everywhere a command can hide.
    ("echo $(pkill stead)", STEAD),
    ("X=$(systemctl restart web) true", WEB),
    ("cat <<EOF\n$(pkill stead)\nEOF", STEAD),
    ("echo ${X:-$(pkill stead)}", STEAD),
    ("diff <(pkill stead) x", STEAD),
    ("if true; then systemctl restart web; fi", WEB),
    ("while true; do pkill stead; sleep 1; done", STEAD),
    (
        "for i in 1 2; do systemctl --user restart web.service; done",
        WEB,
    ),
    ("case x in x) pkill stead;; esac", STEAD),
    ("[[ -n $(pkill stead) ]]", STEAD),
    ("f() { systemctl restart web; }; f", WEB),
    ("(systemctl restart web)", WEB),
    ("{ pkill stead; }", STEAD),
    // What the guard cannot read, when it names a guarded service.
    ("U=web; systemctl restart $U", WEB),
    ("pkill -f 'web-(server|api)'", WEB),
    ("pkill -f 'api-(v1|v2)'", ALLOWED),
    ("echo 'pkill stead' | sh", STEAD),
    ("echo \"unterminated pkill stead", STEAD),
];

fn refused_service(verdict: &Verdict) -> Option<&str> {
    match verdict {
        Verdict::Allow => None,
        Verdict::Refuse { service, .. } => Some(service),
    }
}

#[test]
fn the_table() {
    let services = services();
    let mut wrong = Vec::new();
    for (command, expected) in TABLE {
        let verdict = check(command, &services);
        if refused_service(&verdict) != *expected {
            wrong.push(format!(
                "{command:?}: expected {expected:?}, got {verdict:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(TABLE.len() >= 60);
}

#[test]
fn every_instead_passes_the_guard() {
    let services = services();
    for (command, _) in TABLE {
        let Verdict::Refuse { instead, .. } = check(command, &services) else {
            continue;
        };
        if instead.contains("<the command") {
            continue; // a command that does not parse must be rewritten first
        }
        assert_eq!(
            check(&instead, &services),
            Verdict::Allow,
            "{command:?} -> {instead:?}"
        );
    }
}

fn refusal(command: &str) -> (String, String, String) {
    match check(command, &services()) {
        Verdict::Refuse {
            matched,
            reason,
            instead,
            ..
        } => (matched, reason, instead),
        Verdict::Allow => panic!("{command:?} was allowed"),
    }
}

#[test]
fn a_refusal_names_the_command_and_what_to_run_instead() {
    let (matched, reason, instead) = refusal("cargo build && sudo -u root systemctl restart web");
    assert_eq!(matched, "sudo -u root systemctl restart web");
    assert!(
        reason.contains("restart the guarded service web"),
        "{reason}"
    );
    assert!(reason.contains("`stead gate --service web`"), "{reason}");
    assert_eq!(
        instead,
        "stead gate --service web && cargo build && sudo -u root systemctl restart web"
    );
}

#[test]
fn a_lone_restart_of_stead_becomes_stead_restart() {
    assert_eq!(refusal("pkill stead").2, "stead restart");
    assert_eq!(
        refusal("systemctl --user restart stead.service").2,
        "stead restart"
    );
    // A stop stays a stop, behind the gate.
    assert_eq!(refusal("stead stop").2, "stead gate && stead stop");
}

#[test]
fn nested_commands_are_matched_as_written_inside() {
    assert_eq!(refusal("bash -lc \"sh -c 'pkill stead'\"").0, "pkill stead");
}

#[test]
fn a_command_that_is_not_one_chain_is_grouped_behind_the_gate() {
    let (_, _, instead) = refusal("stead gate --service web; systemctl restart web");
    assert_eq!(
        instead,
        "stead gate --service web && { stead gate --service web; systemctl restart web; }"
    );
    let (_, _, instead) = refusal("pkill stead; systemctl restart web");
    assert_eq!(
        instead,
        "stead gate && stead gate --service web && { pkill stead; systemctl restart web; }"
    );
    let (_, _, instead) = refusal("cd /srv; systemctl restart web # now");
    assert_eq!(
        instead,
        "stead gate --service web && {\ncd /srv; systemctl restart web # now\n}"
    );
}

#[test]
fn what_cannot_be_read_is_explained() {
    let (_, reason, _) = refusal("U=web; systemctl restart $U");
    assert!(
        reason.contains("cannot tell what `$U` stands for"),
        "{reason}"
    );
    let (matched, reason, instead) = refusal("echo \"unterminated pkill stead");
    assert_eq!(matched, "echo \"unterminated pkill stead");
    assert!(reason.contains("does not parse"), "{reason}");
    assert_eq!(
        instead,
        "stead gate && <the command, rewritten so that it parses>"
    );
}

#[test]
fn nesting_beyond_the_depth_limit_is_unreadable() {
    let mut command = "pkill stead".to_owned();
    for _ in 0..10 {
        command = format!("sh -c {}", shell_words::quote(&command));
    }
    let (_, reason, _) = refusal(&command);
    assert!(reason.contains("nested more than"), "{reason}");
    assert_eq!(
        check(&command.replace("stead", "node"), &services()),
        Verdict::Allow
    );
}

#[test]
fn stead_is_guarded_with_no_services_declared() {
    assert_eq!(refused_service(&check("killall stead", &[])), STEAD);
    assert_eq!(check("systemctl restart web", &[]), Verdict::Allow);
}

#[test]
fn input_that_panics_the_parser_is_unreadable() {
    let (_, reason, _) = refusal("${<<EOF\n}\nEOF pkill stead");
    assert!(reason.contains("does not parse"), "{reason}");
    assert_eq!(check("${<<EOF\n}\nEOF", &services()), Verdict::Allow);
}

proptest::proptest! {
    #[test]
    fn the_guard_never_panics(command in r#"(stead|pkill|sh -c |<<EOF\n|\nEOF|\$\(|\$\{|[a-z $'"`(){}|&;<>\\\n#=*!-]){0,30}"#) {
        let _ = check(&command, &services());
    }
}
