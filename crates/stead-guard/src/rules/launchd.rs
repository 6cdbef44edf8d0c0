//! launchd: `launchctl kickstart -k`, `bootout`, `unload`, `stop`, `remove`, `kill`,
//! and `reboot`; a bare domain (`gui/501`) booted out takes every agent in it.

use super::{Act, Found, Seen};
use crate::opts::{self, Spec};
use crate::services::Guarded;
use crate::words::basename;

pub(super) fn launchctl(args: &[crate::words::Arg], service: &Guarded) -> Option<Found> {
    let (sub, rest) = args.split_first()?;
    let scan = opts::scan(rest, &Spec::FLAGS);
    let act = match sub.text.as_str() {
        // Without `-k`, kickstart starts a job that is not running and leaves a
        // running one alone.
        "kickstart" if scan.has("k") => Act::Restart,
        "bootout" | "unload" | "stop" | "remove" => Act::Stop,
        "kill"
            if scan
                .operands
                .first()
                .is_some_and(|s| super::kill::harmless(&s.text)) =>
        {
            return None;
        }
        "kill" => Act::Kill,
        "reboot" => return Some(Found::all(Act::Stop, "it stops every launchd job")),
        _ => return None,
    };
    if sub.text == "bootout" && scan.operands.iter().any(|t| is_domain(&t.text)) {
        return Some(Found::all(Act::Stop, "it boots out a whole launchd domain"));
    }
    // A target is a label, a domain path ending in one (`gui/501/LABEL`), or a plist.
    let operands = match sub.text.as_str() {
        "kill" => scan.operands.get(1..).unwrap_or_default(),
        _ => &scan.operands[..],
    };
    let names = |target: &crate::words::Arg| {
        let last = basename(&target.text);
        let label = last.strip_suffix(".plist").unwrap_or(last);
        Some(service.has_label(label))
    };
    Some(Found::new(Seen::any(operands.iter().copied(), names), act))
}

/// `system`, `gui/501`, `user/501`, `login/ASID`: a domain with no service in it.
fn is_domain(target: &str) -> bool {
    let parts: Vec<&str> = target.split('/').collect();
    match parts.as_slice() {
        ["system"] => true,
        ["gui" | "user" | "login" | "pid", id] => !id.is_empty(),
        _ => false,
    }
}
