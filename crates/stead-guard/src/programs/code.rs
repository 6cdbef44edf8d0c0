//! Interpreters of other languages: the code they are handed on the command line
//! (`python3 -c`, `perl -e`, `node -e`, an awk program, a sed script that runs
//! commands) or on standard input. The guard does not read these languages; it scans
//! their code for the names of guarded services.

use super::{Inner, script_file};
use crate::opts::{self, Spec};
use crate::words::Arg;

/// An interpreter and how it takes code.
struct Interpreter {
    /// Its name, which may carry a version (`python3.12`, `perl5.36`).
    name: &'static str,
    /// Options whose value is code.
    code: &'static [&'static str],
    /// Its options that take a value (code options included).
    spec: Spec,
    /// Without a code option, its first operand is code (awk), not a file.
    operand_is_code: bool,
    /// Options after which it runs something else than code (`python -m MODULE`).
    not_code: &'static [&'static str],
}

const fn interpreter(name: &'static str, code: &'static [&'static str], spec: Spec) -> Interpreter {
    Interpreter {
        name,
        code,
        spec,
        operand_is_code: false,
        not_code: &[],
    }
}

const INTERPRETERS: &[Interpreter] = &[
    Interpreter {
        not_code: &["m"],
        ..interpreter("python", &["c"], Spec::values("cmWXQ", &[]))
    },
    Interpreter {
        not_code: &["m"],
        ..interpreter("pypy", &["c"], Spec::values("cmWXQ", &[]))
    },
    interpreter("perl", &["e", "E"], Spec::values("eEIMmlCxd", &[])),
    interpreter("ruby", &["e"], Spec::values("erICFx", &[])),
    interpreter(
        "node",
        &["e", "p", "eval", "print"],
        Spec::values(
            "epr",
            &["eval", "print", "require", "import", "loader", "input-type"],
        ),
    ),
    interpreter(
        "nodejs",
        &["e", "p", "eval", "print"],
        Spec::values("epr", &["eval", "print", "require", "import"]),
    ),
    interpreter(
        "bun",
        &["e", "p", "eval", "print"],
        Spec::values("ep", &["eval", "print"]),
    ),
    interpreter("php", &["r", "B", "R", "E"], Spec::values("rBREcdfz", &[])),
    interpreter("lua", &["e"], Spec::values("el", &[])),
    interpreter("luajit", &["e"], Spec::values("elbj", &[])),
    interpreter("tclsh", &[], Spec::FLAGS),
    interpreter("wish", &[], Spec::FLAGS),
    interpreter("expect", &["c"], Spec::values("cf", &[])),
    interpreter("osascript", &["e"], Spec::values("els", &[])),
    interpreter("Rscript", &["e"], Spec::values("e", &[])),
    interpreter("R", &["e"], Spec::values("e", &[])),
    interpreter(
        "julia",
        &["e", "E", "eval", "print"],
        Spec::values("eEJLp", &["eval", "print"]),
    ),
    Interpreter {
        operand_is_code: true,
        ..interpreter(
            "awk",
            &["e", "source"],
            Spec::values(
                "efvFEil",
                &["source", "file", "assign", "field-separator", "include"],
            ),
        )
    },
];

/// awk's other names.
const AWKS: &[&str] = &["gawk", "mawk", "nawk", "busybox-awk"];

pub(super) const NAMES: &[&str] = &[
    "vim",
    "vi",
    "nvim",
    "ex",
    "view",
    "vimdiff",
    "emacs",
    "less",
    "man",
    "python",
    "python3",
    "python2",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "bun",
    "deno",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "osascript",
    "Rscript",
    "R",
    "julia",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "pwsh",
    "powershell",
    "sed",
];

/// `name`, or `name` with a version after it.
fn is_named(program: &str, name: &str) -> bool {
    program
        .strip_prefix(name)
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn find(program: &str) -> Option<&'static Interpreter> {
    let program = if AWKS.contains(&program) {
        "awk"
    } else {
        program
    };
    INTERPRETERS.iter().find(|i| is_named(program, i.name))
}

pub(crate) fn is_interpreter(name: &str) -> bool {
    find(name).is_some() || matches!(name, "deno" | "pwsh" | "powershell")
}

/// An editor's or pager's commands from its command line (`vim -c '!…'`, `vim +cmd`,
/// `--cmd`, `emacs --eval`, `less +'!…'`), which can run shell commands: read as code
/// of their own language.
fn editor(argv: &[Arg], language: &str) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let text = argv[i].text.as_str();
        let code = match text {
            "-c" | "--cmd" | "--eval" | "-eval" | "--execute" | "-l" | "--load" => {
                i += 1;
                argv.get(i).cloned()
            }
            _ if text.starts_with('+') && text.len() > 1 => Some(Arg {
                text: text.trim_start_matches('+').to_owned(),
                ..argv[i].clone()
            }),
            _ => text.strip_prefix("--eval=").map(|code| Arg {
                text: code.to_owned(),
                ..argv[i].clone()
            }),
        };
        out.extend(code.map(|code| Inner::Code {
            language: language.to_owned(),
            code,
        }));
        i += 1;
    }
    out
}

