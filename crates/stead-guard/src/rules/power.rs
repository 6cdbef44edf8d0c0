//! The machine and the login: shutting down, rebooting, changing runlevel, and ending
//! a user's whole login, each of which stops every guarded service.

use super::{Act, Found};
use crate::words::Arg;

pub(super) fn power(program: &str, args: &[Arg]) -> Option<Found> {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.text.as_str()));
    // `-h` is no help here: `shutdown -h` halts, `halt -h` too on sysvinit.
    if has(&["--help", "--version"]) {
        return None;
    }
    match program {
        // `-c` cancels a pending shutdown, `-k` only warns.
        "shutdown" if has(&["-c", "-k", "--show"]) => None,
        "shutdown" => Some(Found::all(Act::Stop, "it shuts the machine down")),
        "reboot" | "halt" | "poweroff" if has(&["-w", "--wtmp-only"]) => None,
        "reboot" | "halt" | "poweroff" => Some(Found::all(Act::Stop, "it takes the machine down")),
        "init" | "telinit" => {
            let level = args.iter().find(|a| !a.text.starts_with('-'))?;
            matches!(level.text.as_str(), "0" | "6" | "1" | "s" | "S" | "single")
                .then(|| Found::all(Act::Stop, "the runlevel it enters stops every service"))
        }
        "kexec" => has(&["-e", "--exec"]).then(|| Found::all(Act::Stop, "it boots another kernel")),
        "loginctl" => {
            let verb = args.iter().find(|a| !a.text.starts_with('-'))?;
            matches!(
                verb.text.as_str(),
                "terminate-user"
                    | "kill-user"
                    | "terminate-session"
                    | "kill-session"
                    | "terminate-seat"
            )
            .then(|| Found::all(Act::Kill, "it ends a login and every process in it"))
        }
        "killall5" => {
            let zero = args.iter().any(|a| a.text == "-0");
            (!zero).then(|| Found::all(Act::Kill, "it signals every process"))
        }
        _ => None,
    }
}
