//! The `notify` suite: how soon a notification reaches its receiver, and what the outbox
//! costs a run's end.
//!
//! - Delivery delay: a server with one notifier POSTing to a receiver in this process (a
//!   loopback HTTP server answering 200); one failing run at a time (`stead run --wait`),
//!   each measured from its recorded end (`ended_at`, the ledger's clock, which on one
//!   host is this machine's) to the moment its `failed` event arrived.
//! - Outbox overhead: the monitor's end transaction (`finish`, durable: WAL with
//!   `synchronous=FULL`) of a failed run on a SQLite ledger, timed in this process, with
//!   no notifier and with one that listens (the event is written in that transaction):
//!   the difference of the medians is what the outbox adds to a run's end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use anyhow::Context;
use jiff::Timestamp;
use serde_json::{Value, json};
use stead_core::lease::{ClaimOutcome, Claimant};
use stead_core::locator::LedgerRef;
use stead_core::plan::Planner;
use stead_core::records::NewRun;
use stead_core::runs::RunEnd;
use stead_protocol::{JobSpec, NotifierSpec, Trigger};
use stead_store::sqlite::SqliteStore;
use stead_store::{Catalog, Lease, Notices, RunLedger, RunRecorder};
use stead_sys::identity::StartIdentity;

use crate::figures::Stats;
use crate::report::stats;
use crate::stead::Stead;

pub struct NotifyReport {
    pub stead: String,
    /// From a run's recorded end to its event at the receiver, in milliseconds.
    pub delivery: Stats,
    /// The end transaction of a failed run without a notifier, and with one, in µs.
    pub end_plain_us: Stats,
    pub end_notified_us: Stats,
}

/// Every POST the receiver got: its body and the wall time it arrived.
type Arrivals = Arc<Mutex<Vec<(Value, SystemTime)>>>;

/// A loopback HTTP receiver answering 200 to every POST, recording each body; it serves
/// until this process exits.
fn receiver() -> anyhow::Result<(String, Arrivals)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    let got: Arrivals = Arc::default();
    let record = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let Ok(clone) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(clone);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let at = SystemTime::now();
            let mut stream = stream;
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            if let Ok(value) = serde_json::from_slice(&body) {
                record.lock().unwrap().push((value, at));
            }
        }
    });
    Ok((url, got))
}

/// Milliseconds from RFC 3339 `ended_at` to `arrived`.
fn ms_after(ended_at: &str, arrived: SystemTime) -> anyhow::Result<f64> {
    let ended: Timestamp = ended_at.parse()?;
    let arrived = Timestamp::try_from(arrived)?;
    Ok(arrived.duration_since(ended).as_secs_f64() * 1e3)
}

