//! stead's own stop: `stead stop`, and its protocol's `stop` written to its socket by
//! another program.

use super::{Act, Found, Seen};
use crate::stead_cmd;
use crate::words::Arg;

/// `stead [--state-dir DIR] stop`, unless it only asks for help.
pub(super) fn stop(argv: &[Arg]) -> Option<Found> {
    let (sub, rest) = stead_cmd::subcommand(argv)?;
    (sub == "stop" && !stead_cmd::asks_help(rest)).then(|| Found::new(Seen::Yes, Act::Stop))
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
