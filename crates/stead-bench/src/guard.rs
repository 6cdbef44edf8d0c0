//! The `guard` suite: what reading a command costs, in process through the
//! `stead-guard` library, and once end to end through `stead guard --hook`.
//!
//! - verdicts per second on typical agent commands, allowed and refused, one at a time
//!   (each verdict reads the command on a thread of its own, as the hook does);
//! - a megabyte command of several shapes: the time for one verdict, and its ratio to
//!   the time for a quarter of the command (4 when the work is linear in the size);
//! - refusing a command nested 1,500 groups deep;
//! - `stead guard --hook` as an agent runs it: a whole process, reading the tool call,
//!   asking a running server for the declared services, answering.

use std::io::Write;
use std::process::Stdio;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use stead_guard::{Guard, Verdict};
use stead_protocol::ServiceSpec;

use crate::figures::{Stats, series};
use crate::stead::Stead;

/// Typical agent commands, and whether the guard allows them.
const TYPICAL: &[(&str, bool)] = &[
    (
        "cd /work/project && cargo build --release 2>&1 | tail -20",
        true,
    ),
    (
        "git add -A && git commit -m 'Fix the web handler' && git push",
        true,
    ),
    ("grep -rn \"restart\" src/ | head -50", true),
    ("python3 -m pytest tests/ -x -q", true),
    ("sudo systemctl --user restart web.service", false),
    (
        "stead gate --service web && systemctl --user restart web.service",
        true,
    ),
    ("for f in *.log; do gzip \"$f\"; done", true),
    ("pkill -f 'web-server --port 8080'", false),
];

/// The shapes of the megabyte command: what is repeated to fill it.
const SHAPES: &[(&str, &str)] = &[
    (
        "command lines",
        "cargo build --release && git status --short | grep web || echo \"$(date) done\"\n",
    ),
    ("one here-document", "line of a here-document fed to cat\n"),
    ("one long word", "a"),
    (
        "nested groups and substitutions",
        "{ x=$(echo ${y:-z}); ( ls \"$x\" ); }\n",
    ),
];

pub struct GuardReport {
    pub stead: String,
    pub stead_version: String,
    /// One verdict on each typical command, ms.
    pub verdict: Stats,
    /// Per shape: one verdict on a 1 MiB command, and on a quarter of it, ms.
    pub megabyte: Vec<(&'static str, Stats, Stats)>,
    pub deep: Stats,
    pub hook: Stats,
}

impl GuardReport {
    pub fn table(&self) -> String {
        let mut out = format!(
            "stead {} ({})\nthe guard\n\
             \x20 one verdict on a typical agent command: median {:.3} ms, p90 {:.3} ms \
             ({:.0} verdicts/s; {} verdicts)\n",
            self.stead_version,
            self.stead,
            self.verdict.median,
            self.verdict.p90,
            1e3 / self.verdict.median,
            self.verdict.n,
        );
        for (shape, full, quarter) in &self.megabyte {
            out.push_str(&format!(
                "  a 1 MiB command ({shape}): median {:.1} ms; a quarter of it {:.1} ms (ratio {:.1}, linear is 4)\n",
                full.median,
                quarter.median,
                full.median / quarter.median,
            ));
        }
        out.push_str(&format!(
            "  refusing 1,500 nested groups: median {:.2} ms\n\
             \x20 `stead guard --hook`, a whole process asking a running server: median {:.1} ms, p90 {:.1} ms ({} calls)\n",
            self.deep.median, self.hook.median, self.hook.p90, self.hook.n,
        ));
        out
    }

    pub fn json(&self) -> Value {
        let stats =
            |s: &Stats| json!({"n": s.n, "median_ms": s.median, "p90_ms": s.p90, "max_ms": s.max});
        let megabyte: Vec<Value> = self
            .megabyte
            .iter()
            .map(|(shape, full, quarter)| {
                json!({
                    "shape": shape,
                    "one_mib": stats(full),
                    "quarter": stats(quarter),
                    "ratio": full.median / quarter.median,
                })
            })
            .collect();
        json!({
            "stead": self.stead,
            "stead_version": self.stead_version,
            "verdict": stats(&self.verdict),
            "verdicts_per_second": 1e3 / self.verdict.median,
            "megabyte": megabyte,
            "deep_nesting_refusal": stats(&self.deep),
            "hook_process": stats(&self.hook),
        })
    }
}

/// The services the figures guard.
fn services() -> Vec<ServiceSpec> {
    vec![ServiceSpec {
        name: "web".into(),
        restart: Some("systemctl --user restart web.service".into()),
        systemd_unit: Some("web.service".into()),
        process: Some("web-server".into()),
        ..ServiceSpec::default()
    }]
}

fn expect(guard: &Guard, command: &str, allowed: bool) -> anyhow::Result<()> {
    let verdict = guard.check(command);
    if (verdict == Verdict::Allow) != allowed {
        bail!("the guard's verdict on {command:?} changed: {verdict:?}");
    }
    Ok(())
}

/// One verdict on each typical command, `rounds` times over.
pub fn verdicts(rounds: usize) -> anyhow::Result<Stats> {
    let guard = Guard::new(&services());
    let mut at = 0;
    series(rounds * TYPICAL.len(), || {
        let (command, allowed) = TYPICAL[at % TYPICAL.len()];
        at += 1;
        expect(&guard, command, allowed)
    })
}

/// Per shape, verdicts on a 1 MiB command and on a quarter of it.
pub fn megabyte(n: usize) -> anyhow::Result<Vec<(&'static str, Stats, Stats)>> {
    let guard = Guard::new(&services());
    let command = |shape: &str, unit: &str, bytes: usize| {
        let body = unit.repeat(bytes / unit.len());
        match shape {
            "one here-document" => format!("cat <<'EOF'\n{body}EOF\n"),
            "one long word" => format!("echo {body}"),
            _ => body,
        }
    };
    let mut out = Vec::new();
    for (shape, unit) in SHAPES {
        let full = command(shape, unit, 1 << 20);
        let quarter = command(shape, unit, 1 << 18);
        let full_stats = series(n, || expect(&guard, &full, true))?;
        let quarter_stats = series(n, || expect(&guard, &quarter, true))?;
        out.push((*shape, full_stats, quarter_stats));
    }
    Ok(out)
}

/// Refusing 1,500 nested groups.
pub fn deep(n: usize) -> anyhow::Result<Stats> {
    let guard = Guard::new(&services());
    let command = "{ ".repeat(1500) + "ls" + &"; }".repeat(1500);
    series(n, || match guard.check(&command) {
        Verdict::Refuse(refusal) if refusal.service.is_none() => Ok(()),
        other => bail!("1,500 nested groups: {other:?}"),
    })
}

/// `stead guard --hook` on a refused call, against a running server with `web` declared.
pub fn hook(stead: &Stead, n: usize) -> anyhow::Result<Stats> {
    let dir = stead.dir("guard");
    stead.json(
        &dir,
        &[
            "service",
            "add",
            "web",
            "--systemd-unit",
            "web.service",
            "--json",
        ],
    )?;
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "systemctl --user restart web.service"}})
        .to_string();
    let stats = series(n, || {
        let mut child = stead
            .command(&dir, &["guard", "--hook"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("stead guard --hook")?;
        child
            .stdin
            .take()
            .context("stdin")?
            .write_all(call.as_bytes())?;
        let status = child.wait()?;
        if status.code() != Some(2) {
            bail!("stead guard --hook answered {status} to an ungated restart");
        }
        Ok(())
    });
    stead.stop(&dir)?;
    stats
}