fn delivery(stead: &Stead, n: usize) -> anyhow::Result<Stats> {
    let (url, got) = receiver()?;
    let dir = stead.dir("notify");
    stead.json(&dir, &["notify", "add", "bench", "--url", &url, "--json"])?;
    stead.json(&dir, &["job", "add", "fails", "--json", "--", "false"])?;
    let mut delays = Vec::with_capacity(n);
    for i in 0..n {
        // Exits 1 (the run's code): its JSON is what is read.
        let out = stead
            .command(&dir, &["run", "fails", "--wait", "--json"])
            .output()?;
        let run: Value = serde_json::from_slice(&out.stdout).context("run --wait --json")?;
        let id = run["id"].clone();
        let ended = run["ended_at"]
            .as_str()
            .context("an ended run")?
            .to_string();
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let arrived = loop {
            let found = got
                .lock()
                .unwrap()
                .iter()
                .find(|(event, _)| event["run"]["id"] == id)
                .map(|(_, at)| *at);
            if let Some(at) = found {
                break at;
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "run {id}'s event never arrived ({i})"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        delays.push(ms_after(&ended, arrived)?);
    }
    stead.stop(&dir)?;
    Ok(Stats::of_ms(delays))
}

/// A ledger served by this process, with one job whose runs fail.
struct Ledger {
    store: SqliteStore,
    epoch: i64,
    job: stead_core::records::StoredJob,
    identity: StartIdentity,
}

impl Ledger {
    fn open(path: &Path) -> anyhow::Result<Self> {
        let store = SqliteStore::open(path)?;
        let identity = stead_sys::identity::current()?;
        let claimant = Claimant::new("bench".into(), std::process::id(), identity.clone());
        let ttl = jiff::SignedDuration::from_secs(600);
        let lease = match store.claim_lease(&claimant, Timestamp::now(), ttl, None)? {
            ClaimOutcome::Claimed(lease) => lease,
            other => anyhow::bail!("the bench's own ledger is taken: {other:?}"),
        };
        let spec = JobSpec {
            name: "fails".into(),
            command: vec!["false".into()],
            ..JobSpec::default()
        };
        let job = store.job_insert(&spec, Timestamp::now(), lease.epoch)?;
        Ok(Self {
            store,
            epoch: lease.epoch,
            job,
            identity,
        })
    }

    /// Times `finish` of `n` failed runs, in microseconds.
    fn ends(&self, n: usize) -> anyhow::Result<Stats> {
        let planner = Planner {
            ledger: LedgerRef::Sqlite {
                path: Default::default(),
            },
            state_dir: "/nonexistent".into(),
            log_dir: "/nonexistent".into(),
            power_supplies: None,
        };
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let new = NewRun::of(&self.job, Trigger::OnDemand, "m", "b", Timestamp::now());
            let id = self
                .store
                .run_admit(&new, &self.job.spec, &planner, self.epoch)?
                .run
                .id;
            self.store
                .mark_running(id, std::process::id(), &self.identity, Timestamp::now())?;
            let end = RunEnd::exited(1, Timestamp::now());
            let started = Instant::now();
            self.store.finish(id, &end)?;
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
        Ok(Stats::of_ms(samples))
    }
}

fn end_overhead(root: &Path, n: usize) -> anyhow::Result<(Stats, Stats)> {
    let plain = Ledger::open(&root.join("plain.db"))?;
    let notified = Ledger::open(&root.join("notified.db"))?;
    let spec = NotifierSpec {
        name: "bench".into(),
        url: "http://127.0.0.1:9/hook".into(),
        events: Vec::new(),
        jobs: Vec::new(),
        sign: false,
    };
    notified
        .store
        .notifier_set(&spec, Timestamp::now(), notified.epoch)?;
    // Interleaved, so both see the same disk and the same moment's load.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..n {
        a.push(plain.ends(1)?.median);
        b.push(notified.ends(1)?.median);
    }
    Ok((Stats::of_ms(a), Stats::of_ms(b)))
}

pub fn run(stead: &Stead, root: &Path, n: usize) -> anyhow::Result<NotifyReport> {
    crate::progress("notification delivery");
    let delivery = delivery(stead, n)?;
    crate::progress("outbox at a run's end");
    let (end_plain_us, end_notified_us) = end_overhead(root, n.max(200))?;
    Ok(NotifyReport {
        stead: stead.exe().display().to_string(),
        delivery,
        end_plain_us,
        end_notified_us,
    })
}

impl NotifyReport {
    pub fn table(&self) -> String {
        let d = &self.delivery;
        let (a, b) = (&self.end_plain_us, &self.end_notified_us);
        format!(
            "notify ({})\n\
             failure recorded -> event at the receiver    median {:.2} ms, p90 {:.2} ms (n={})\n\
             a failed run's end transaction, no notifier  median {:.0} µs, p90 {:.0} µs (n={})\n\
             ... with one notifier listening (outbox)     median {:.0} µs, p90 {:.0} µs\n\
             what the outbox adds to a run's end          {:+.0} µs (median)\n",
            self.stead,
            d.median,
            d.p90,
            d.n,
            a.median,
            a.p90,
            a.n,
            b.median,
            b.p90,
            b.median - a.median,
        )
    }

    pub fn json(&self) -> Value {
        json!({
            "stead": self.stead,
            "delivery_ms": stats(&self.delivery),
            "end_plain_us": stats(&self.end_plain_us),
            "end_notified_us": stats(&self.end_notified_us),
            "outbox_overhead_us": self.end_notified_us.median - self.end_plain_us.median,
        })
    }
}