/// `man -P PAGER` (`--pager`): the pager is a command.
fn man(argv: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(
        &argv[1..],
        &Spec::values(
            "PLMmSsCRE",
            &["pager", "locale", "manpath", "sections", "config-file"],
        ),
    );
    scan.value("P")
        .or(scan.value("pager"))
        .map(|pager| Inner::Script {
            code: pager.clone(),
            via: super::Via::Maybe,
            what: "the pager `man` runs".to_owned(),
            posix: true,
        })
        .into_iter()
        .collect()
}

/// The code an interpreter's command line runs; `None` when it is no interpreter.
pub(super) fn input(name: &str, argv: &[Arg]) -> Option<Vec<Inner>> {
    let language = name;
    let code = |code: &Arg| Inner::Code {
        language: language.to_owned(),
        code: code.clone(),
    };
    match name {
        "pwsh" | "powershell" => return Some(powershell(argv)),
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" => return Some(editor(argv, "vim")),
        "emacs" => return Some(editor(argv, "emacs")),
        "less" => return Some(editor(argv, "less")),
        "man" => return Some(man(argv)),
        "deno" => {
            let eval = argv.get(1).is_some_and(|a| a.text == "eval");
            return Some(argv.last().filter(|_| eval).map(code).into_iter().collect());
        }
        "sed" => return Some(sed(argv)),
        _ => {}
    }
    let interpreter = find(name)?;
    let scan = opts::scan(&argv[1..], &interpreter.spec);
    if interpreter.not_code.iter().any(|o| scan.has(o)) || scan.asks_help() {
        return Some(Vec::new());
    }
    let given: Vec<Inner> = scan
        .options
        .iter()
        .filter(|o| interpreter.code.contains(&o.name.as_str()))
        .filter_map(|o| o.value.as_ref())
        .map(code)
        .collect();
    if !given.is_empty() {
        return Some(given);
    }
    let stdin = || Inner::CodeStdin {
        language: language.to_owned(),
    };
    let what = format!("`{language}`");
    if let Some(file) = scan.value("f").or(scan.value("file")) {
        return Some(script_file(file, stdin(), what).into_iter().collect());
    }
    match scan.operands.first() {
        Some(first) if interpreter.operand_is_code => Some(vec![code(first)]),
        Some(file) => Some(script_file(file, stdin(), what).into_iter().collect()),
        None => Some(vec![stdin()]),
    }
}

/// `pwsh -Command CODE…`, `-EncodedCommand` (unreadable), `-File`, or code on stdin.
fn powershell(argv: &[Arg]) -> Vec<Inner> {
    for (at, arg) in argv.iter().enumerate().skip(1) {
        let option = arg.text.to_ascii_lowercase();
        let option = option.trim_start_matches(['-', '/']);
        match option {
            "c" | "command" => {
                return vec![Inner::Code {
                    language: "pwsh".to_owned(),
                    code: super::joined(&argv[at + 1..]),
                }];
            }
            "e" | "ec" | "encodedcommand" => {
                return vec![Inner::Opaque("the encoded command of pwsh".to_owned())];
            }
            "f" | "file" => return Vec::new(),
            _ => {}
        }
    }
    vec![Inner::CodeStdin {
        language: "pwsh".to_owned(),
    }]
}

