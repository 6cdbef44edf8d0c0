//! The limits: what is too large or nested too deep is refused with a reason, never a
//! crash, and a parser failure is a refusal whatever the command names.

use std::time::Duration;

use super::{check, guard, refused_service};
use crate::{MAX_COMMAND, MAX_NESTING, MAX_SUBSTITUTIONS, MAX_WORD_NESTING, Verdict};

fn unread_reason(command: &str) -> String {
    match check(command) {
        Verdict::Refuse(refusal) if refusal.service.is_none() => {
            assert_eq!(refusal.instead, None);
            refusal.reason
        }
        other => panic!("{:?}: {other:?}", &command[..command.len().min(80)]),
    }
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    for (open, close) in [("{ ", "; }"), ("( ", " )"), ("if true; then ", "; fi")] {
        let command = open.repeat(1500) + "ls" + &close.repeat(1500);
        let reason = unread_reason(&command);
        assert!(reason.contains("nested too deep"), "{reason}");
    }
    let subs = "echo \"$(".repeat(MAX_SUBSTITUTIONS + 1) + "ls";
    assert!(unread_reason(&subs).contains("substitutions"));
    let deep = "echo \"$(".repeat(20_000) + "pkill stead" + &")\"".repeat(20_000);
    assert!(unread_reason(&deep).contains("in one word"));
    // Substitutions nested within the limit are read.
    let depth = MAX_WORD_NESTING / 2;
    let fine = "echo \"$(".repeat(depth) + "pkill stead" + &")\"".repeat(depth);
    assert_eq!(refused_service(&check(&fine)), Some("stead"));
    // Nesting up to the limit is read.
    let fine = "{ ".repeat(MAX_NESTING - 1) + "pkill stead" + &"; }".repeat(MAX_NESTING - 1);
    assert_eq!(refused_service(&check(&fine)), Some("stead"));
}

#[test]
fn a_command_over_the_size_limit_is_refused_unread() {
    let command = format!("echo {}", "a".repeat(MAX_COMMAND));
    assert!(unread_reason(&command).contains("bytes long"));
}

#[test]
fn input_that_makes_the_parser_fail_is_refused_whatever_it_names() {
    let reason = unread_reason("${<<EOF\n}\nEOF");
    assert!(reason.contains("parser failed"), "{reason}");
}

#[test]
fn a_megabyte_command_is_read_whole() {
    // Read to the end and allowed, however loaded the machine: the deadline is lifted
    // here, since how long it takes is a figure for the benchmark (`stead-bench guard`
    // times a megabyte of each shape beside a quarter of it), not for a test.
    let line = "cargo build --release && git status --short | grep web || echo \"$(date) web\"\n";
    let command = line.repeat((1 << 20) / line.len());
    let patient = guard().with_deadline(Duration::from_secs(3600));
    assert_eq!(patient.check(&command), Verdict::Allow);
    let named = command.clone() + "systemctl restart web\n";
    assert_eq!(refused_service(&patient.check(&named)), Some("web"));
}
