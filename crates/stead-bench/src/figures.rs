//! The foundation figures: warm round trip, cold start, recovery after SIGKILL, and
//! the idle server's memory and wake-ups. Each figure starts and stops its own servers
//! in its own state directories; every time is a whole client process, wall clock.

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::proc;
use crate::pueue::Pueue;
use crate::stead::Stead;

/// Untimed calls before a timed series, so both sides start with warm caches.
const WARMUP: usize = 5;
/// Status calls between the two memory snapshots of the idle figure.
const IDLE_CALLS: usize = 100;
/// The idle figure's timings: a short heartbeat so a few of them fit in the window.
const IDLE_HEARTBEAT_MS: u64 = 1000;
const IDLE_LEASE_MS: u64 = 3000;
const IDLE_HEARTBEATS: u32 = 3;

/// Median, 90th percentile, minimum and maximum of a series, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub n: usize,
    pub median: f64,
    pub p90: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(samples: &[Duration]) -> Self {
        Self::of_ms(samples.iter().map(|d| d.as_secs_f64() * 1e3).collect())
    }

    /// The same over samples already in milliseconds, which may be negative (an event
    /// that came before the instant it is measured from).
    pub fn of_ms(mut ms: Vec<f64>) -> Self {
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => ms[n / 2],
            _ => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
        };
        // Nearest rank: the smallest sample with at least 90% of samples at or below it.
        let p90 = ms
            .get((n * 9).div_ceil(10).saturating_sub(1))
            .copied()
            .unwrap_or(f64::NAN);
        Self {
            n,
            median,
            p90,
            min: ms.first().copied().unwrap_or(f64::NAN),
            max: ms.last().copied().unwrap_or(f64::NAN),
        }
    }
}

pub fn timed<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(Duration, T)> {
    let start = Instant::now();
    let value = f()?;
    Ok((start.elapsed(), value))
}

