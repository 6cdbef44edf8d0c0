//! Reading a command's options the way getopt does: enough to find its operands and the
//! few flags the guard cares about, without knowing every option of every tool.

use super::words::Arg;

/// Which options of a command take a value.
pub(super) struct Spec {
    /// Short letters that take a value, attached (`-uroot`) or as the next word.
    pub short_values: &'static str,
    /// Long names that take the next word as a value (`--user root`; `--user=root`
    /// always works).
    pub long_values: &'static [&'static str],
    /// Long names that take the next two words (`bwrap --bind SRC DEST`).
    pub long_pairs: &'static [&'static str],
    /// Long names that take no value. Given, they complete the tool's long names, and a
    /// unique prefix of one names it, as getopt_long reads it (`--fu` is `--full`).
    pub long_flags: &'static [&'static str],
    /// `-9` and `-KILL` name a signal (kill, pkill, killall), not a cluster of letters.
    pub signals: bool,
}

impl Spec {
    /// A command whose options take no value.
    pub const FLAGS: Spec = Spec {
        short_values: "",
        long_values: &[],
        long_pairs: &[],
        long_flags: &[],
        signals: false,
    };

    /// Options whose short letters in `short_values` and long names in `long_values`
    /// take a value.
    pub const fn values(short_values: &'static str, long_values: &'static [&'static str]) -> Spec {
        Spec {
            short_values,
            long_values,
            ..Spec::FLAGS
        }
    }
}

/// One option as given: `k` for `-k`, `now` for `--now`, `signal` for `-9`.
pub(super) struct Opt {
    pub name: String,
    pub value: Option<Arg>,
}

/// A command's arguments, read.
pub(super) struct Scan<'a> {
    pub options: Vec<Opt>,
    pub operands: Vec<&'a Arg>,
    /// With [`leading`], where the operands start (for a wrapper: its command).
    pub rest: usize,
}

impl Scan<'_> {
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|o| o.name == name)
    }

    /// The value of the last `name` option given.
    pub fn value(&self, name: &str) -> Option<&Arg> {
        self.options
            .iter()
            .rev()
            .find(|o| o.name == name)
            .and_then(|o| o.value.as_ref())
    }

    /// Whether it asks for help or a version and so does nothing else.
    pub fn asks_help(&self) -> bool {
        self.has("help") || self.has("version")
    }
}

/// Options anywhere among the operands, as GNU tools read them.
pub(super) fn scan<'a>(args: &'a [Arg], spec: &Spec) -> Scan<'a> {
    read(args, spec, false)
}

/// Options up to the first operand, as a wrapper (`sudo`, `env`) reads them: what
/// follows is its command, with options of its own.
pub(super) fn leading<'a>(args: &'a [Arg], spec: &Spec) -> Scan<'a> {
    read(args, spec, true)
}

fn read<'a>(args: &'a [Arg], spec: &Spec, stop_at_operand: bool) -> Scan<'a> {
    let mut scan = Scan {
        options: Vec::new(),
        operands: Vec::new(),
        rest: args.len(),
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = arg.text.as_str();
        if text == "--" {
            scan.rest = i;
            scan.operands.extend(&args[i..]);
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (completed(name, spec), Some(value_of(arg, value))),
                None => match completed(long, spec) {
                    long if spec.long_values.contains(&long) => (long, next(args, &mut i)),
                    long if spec.long_pairs.contains(&long) => {
                        i += 1;
                        (long, next(args, &mut i))
                    }
                    long => (long, None),
                },
            };
            scan.options.push(Opt {
                name: name.to_owned(),
                value,
            });
        } else if let Some(body) = text.strip_prefix('-').filter(|b| !b.is_empty()) {
            shorts(arg, body, args, &mut i, spec, &mut scan.options);
        } else if stop_at_operand {
            scan.rest = i - 1;
            break;
        } else {
            scan.operands.push(arg);
        }
    }
    scan
}

/// A long name as the tool reads it: for a tool whose long names are all known, a
/// unique prefix of one is that one.
fn completed<'a>(name: &'a str, spec: &Spec) -> &'a str {
    if spec.long_flags.is_empty() {
        return name;
    }
    let known = spec
        .long_values
        .iter()
        .chain(spec.long_pairs)
        .chain(spec.long_flags);
    if known.clone().any(|k| *k == name) {
        return name;
    }
    let mut starting = known.filter(|k| k.starts_with(name));
    match (starting.next(), starting.next()) {
        (Some(only), None) if !name.is_empty() => only,
        _ => name,
    }
}

fn shorts(arg: &Arg, body: &str, args: &[Arg], i: &mut usize, spec: &Spec, out: &mut Vec<Opt>) {
    // `-9`, `-KILL`, `-SIGTERM`, `-USR1`; a single capital is an option (`-U`, `-F`).
    let signal = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    let is_signal = body.chars().all(|c| c.is_ascii_digit())
        || (body.len() > 1
            && body.starts_with(|c: char| c.is_ascii_uppercase())
            && body.chars().all(signal));
    if spec.signals && is_signal {
        out.push(Opt {
            name: "signal".to_owned(),
            value: Some(value_of(arg, body)),
        });
        return;
    }
    for (at, letter) in body.char_indices() {
        let mut value = None;
        if spec.short_values.contains(letter) {
            let attached = &body[at + letter.len_utf8()..];
            value = if attached.is_empty() {
                next(args, i)
            } else {
                Some(value_of(arg, attached))
            };
        }
        let takes_rest = value.is_some();
        out.push(Opt {
            name: letter.to_string(),
            value,
        });
        if takes_rest {
            return;
        }
    }
}

fn next(args: &[Arg], i: &mut usize) -> Option<Arg> {
    let value = args.get(*i).cloned();
    *i += 1;
    value
}

/// Part of a word, as a word: unknown if the whole word was.
fn value_of(arg: &Arg, text: &str) -> Arg {
    Arg {
        text: text.to_owned(),
        dynamic: arg.dynamic,
        glob: arg.glob,
        ..Arg::default()
    }
}
