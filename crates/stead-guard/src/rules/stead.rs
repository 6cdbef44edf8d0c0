//! stead's own commands that cut: `stead stop`, `stead restart --force` (which does
//! not wait), and the protocol's `stop` written to its socket by another program.

use stead_protocol::STEAD_SERVICE;

use super::{Act, Found, Seen};
use crate::opts::{self, Spec};
use crate::services::Guarded;
use crate::stead_cmd;
use crate::words::Arg;

/// `stead [--state-dir DIR] stop` for stead itself, `stead restart [--service S]
/// --force` for the service restarted; neither when it only asks for help.
pub(super) fn command(argv: &[Arg], service: &Guarded) -> Option<Found> {
    let (sub, rest) = stead_cmd::subcommand(argv)?;
    if stead_cmd::asks_help(rest) {
        return None;
    }
    match sub {
        "stop" if service.is_stead() => Some(Found::new(Seen::Yes, Act::Stop)),
        "restart" => {
            let scan = opts::scan(
                rest,
                &Spec::values("", &["service", "timeout", "state-dir"]),
            );
            if !scan.has("force") {
                return None;
            }
            let target = scan
                .value("service")
                .map_or(STEAD_SERVICE, |s| s.text.as_str());
            (target == service.name).then_some(Found {
                seen: Seen::Yes,
                act: Act::Restart,
                because: Some("`--force` restarts without waiting for the gate"),
            })
        }
        _ => None,
    }
}

/// A program talking to stead's socket (`socat - UNIX-CONNECT:…/stead.sock`,
/// `nc -U`, `curl --unix-socket`): the protocol's `stop` stops stead, and what is
/// written cannot be told from the command line.
pub(super) fn socket(args: &[Arg], own: Option<&str>) -> Option<Found> {
    let talks = args.iter().any(|a| {
        let text = a.text.as_str();
        let stead_socket = text.contains(".sock")
            && (text.contains("stead.sock")
                || text.contains("/stead-")
                || text.contains("/stead/"));
        stead_socket || own.is_some_and(|own| text.contains(own))
    });
    talks.then_some(Found {
        seen: Seen::Yes,
        act: Act::Stop,
        because: Some("it talks to stead's socket, whose protocol's `stop` stops stead"),
    })
}
