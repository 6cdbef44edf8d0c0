//! The `hostile` suite: what hostile or careless clients cost a server, and what the
//! monitor's sweep of escaped descendants costs a run's end.
//!
//! - stalled readers: the server's memory while 20 clients hold a 32 MiB log answer
//!   open and read nothing;
//! - a saturated API: with the server's descriptors limited to 256 and 400 idle TCP
//!   connections held open, how long `stead status` takes, and the server's CPU and log
//!   growth meanwhile;
//! - the sweep: what looking for a run's escaped descendants costs when there are none
//!   (the common case), in microseconds, with as many processes on the machine as there
//!   are now.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::figures::{Stats, series};
use crate::proc;
use crate::stead::Stead;

/// Clients that stall on one log answer.
const STALLED: usize = 20;
/// Idle connections held open against the API, and the server's descriptor limit.
const IDLE_CONNECTIONS: usize = 400;
const DESCRIPTORS: u64 = 256;

pub struct HostileReport {
    pub stead: String,
    pub stead_version: String,
    /// VmRSS of the server before and while the readers stall, MiB.
    pub stalled_rss: (f64, f64),
    /// `stead status` while the API is saturated.
    pub saturated_status: Stats,
    /// Idle connections the server took (the rest it closed at once).
    pub saturated_open: usize,
    /// The server's CPU (percent of one core) and log growth (bytes) meanwhile.
    pub saturated_cpu: f64,
    pub saturated_log_bytes: u64,
    /// One sweep with nothing to end, and the processes on the machine.
    pub sweep: Stats,
    pub processes: usize,
}

impl HostileReport {
    pub fn table(&self) -> String {
        format!(
            "stead {} ({})\n\
             hostile clients\n\
             \x20 server VmRSS, {STALLED} clients stalled on a 32 MiB log: {:.1} MiB before, {:.1} MiB while they stall\n\
             \x20 `stead status` with {IDLE_CONNECTIONS} idle TCP connections at a {DESCRIPTORS}-descriptor limit \
             ({} held by the server): median {:.2} ms, p90 {:.2} ms, max {:.2} ms ({} calls)\n\
             \x20 the server meanwhile: {:.1}% of a CPU, server.log +{} bytes\n\
             descendant sweep at a run's end, nothing to end, {} processes on the machine: \
             median {:.1} µs, p90 {:.1} µs ({} sweeps)\n",
            self.stead_version,
            self.stead,
            self.stalled_rss.0,
            self.stalled_rss.1,
            self.saturated_open,
            self.saturated_status.median,
            self.saturated_status.p90,
            self.saturated_status.max,
            self.saturated_status.n,
            self.saturated_cpu,
            self.saturated_log_bytes,
            self.processes,
            self.sweep.median * 1e3,
            self.sweep.p90 * 1e3,
            self.sweep.n,
        )
    }

    pub fn json(&self) -> Value {
        let stats =
            |s: &Stats| json!({"n": s.n, "median_ms": s.median, "p90_ms": s.p90, "max_ms": s.max});
        json!({
            "stead": self.stead,
            "stead_version": self.stead_version,
            "stalled_readers": {
                "clients": STALLED,
                "rss_before_mib": self.stalled_rss.0,
                "rss_during_mib": self.stalled_rss.1,
            },
            "saturated_api": {
                "idle_connections": IDLE_CONNECTIONS,
                "descriptor_limit": DESCRIPTORS,
                "held_by_server": self.saturated_open,
                "status": stats(&self.saturated_status),
                "server_cpu_percent": self.saturated_cpu,
                "server_log_growth_bytes": self.saturated_log_bytes,
            },
            "sweep": {
                "processes": self.processes,
                "median_us": self.sweep.median * 1e3,
                "p90_us": self.sweep.p90 * 1e3,
                "n": self.sweep.n,
            },
        })
    }
}

/// The HTTP API of a state directory, started by `stead dashboard`: `host:port`, token.
fn api(stead: &Stead, dir: &std::path::Path) -> anyhow::Result<(String, String)> {
    let endpoint = stead.json(dir, &["dashboard", "--json"])?;
    let url = endpoint["url"].as_str().context("no url")?;
    let token = endpoint["token"].as_str().context("no token")?;
    Ok((
        url.trim_start_matches("http://").to_string(),
        token.to_string(),
    ))
}

