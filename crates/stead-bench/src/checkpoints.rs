//! The `checkpoints` suite: what recording a checkpoint and a step costs a run's
//! command, as whole processes beside `stead status --json`, and 1,000 steps of one run.
//!
//! - A server with a job whose runs hold their key (they sleep), each run's
//!   `STEAD_RUN_ID` and `STEAD_RUN_TOKEN` read from the environment it wrote to a file.
//! - In turn, call by call (so the machine's pace weighs on each alike): `stead status
//!   --json`, `stead checkpoint set k v` (answered once durable) and `stead step sN --
//!   true` (a step not completed yet: asked, `true` run, its completion recorded), and
//!   the same step again (completed: skipped after one read).
//! - 1,000 steps of one run (another run: the key holds at most 1,000 steps), one
//!   `stead step sN -- true` process after another: the whole, and the median of each.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::figures::{Stats, timed};
use crate::report::stats;
use crate::runs::poll_every;
use crate::stead::Stead;

/// Untimed rounds before the timed ones.
const WARMUP: usize = 5;
/// The steps of one run in the last figure: the most one key holds.
const STEPS: usize = 1_000;

pub struct CheckpointsReport {
    pub stead: String,
    pub status: Stats,
    pub set: Stats,
    pub step: Stats,
    pub skipped: Stats,
    pub steps_total: Duration,
    pub steps_each: Stats,
}

/// A run in flight that holds its key: its id and token.
struct Holder {
    id: String,
    token: String,
}

fn holder(stead: &Stead, dir: &Path, env_file: &Path) -> anyhow::Result<Holder> {
    let _ = std::fs::remove_file(env_file);
    stead.json(dir, &["run", "holds", "--json"])?;
    let text = poll_every(
        Duration::from_millis(5),
        Duration::from_secs(30),
        || {
            format!(
                "the run never wrote its environment to {}",
                env_file.display()
            )
        },
        || {
            Ok(std::fs::read_to_string(env_file)
                .ok()
                .filter(|text| text.contains("STEAD_RUN_TOKEN=")))
        },
    )?;
    let var = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(str::to_string)
            .with_context(|| format!("the run's environment has no {name}"))
    };
    Ok(Holder {
        id: var("STEAD_RUN_ID")?,
        token: var("STEAD_RUN_TOKEN")?,
    })
}

/// One whole `stead ARGS...` process inside run `h`, which must succeed.
fn inside(stead: &Stead, dir: &Path, h: &Holder, args: &[&str]) -> anyhow::Result<()> {
    let out = stead
        .command(dir, args)
        .env("STEAD_RUN_ID", &h.id)
        .env("STEAD_RUN_TOKEN", &h.token)
        .output()?;
    if !out.status.success() {
        bail!(
            "stead {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

pub fn run(stead: &Stead, n: usize) -> anyhow::Result<CheckpointsReport> {
    let dir: PathBuf = stead.dir("checkpoints");
    std::fs::create_dir_all(&dir)?;
    let env_file = dir.join("run.env");
    let script = format!(
        "env > {}.tmp && mv {0}.tmp {0}; exec sleep 3600",
        env_file.display()
    );
    stead.json(
        &dir,
        &[
            "job",
            "add",
            "holds",
            "--concurrency",
            "allow",
            "--shell",
            "--json",
            "--",
            &script,
        ],
    )?;

    crate::progress("checkpoint set and step beside status, whole processes");
    let h = holder(stead, &dir, &env_file)?;
    let status = || stead.call(&dir, &["status", "--json"]);
    let set = || inside(stead, &dir, &h, &["checkpoint", "set", "k", "v"]);
    let step = |i: usize| inside(stead, &dir, &h, &["step", &format!("s{i}"), "--", "true"]);
    for i in 0..WARMUP {
        status()?;
        set()?;
        step(i)?;
    }
    let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        a.push(timed(status)?.0);
        b.push(timed(set)?.0);
        c.push(timed(|| step(WARMUP + i))?.0);
        // The same step again: completed, so skipped (one read, no command).
        d.push(timed(|| step(WARMUP + i))?.0);
    }

    crate::progress("1,000 steps of one run");
    let h = holder(stead, &dir, &env_file)?;
    let mut each = Vec::with_capacity(STEPS);
    let started = Instant::now();
    for i in 0..STEPS {
        each.push(timed(|| inside(stead, &dir, &h, &["step", &format!("s{i}"), "--", "true"]))?.0);
    }
    let steps_total = started.elapsed();
    let recorded = stead.json(&dir, &["checkpoint", "ls", "--run", &h.id, "--json"])?;
    let count = recorded["steps"].as_array().map_or(0, Vec::len);
    if count != STEPS {
        bail!("{count} steps recorded of {STEPS}");
    }
    // The holding runs would sleep on for an hour after a plain stop.
    stead.call(&dir, &["stop", "--cancel-runs", "--json"])?;
    Ok(CheckpointsReport {
        stead: stead.exe().display().to_string(),
        status: Stats::of(&a),
        set: Stats::of(&b),
        step: Stats::of(&c),
        skipped: Stats::of(&d),
        steps_total,
        steps_each: Stats::of(&each),
    })
}

impl CheckpointsReport {
    pub fn table(&self) -> String {
        let (s, c, p, e) = (&self.status, &self.set, &self.step, &self.steps_each);
        let k = &self.skipped;
        format!(
            "checkpoints ({})\n\
             stead status --json (whole process)         median {:.2} ms, p90 {:.2} ms (n={})\n\
             stead checkpoint set k v (durable)          median {:.2} ms, p90 {:.2} ms ({:+.2} ms)\n\
             stead step NAME -- true (recorded)          median {:.2} ms, p90 {:.2} ms ({:+.2} ms)\n\
             ... the same step again (skipped)           median {:.2} ms, p90 {:.2} ms ({:+.2} ms)\n\
             1,000 steps of one run                      {:.2} s in all, median {:.2} ms, p90 {:.2} ms, last {:.2} ms\n",
            self.stead,
            s.median,
            s.p90,
            s.n,
            c.median,
            c.p90,
            c.median - s.median,
            p.median,
            p.p90,
            p.median - s.median,
            k.median,
            k.p90,
            k.median - s.median,
            self.steps_total.as_secs_f64(),
            e.median,
            e.p90,
            e.max,
        )
    }

    pub fn json(&self) -> Value {
        json!({
            "stead": self.stead,
            "status_ms": stats(&self.status),
            "checkpoint_set_ms": stats(&self.set),
            "step_ms": stats(&self.step),
            "checkpoint_set_over_status_ms": self.set.median - self.status.median,
            "step_over_status_ms": self.step.median - self.status.median,
            "step_skipped_ms": stats(&self.skipped),
            "steps_1000_total_s": self.steps_total.as_secs_f64(),
            "steps_1000_each_ms": stats(&self.steps_each),
        })
    }
}