const SED: Spec = Spec::values("eflsE", &["expression", "file", "line-length"]);

/// A sed script runs commands only with its `e` command or the `e` flag of `s`; only
/// then is it code.
fn sed(argv: &[Arg]) -> Vec<Inner> {
    let scan = opts::scan(&argv[1..], &SED);
    let mut scripts: Vec<&Arg> = ["e", "expression"]
        .iter()
        .flat_map(|name| scan.options.iter().filter(move |o| o.name == *name))
        .filter_map(|o| o.value.as_ref())
        .collect();
    let stdin = || Inner::CodeStdin {
        language: "sed".to_owned(),
    };
    let files = ["f", "file"].iter().filter_map(|o| scan.value(o));
    let mut out: Vec<Inner> = files
        .filter_map(|f| script_file(f, stdin(), "`sed`".to_owned()))
        .collect();
    if scripts.is_empty() && !scan.has("f") && !scan.has("file") {
        scripts.extend(scan.operands.first().copied());
    }
    out.extend(
        scripts
            .into_iter()
            .filter(|s| s.dynamic || sed_executes(&s.text))
            .map(|s| Inner::Code {
                language: "sed".to_owned(),
                code: s.clone(),
            }),
    );
    out
}

/// Whether a sed script has an `e` command or an `s` command with the `e` flag.
fn sed_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // Skip blanks, separators and an address (`1`, `$`, `/re/`, `1,5`, `!`).
        while i < chars.len() && (chars[i].is_whitespace() || matches!(chars[i], ';' | '{' | '}')) {
            i += 1;
        }
        while i < chars.len() {
            match chars[i] {
                '0'..='9' | '$' | ',' | '~' | '!' | '+' | ' ' => i += 1,
                '/' => i = skip_delimited(&chars, i + 1, '/'),
                '\\' if i + 1 < chars.len() => {
                    let delim = chars[i + 1];
                    i = skip_delimited(&chars, i + 2, delim);
                }
                _ => break,
            }
        }
        let Some(&command) = chars.get(i) else { break };
        i += 1;
        match command {
            'e' => return true,
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else { break };
                i = skip_delimited(&chars, i + 1, delim);
                i = skip_delimited(&chars, i, delim);
                let flags_end = (i..chars.len())
                    .find(|&j| matches!(chars[j], ';' | '\n' | '}'))
                    .unwrap_or(chars.len());
                if command == 's'
                    && chars[i..flags_end]
                        .iter()
                        .take_while(|c| !c.is_whitespace())
                        .any(|c| *c == 'e')
                {
                    return true;
                }
                i = flags_end;
            }
            // Commands whose argument runs to the end of the line.
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l'
            | 'L' | 'v' => {
                i = (i..chars.len())
                    .find(|&j| chars[j] == '\n')
                    .unwrap_or(chars.len());
            }
            _ => {}
        }
    }
    false
}

/// The index after the next unescaped `delim` from `from`.
fn skip_delimited(chars: &[char], from: usize, delim: char) -> usize {
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == delim {
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::sed_executes;

    #[test]
    fn sed_scripts_that_run_commands() {
        assert!(sed_executes("e pkill stead"));
        assert!(sed_executes("1e pkill stead"));
        assert!(sed_executes("s/x/pkill stead/e"));
        assert!(sed_executes("s|a|b|ge"));
        assert!(sed_executes("p;e date"));
        assert!(!sed_executes("s/web/api/g"));
        assert!(!sed_executes("s/e/f/"));
        assert!(!sed_executes("/web/d"));
        assert!(!sed_executes("1i\\echo e"));
        assert!(!sed_executes("s/restart web/stop/;p"));
    }
}