/// The server's memory with [`STALLED`] clients holding a 32 MiB log answer unread.
pub fn stalled_readers(stead: &Stead) -> anyhow::Result<(f64, f64)> {
    let dir = stead.dir("stalled");
    stead.json(
        &dir,
        &[
            "job",
            "add",
            "big",
            "--json",
            "--shell",
            "--",
            "head -c 33554432 /dev/zero",
        ],
    )?;
    let run = stead.json(&dir, &["run", "big", "--wait", "--json"])?;
    let id = run["id"].as_i64().context("no run id")?;
    let (addr, token) = api(stead, &dir)?;
    let pid = stead.status(&dir, &[])?.pid;
    let before = proc::memory_mib(pid)?.0;
    let mut held = Vec::new();
    for _ in 0..STALLED {
        let mut stream = TcpStream::connect(&addr)?;
        write!(
            stream,
            "GET /api/runs/{id}/log HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
        )?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head)?;
        held.push(stream);
    }
    // Let the server fill whatever it buffers, then read its memory.
    std::thread::sleep(Duration::from_secs(1));
    let during = proc::memory_mib(pid)?.0;
    drop(held);
    stead.stop(&dir)?;
    Ok((before, during))
}

/// `stead status` while [`IDLE_CONNECTIONS`] idle TCP connections are held against a
/// server limited to [`DESCRIPTORS`] descriptors; with the server's CPU share and log
/// growth over the same time.
pub fn saturated(stead: &Stead, n: usize) -> anyhow::Result<(Stats, usize, f64, u64)> {
    let dir = stead.dir("saturated");
    let mut limited = Command::new("prlimit");
    limited
        .arg(format!("--nofile={DESCRIPTORS}:{DESCRIPTORS}"))
        .arg("--")
        .arg(stead.exe())
        .arg("--state-dir")
        .arg(&dir)
        .args(["status", "--json"]);
    crate::stead::scrub(&mut limited);
    let out = limited.output().context("prlimit (util-linux)")?;
    if !out.status.success() {
        bail!(
            "starting a limited server: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let pid = stead.status(&dir, &[])?.pid;
    let (addr, _) = api(stead, &dir)?;
    let log = dir.join("logs/server.log");
    let log_before = std::fs::metadata(&log)?.len();
    let cpu_before = cpu_ticks(pid)?;
    let since = Instant::now();
    let held: Vec<TcpStream> = (0..IDLE_CONNECTIONS)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    let open = proc::sockets(pid)?;
    let status = series(n, || stead.status(&dir, &[]).map(drop))?;
    // SAFETY: sysconf with a valid name.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu = (cpu_ticks(pid)? - cpu_before) as f64 / hz / since.elapsed().as_secs_f64() * 100.0;
    let grown = std::fs::metadata(&log)?.len().saturating_sub(log_before);
    drop(held);
    stead.stop(&dir)?;
    Ok((status, open, cpu, grown))
}

fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = stat.rfind(')').context("a stat line")? + 2;
    let fields: Vec<&str> = stat[after..].split_whitespace().collect();
    Ok(fields[11].parse::<u64>()? + fields[12].parse::<u64>()?)
}

/// The sweep a monitor makes at every run's end, with nothing left to end: measured in a
/// process of its own (`stead-bench sweep N`), which, like a monitor after its command,
/// has no children: in the bench itself the sweep would end the bench's own watchdog.
pub fn sweep(exe: &std::path::Path, n: usize) -> anyhow::Result<(Stats, usize)> {
    let out = Command::new(exe)
        .args(["sweep", &n.to_string()])
        .output()
        .context("the sweep probe")?;
    if !out.status.success() {
        bail!(
            "the sweep probe failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let said: Value = serde_json::from_slice(&out.stdout)?;
    let samples: Vec<f64> = said["samples_ms"]
        .as_array()
        .context("samples")?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let processes = said["processes"].as_u64().context("processes")? as usize;
    Ok((Stats::of_ms(samples), processes))
}

/// The probe itself: `n` sweeps, each timed, printed as JSON.
pub fn sweep_probe(n: usize) -> anyhow::Result<()> {
    let processes = std::fs::read_dir("/proc")?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .count();
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let none = std::collections::HashSet::new();
        // No command: no group of its own (0 is no process group).
        let ended = stead_monitor::sweep::end_descendants(Duration::ZERO, &none, "", 0);
        samples.push(start.elapsed().as_secs_f64() * 1e3);
        if ended != 0 {
            bail!("the probe had descendants to end: {ended}");
        }
    }
    println!("{}", json!({"processes": processes, "samples_ms": samples}));
    Ok(())
}
