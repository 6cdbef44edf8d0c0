//! stead's own command lines, as the guard reads them: the gate that opens a chain, and
//! the stop that needs one.

use std::collections::BTreeSet;

use stead_protocol::STEAD_SERVICE;

use super::opts::{self, Opt, Spec};
use super::words::{Arg, basename};

/// Services whose gate has passed.
pub(super) type Gates = BTreeSet<String>;

/// The subcommand of a `stead` command line and the words after it, past the global
/// `--state-dir`.
pub(super) fn subcommand(argv: &[Arg]) -> Option<(&str, &[Arg])> {
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
    let sub = argv.get(i).filter(|a| !a.dynamic)?;
    Some((sub.text.as_str(), &argv[i + 1..]))
}

/// The services a `stead gate` command line waits for (`stead` unless it names some);
/// none for any other command.
pub(super) fn gated_services(argv: &[Arg]) -> Gates {
    let Some(("gate", rest)) = subcommand(argv) else {
        return Gates::new();
    };
    let spec = Spec {
        long_values: &["service"],
        ..Spec::FLAGS
    };
    let scan = opts::scan(rest, &spec);
    let named: Vec<&Opt> = scan
        .options
        .iter()
        .filter(|o| o.name == "service")
        .collect();
    if named.is_empty() {
        return Gates::from([STEAD_SERVICE.to_owned()]);
    }
    named
        .iter()
        .filter_map(|o| o.value.as_ref())
        .filter(|v| !v.dynamic)
        .map(|v| v.text.clone())
        .collect()
}
