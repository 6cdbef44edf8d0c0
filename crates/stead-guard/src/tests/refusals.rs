//! What a refusal says: the offending command, what it would do, the gate that is
//! missing, and the command to run instead.

use std::path::PathBuf;

use super::{OWN, check, guard, installed, refusal, refused_service, services};
use crate::{Guard, Protected, Verdict};

#[test]
fn a_refusal_names_the_command_and_what_to_run_instead() {
    let refusal = refusal("cargo build && sudo -u root systemctl restart web");
    assert_eq!(refusal.matched, "sudo -u root systemctl restart web");
    assert_eq!(refusal.service.as_deref(), Some("web"));
    assert!(
        refusal.reason.contains("restart the guarded service web"),
        "{}",
        refusal.reason
    );
    assert!(
        refusal.reason.contains("`stead gate --service web`"),
        "{}",
        refusal.reason
    );
    assert_eq!(
        refusal.instead.as_deref(),
        Some("stead gate --service web && cargo build && sudo -u root systemctl restart web")
    );
}

#[test]
fn a_lone_restart_of_stead_becomes_stead_restart() {
    assert_eq!(
        refusal("pkill stead").instead.as_deref(),
        Some("stead restart")
    );
    assert_eq!(
        refusal("systemctl --user restart stead.service")
            .instead
            .as_deref(),
        Some("stead restart")
    );
    // A stop stays a stop, behind the gate.
    assert_eq!(
        refusal("stead stop").instead.as_deref(),
        Some("stead gate && stead stop")
    );
}

#[test]
fn nested_commands_are_matched_as_written_inside() {
    assert_eq!(
        refusal("bash -lc \"sh -c 'pkill stead'\"").matched,
        "pkill stead"
    );
}

#[test]
fn a_command_that_is_not_one_chain_is_grouped_behind_the_gate() {
    let instead = refusal("stead gate --service web; systemctl restart web").instead;
    assert_eq!(
        instead.as_deref(),
        Some("stead gate --service web && { stead gate --service web; systemctl restart web; }")
    );
    let instead = refusal("pkill stead; systemctl restart web").instead;
    assert_eq!(
        instead.as_deref(),
        Some("stead gate && stead gate --service web && { pkill stead; systemctl restart web; }")
    );
    let instead = refusal("cd /srv; systemctl restart web # now").instead;
    assert_eq!(
        instead.as_deref(),
        Some("stead gate --service web && {\ncd /srv; systemctl restart web # now\n}")
    );
}

#[test]
fn what_cannot_be_read_is_explained() {
    let refusal = super::refusal("systemctl restart $UNIT # web");
    assert!(
        refusal
            .reason
            .contains("cannot tell what `$UNIT` stands for"),
        "{}",
        refusal.reason
    );
    let refusal = super::refusal("python3 -c 'import os; os.system(\"pkill stead\")'");
    assert!(
        refusal
            .reason
            .contains("python3 code that mentions the guarded service stead"),
        "{}",
        refusal.reason
    );
    assert_eq!(
        refusal.instead.as_deref(),
        Some("stead gate && python3 -c 'import os; os.system(\"pkill stead\")'")
    );
    let unparsed = super::refusal("echo \"unterminated pkill stead");
    assert_eq!(unparsed.matched, "echo \"unterminated pkill stead");
    assert!(
        unparsed.reason.contains("does not parse"),
        "{}",
        unparsed.reason
    );
    assert_eq!(unparsed.instead, None);
}

#[test]
fn a_mass_stop_names_what_it_does_and_gates_every_service() {
    let refusal = refusal("sudo reboot");
    assert!(
        refusal.reason.contains("takes the machine down"),
        "{}",
        refusal.reason
    );
    assert_eq!(
        refusal.instead.as_deref(),
        Some("stead gate && stead gate --service web && stead gate --service db && sudo reboot")
    );
}

#[test]
fn nesting_beyond_the_script_depth_is_unreadable() {
    let mut command = "pkill stead".to_owned();
    for _ in 0..10 {
        command = format!("sh -c {}", shell_words::quote(&command));
    }
    let refusal = refusal(&command);
    assert!(
        refusal.reason.contains("nested more than"),
        "{}",
        refusal.reason
    );
    assert_eq!(check(&command.replace("stead", "node")), Verdict::Allow);
}

#[test]
fn stead_is_guarded_with_no_services_declared() {
    let bare = Guard::new(&[]);
    assert_eq!(refused_service(&bare.check("killall stead")), Some("stead"));
    assert_eq!(bare.check("systemctl restart web"), Verdict::Allow);
}

#[test]
fn the_suggested_gate_names_the_ledger_when_a_bare_stead_would_miss_it() {
    let elsewhere = Guard::new(&services()).protecting(Protected {
        state_dir: Some(PathBuf::from(OWN)),
        default_state_dir: Some(PathBuf::from("/home/user/.local/state/stead")),
        socket: None,
        exe: None,
    });
    let Verdict::Refuse(refusal) = elsewhere.check("systemctl restart web") else {
        panic!("allowed");
    };
    let instead = refusal.instead.unwrap();
    assert_eq!(
        instead,
        "stead --state-dir /srv/stead gate --service web && systemctl restart web"
    );
    assert_eq!(elsewhere.check(&instead), Verdict::Allow);
    // A bare gate there would wait on the other ledger.
    assert!(matches!(
        elsewhere.check("stead gate --service web && systemctl restart web"),
        Verdict::Refuse(_)
    ));
    assert_eq!(
        guard().check("stead gate --service web && systemctl restart web"),
        Verdict::Allow
    );
}

#[test]
fn a_pattern_is_compared_with_the_command_lines_of_the_guards_own_stead() {
    let installed = installed();
    for command in [
        "pkill -f '/var/lib/ledger serve'",
        "pkill -f 'ledger monitor'",
        "pkill -f '^/opt/tools/bin/'",
        "pkill -xf '/opt/tools/bin/s.eadd --state-dir /var/lib/ledger spawner'",
    ] {
        assert_eq!(
            refused_service(&installed.check(command)),
            Some("stead"),
            "{command}"
        );
        // Another stead's lines are not these.
        assert_eq!(check(command), Verdict::Allow, "{command}");
    }
}