/// Runs `f` `WARMUP` times untimed, then `n` times timed.
pub fn series(n: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Stats> {
    for _ in 0..WARMUP {
        f()?;
    }
    let samples = (0..n)
        .map(|_| timed(&mut f).map(|(d, ())| d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Stats::of(&samples))
}

/// Figure 1: `stead status --json` against a running server, and beside it `pueue status
/// --json` against a running pueued: the two in turn, call by call, so that a change in
/// the machine's pace over the series (a shared machine's neighbours) weighs on both
/// alike rather than on whichever ran second.
pub fn warm(
    stead: &Stead,
    pueue: Option<&Pueue>,
    n: usize,
) -> anyhow::Result<(Stats, Option<Stats>)> {
    let dir = stead.dir("w");
    let call_stead = || stead.status(&dir, &[]).map(drop);
    for _ in 0..WARMUP {
        call_stead()?;
        pueue.map(Pueue::status).transpose()?;
    }
    let (mut ours, mut theirs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        ours.push(timed(call_stead)?.0);
        if let Some(pueue) = pueue {
            theirs.push(timed(|| pueue.status())?.0);
        }
    }
    stead.stop(&dir)?;
    Ok((Stats::of(&ours), pueue.map(|_| Stats::of(&theirs))))
}

/// Figure 2's two kinds of cold start.
pub struct Cold {
    /// A state directory that does not exist yet.
    pub fresh: Stats,
    /// A state directory whose server was just stopped with `stead stop`.
    pub after_stop: Stats,
    pub all: Stats,
}

/// Figure 2: no server, then `stead status` until it answers. Even repetitions use a
/// fresh state directory, odd ones stop the previous repetition's server first.
pub fn cold(stead: &Stead, n: usize) -> anyhow::Result<Cold> {
    let (mut fresh, mut after_stop) = (Vec::new(), Vec::new());
    let mut dir = stead.dir("c");
    for i in 0..n {
        if i % 2 == 0 {
            if i > 0 {
                stead.stop(&dir)?;
                std::fs::remove_dir_all(&dir)?;
            }
            dir = stead.dir(&format!("c{i}"));
            fresh.push(timed(|| stead.status(&dir, &[]))?.0);
        } else {
            stead.stop(&dir)?;
            after_stop.push(timed(|| stead.status(&dir, &[]))?.0);
        }
    }
    if n > 0 {
        stead.stop(&dir)?;
    }
    let all: Vec<Duration> = fresh.iter().chain(&after_stop).copied().collect();
    Ok(Cold {
        fresh: Stats::of(&fresh),
        after_stop: Stats::of(&after_stop),
        all: Stats::of(&all),
    })
}

/// Figure 3: SIGKILL the server, wait until it is gone, then time `stead status` calls
/// until one answers from a new server.
pub fn recovery(stead: &Stead, n: usize) -> anyhow::Result<Stats> {
    let dir = stead.dir("r");
    let mut pid = stead.status(&dir, &[])?.pid;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        proc::kill_and_wait(pid)?;
        let start = Instant::now();
        loop {
            let now = stead.status(&dir, &[])?.pid;
            if now != pid {
                pid = now;
                break;
            }
            if start.elapsed() > Duration::from_secs(60) {
                bail!("stead status still answers from killed pid {pid}");
            }
        }
        samples.push(start.elapsed());
    }
    stead.stop(&dir)?;
    Ok(Stats::of(&samples))
}

/// Figure 4 for one daemon.
pub struct Idle {
    /// VmRSS and VmHWM in MiB right after its first answer.
    pub startup: (f64, f64),
    /// The same after [`IDLE_CALLS`] status calls.
    pub after_calls: (f64, f64),
    /// The resident memory after the calls, anonymous and file-backed, in MiB.
    pub after_calls_split: (f64, f64),
    /// Context switches of all its threads over the idle window.
    pub switches: u64,
    pub window: Duration,
    pub heartbeats: u32,
}

impl Idle {
    pub fn calls() -> usize {
        IDLE_CALLS
    }

    pub fn heartbeat_ms() -> u64 {
        IDLE_HEARTBEAT_MS
    }

    pub fn per_heartbeat(&self) -> f64 {
        self.switches as f64 / f64::from(self.heartbeats)
    }
}

/// Figure 4: a stead server with a 1 s heartbeat, and pueued (already started, so
/// "startup" is right after its first answers) measured side by side.
pub fn idle(stead: &Stead, pueue: Option<&Pueue>) -> anyhow::Result<(Idle, Option<Idle>)> {
    let dir = stead.dir("i");
    let (hb, lease) = (IDLE_HEARTBEAT_MS.to_string(), IDLE_LEASE_MS.to_string());
    let env = [
        ("STEAD_HEARTBEAT_MS", hb.as_str()),
        ("STEAD_LEASE_MS", lease.as_str()),
    ];
    let pid = stead.status(&dir, &env)?.pid;
    let stead_startup = proc::memory_mib(pid)?;
    let pueue_startup = pueue.map(|p| proc::memory_mib(p.pid())).transpose()?;
    for _ in 0..IDLE_CALLS {
        stead.status(&dir, &env)?;
        if let Some(p) = pueue {
            p.status()?;
        }
    }
    let stead_after = (proc::memory_mib(pid)?, proc::resident_split_mib(pid)?);
    let pueue_after = pueue
        .map(|p| {
            anyhow::Ok((
                proc::memory_mib(p.pid())?,
                proc::resident_split_mib(p.pid())?,
            ))
        })
        .transpose()?;
    // Let the last connections wind down before counting.
    std::thread::sleep(Duration::from_millis(200));
    let window = Duration::from_millis(IDLE_HEARTBEAT_MS * u64::from(IDLE_HEARTBEATS));
    let stead_before = proc::context_switches(pid)?;
    let pueue_before = pueue.map(|p| proc::context_switches(p.pid())).transpose()?;
    std::thread::sleep(window);
    let stead_switches = proc::context_switches(pid)? - stead_before;
    let pueue_switches = match (pueue, pueue_before) {
        (Some(p), Some(before)) => Some(proc::context_switches(p.pid())? - before),
        _ => None,
    };
    stead.stop(&dir)?;
    let make = |startup, (after_calls, after_calls_split), switches| Idle {
        startup,
        after_calls,
        after_calls_split,
        switches,
        window,
        heartbeats: IDLE_HEARTBEATS,
    };
    Ok((
        make(stead_startup, stead_after, stead_switches),
        pueue_startup
            .zip(pueue_after)
            .zip(pueue_switches)
            .map(|((s, a), w)| make(s, a, w)),
    ))
}

/// The idle figure as a user measures it: proportional set size right after a start and
/// one status call, over every process the daemon keeps (stead: the server, its spawner
/// of monitors and anything else below it; the spawner lives only while runs start).
pub struct IdlePss {
    /// MiB over all the processes.
    pub total: f64,
    pub processes: usize,
}

/// A fresh stead server after its start and one status call, and pueued (already started)
/// after one status call, in PSS; and stead's server after one run (`true`, waited for),
/// with the spawner that run started and the monitor it leaves waiting for the next.
pub fn idle_pss(
    stead: &Stead,
    pueue: Option<&Pueue>,
) -> anyhow::Result<(IdlePss, Option<IdlePss>, IdlePss)> {
    let dir = stead.dir("pss");
    let pid = stead.status(&dir, &[])?.pid;
    stead.status(&dir, &[])?;
    let of = |pid: u32| -> anyhow::Result<IdlePss> {
        let pids = proc::with_descendants(pid);
        let total = pids
            .iter()
            .map(|&p| proc::pss_mib(p))
            .sum::<anyhow::Result<f64>>()?;
        Ok(IdlePss {
            total,
            processes: pids.len(),
        })
    };
    let ours = of(pid)?;
    let theirs = pueue
        .map(|p| {
            p.status()?;
            of(p.pid())
        })
        .transpose()?;
    stead.call(&dir, &["job", "add", "once", "--", "true"])?;
    stead.call(&dir, &["run", "once", "--wait"])?;
    let after_a_run = of(pid)?;
    stead.stop(&dir)?;
    Ok((ours, theirs, after_a_run))
}
