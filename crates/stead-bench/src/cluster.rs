//! The cluster figures on three hosts sharing one PostgreSQL ledger: how soon another
//! host leads the scheduler after the leader's server is SIGKILLed, and how soon a run of
//! a host that died (its server, the run's monitor and its command SIGKILLed) runs again
//! on another host. (The suite's one-host figures, fire-to-exec latency and throughput
//! on PostgreSQL beside SQLite, are the `runs` figures' code on both backends.)
//!
//! Three servers on this machine stand in for the three hosts, as stead's cluster tests
//! do: each has its own state directory, `STEAD_MACHINE_ID` and `STEAD_HOST_NAME`, and
//! all share a database of the bench's own and short timings ([`LEASE_MS`],
//! [`HEARTBEAT_MS`], [`RESUME_DELAY_MS`]). Every stead command on a host's directory
//! carries that host's environment, so a call that starts its server starts it right.
//! After each repetition the killed server is started again and the bench waits until
//! all three serve. Every time is wall clock; the cluster's state is polled every
//! [`POLL_MS`].

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use crate::figures::Stats;
use crate::stead::Stead;
use crate::{pg, proc};

/// The hosts' names (`STEAD_HOST_NAME`); each one's machine id is `stead-bench-NAME`.
pub const HOSTS: [&str; 3] = ["a", "b", "c"];
/// The timings of every server of the cluster.
pub const LEASE_MS: u64 = 2000;
pub const HEARTBEAT_MS: u64 = 250;
pub const RESUME_DELAY_MS: u64 = 200;
/// How often the bench asks whether the cluster did what it waits for.
pub const POLL_MS: u64 = 10;
/// The longest the bench waits for the cluster to do what it owes.
const WAIT: Duration = Duration::from_secs(60);
/// The job of the host-death figure.
const JOB: &str = "hold";

/// One host: a state directory whose server always starts with the host's environment.
pub struct Host {
    pub name: &'static str,
    pub machine_id: String,
    dir: PathBuf,
    env: Vec<(&'static str, String)>,
}

impl Host {
    fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }
}

/// What `stead hosts --json` says.
struct View {
    /// The machine id of the leader, if one leads.
    leader: Option<String>,
    hosts: Vec<HostState>,
}

struct HostState {
    machine_id: String,
    state: String,
    pid: Option<u32>,
}

/// The three hosts on one database.
pub struct Cluster<'a> {
    stead: &'a Stead,
    hosts: Vec<Host>,
}

impl<'a> Cluster<'a> {
    /// Starts the three servers on the database at `url` and waits until all serve and
    /// one leads.
    pub fn start(stead: &'a Stead, url: &str) -> anyhow::Result<Self> {
        let hosts = HOSTS
            .iter()
            .map(|&name| {
                let machine_id = format!("stead-bench-{name}");
                Host {
                    name,
                    dir: stead.dir(&format!("host-{name}")),
                    env: vec![
                        ("STEAD_STORE_URL", url.to_string()),
                        ("STEAD_MACHINE_ID", machine_id.clone()),
                        ("STEAD_HOST_NAME", name.to_string()),
                        ("STEAD_LEASE_MS", LEASE_MS.to_string()),
                        ("STEAD_HEARTBEAT_MS", HEARTBEAT_MS.to_string()),
                        ("STEAD_RESUME_DELAY_MS", RESUME_DELAY_MS.to_string()),
                    ],
                    machine_id,
                }
            })
            .collect();
        let cluster = Self { stead, hosts };
        let mut started = Vec::new();
        for host in &cluster.hosts {
            started.push((host, cluster.status(host)?));
        }
        cluster.wait_serving(&cluster.hosts[0], &started)?;
        Ok(cluster)
    }

    /// `stead status` on the host: the pid of its server, started if none runs.
    fn status(&self, host: &Host) -> anyhow::Result<u32> {
        Ok(self.stead.status(&host.dir, &host.env())?.pid)
    }

    /// One whole `stead ARGS...` process on the host, printing JSON.
    fn json(&self, host: &Host, args: &[&str]) -> anyhow::Result<Value> {
        self.stead.json_with(&host.dir, &host.env(), args)
    }

    /// `stead hosts --json` on the host.
    fn view(&self, host: &Host) -> anyhow::Result<View> {
        let json = self.json(host, &["hosts", "--json"])?;
        let hosts = json["hosts"]
            .as_array()
            .context("stead hosts --json printed no hosts")?
            .iter()
            .map(|h| HostState {
                machine_id: h["machine_id"].as_str().unwrap_or_default().to_string(),
                state: h["state"].as_str().unwrap_or_default().to_string(),
                pid: h["pid"].as_u64().and_then(|p| u32::try_from(p).ok()),
            })
            .collect();
        Ok(View {
            leader: json["leader"].as_str().map(str::to_string),
            hosts,
        })
    }

    fn by_machine(&self, machine_id: &str) -> anyhow::Result<&Host> {
        self.hosts
            .iter()
            .find(|h| h.machine_id == machine_id)
            .with_context(|| format!("no host has machine id {machine_id:?}"))
    }

    /// The host after `host`, in [`HOSTS`] order: one that is not `host`.
    fn other(&self, host: &Host) -> &Host {
        let at = self
            .hosts
            .iter()
            .position(|h| std::ptr::eq(h, host))
            .unwrap_or(0);
        &self.hosts[(at + 1) % self.hosts.len()]
    }

    /// Waits until `stead hosts --json` on `from` shows every host serving, each of
    /// `servers` with that server's pid, and a leader.
    fn wait_serving(&self, from: &Host, servers: &[(&Host, u32)]) -> anyhow::Result<()> {
        watch(
            || format!("all {} hosts were not serving", self.hosts.len()),
            || {
                let view = self.view(from)?;
                let serving = |host: &Host| {
                    view.hosts.iter().any(|h| {
                        h.machine_id == host.machine_id
                            && h.state == "serving"
                            && servers
                                .iter()
                                .filter(|(s, _)| std::ptr::eq(*s, host))
                                .all(|(_, pid)| h.pid == Some(*pid))
                    })
                };
                Ok((view.leader.is_some() && self.hosts.iter().all(serving)).then_some(()))
            },
        )
    }

    /// Stops the three servers.
    pub fn stop(&self) -> anyhow::Result<()> {
        for host in &self.hosts {
            self.stead.stop_with(&host.dir, &host.env())?;
        }
        Ok(())
    }
}

/// Calls `f` every [`POLL_MS`] (after its own time) until it returns a value; fails
/// after [`WAIT`], saying `what`.
fn watch<T>(
    what: impl Fn() -> String,
    mut f: impl FnMut() -> anyhow::Result<Option<T>>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(value) = f()? {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            bail!("{} after {} s", what(), WAIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(POLL_MS));
    }
}

/// A pseudo-random wait under one heartbeat (splitmix64 of the clock), taken before
/// every kill and every restart. Without it the bench's own rhythm (a fixed chain of
/// calls since the last handover) kills each leader at the same point of its heartbeat,
/// about 50 ms after a renewal, and restarts a server a fixed few tens of ms after the
/// new leader's tick, so the hosts' heartbeats stay in step; with it the kills fall
/// anywhere in the heartbeat, as a host's death would.
fn jitter() -> Duration {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    Duration::from_millis(z % HEARTBEAT_MS)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One repetition of a figure: how long it took, from which host to which.
pub struct Repetition {
    pub ms: f64,
    /// The killed host.
    pub from: &'static str,
    /// The new leader, or the host that runs the resume.
    pub to: &'static str,
    /// Whether the killed host led the scheduler.
    pub leader: bool,
    /// The ledger's steps after the kill (whole ms): the dead leader's row expired
    /// (missing if another host took over before it was read); or the dead host's run
    /// ended interrupted, the resume run's row was written, it was marked running.
    pub ledger_ms: Vec<f64>,
}

/// Figure: leader failover after SIGKILL.
pub struct Failover {
    /// SIGKILL of the leader's server → `stead hosts --json` on another host names
    /// another leader.
    pub handover: Stats,
    /// SIGKILL → the dead leader's leadership expired (its row's expiry, whole ms, on
    /// this machine's clock): where in its heartbeat the kill fell.
    pub expiry: Stats,
    pub each: Vec<Repetition>,
    /// `stead status` restarting the killed host → all three serving again.
    pub rejoin: Stats,
}

/// Leader failover, `k` times: find the leader (asking the hosts in turn), wait
/// [`jitter`], SIGKILL its server, poll `stead hosts --json` on the next host until it
/// names another leader; then wait [`jitter`] again, start the killed host's server
/// again and wait until all three serve. The dead leader's row is read from the
/// database at `url` once it is gone.
pub fn failover(cluster: &Cluster, url: &str, k: usize) -> anyhow::Result<Failover> {
    let mut db = pg::connect(url)?;
    let (mut handover, mut rejoin, mut each) = (Vec::new(), Vec::new(), Vec::new());
    let mut expiry = Vec::new();
    for i in 0..k {
        let asker = &cluster.hosts[i % cluster.hosts.len()];
        let leader = watch(
            || "no host leads the scheduler".to_string(),
            || Ok(cluster.view(asker)?.leader),
        )?;
        let victim = cluster.by_machine(&leader)?;
        let witness = cluster.other(victim);
        let pid = cluster.status(victim)?;
        std::thread::sleep(jitter());

        let wall = SystemTime::now();
        let killed = Instant::now();
        proc::kill_and_wait(pid)?;
        let (held_by, expires_ms) = pg::leader(&mut db)?;
        let kill_ms = wall.duration_since(UNIX_EPOCH)?.as_secs_f64() * 1e3;
        // None if another host took over before the row was read.
        let expired =
            (held_by.as_deref() == Some(leader.as_str())).then_some(expires_ms as f64 - kill_ms);
        expiry.extend(expired);
        let next = watch(
            || format!("no host but {} leads", victim.name),
            || Ok(cluster.view(witness)?.leader.filter(|l| *l != leader)),
        )?;
        let took = killed.elapsed();
        handover.push(took);
        each.push(Repetition {
            ms: ms(took),
            from: victim.name,
            to: cluster.by_machine(&next)?.name,
            leader: true,
            ledger_ms: expired.into_iter().collect(),
        });

        std::thread::sleep(jitter());
        let restarted = Instant::now();
        let pid = cluster.status(victim)?;
        cluster.wait_serving(witness, &[(victim, pid)])?;
        rejoin.push(restarted.elapsed());
    }
    Ok(Failover {
        handover: Stats::of(&handover),
        expiry: Stats::of_ms(expiry),
        each,
        rejoin: Stats::of(&rejoin),
    })
}

/// Figure: a host dies, its run resumes on another host.
pub struct Death {
    /// SIGKILL of the run's host's server → a run resuming it is running on another
    /// host (polled in the ledger).
    pub resumed: Stats,
    pub each: Vec<Repetition>,
    /// From the SIGKILL, in the ledger (its whole milliseconds, on this machine's clock):
    /// the run ended interrupted, the resume run's row was written, it was marked
    /// running.
    pub interrupted: Stats,
    pub row: Stats,
    pub running: Stats,
    /// `stead status` restarting the dead host → all three serving again.
    pub rejoin: Stats,
}

/// Host death, `k` times, with a job `--resume-on any --concurrency allow` whose command
/// is `stead-bench hold ROOT/` (it sleeps; its argv names the bench's directory, so the
/// cleanup finds it): start a run (from the hosts in turn), find its host and monitor
/// (`stead show`), wait [`jitter`], SIGKILL that host's server, then the monitor and the
/// command (the monitor's children); poll the ledger until a run whose parent is the run
/// is running on another host. Then wait [`jitter`] again, start the dead host's server
/// again, wait until all three serve, and cancel the resume run.
pub fn death(
    cluster: &Cluster,
    url: &str,
    bench_exe: &Path,
    root: &Path,
    k: usize,
) -> anyhow::Result<Death> {
    let exe = bench_exe
        .to_str()
        .context("the bench's path is not UTF-8")?;
    let hold = format!("{}/", root.display());
    cluster.json(
        &cluster.hosts[0],
        &[
            "job",
            "add",
            JOB,
            "--concurrency",
            "allow",
            "--resume-on",
            "any",
            "--json",
            "--",
            exe,
            "hold",
            &hold,
        ],
    )?;
    let mut db = pg::connect(url)?;
    let (mut resumed, mut rejoin, mut each) = (Vec::new(), Vec::new(), Vec::new());
    let (mut interrupted, mut row, mut running) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..k {
        let submitter = &cluster.hosts[i % cluster.hosts.len()];
        let id = cluster.json(submitter, &["run", JOB, "--json"])?["id"]
            .as_i64()
            .context("stead run --json printed no id")?;
        let id_arg = id.to_string();
        let (machine, monitor) = watch(
            || format!("run {id} was not running"),
            || {
                let run = cluster.json(submitter, &["show", &id_arg, "--json"])?;
                Ok(
                    match (
                        run["status"].as_str(),
                        run["machine_id"].as_str(),
                        run["monitor_pid"].as_u64(),
                    ) {
                        (Some("running"), Some(m), Some(pid)) if !m.is_empty() => {
                            Some((m.to_string(), u32::try_from(pid)?))
                        }
                        _ => None,
                    },
                )
            },
        )?;
        let victim = cluster.by_machine(&machine)?;
        let witness = cluster.other(victim);
        let leader = cluster.view(witness)?.leader.as_deref() == Some(machine.as_str());
        let server = cluster.status(victim)?;
        // The monitor's children: the command, started after the run was marked running.
        let command = watch(
            || format!("the monitor of run {id} has no child"),
            || {
                let children = proc::children(monitor);
                Ok((!children.is_empty()).then_some(children))
            },
        )?;
        std::thread::sleep(jitter());

        let wall = SystemTime::now();
        let killed = Instant::now();
        proc::kill_and_wait(server)?;
        let mut rest = vec![monitor];
        rest.extend(&command);
        proc::kill_all_and_wait(&rest)?;
        let resume = watch(
            || format!("run {id} was not resumed and running on another host"),
            || {
                Ok(pg::resumes_of(&mut db, id)?
                    .into_iter()
                    .find(|r| r.status == "running" && r.machine_id != machine))
            },
        )?;
        let took = killed.elapsed();

        let kill_ms = wall.duration_since(UNIX_EPOCH)?.as_secs_f64() * 1e3;
        let parent = pg::run(&mut db, id)?.with_context(|| format!("run {id} is gone"))?;
        ensure!(
            parent.status == "interrupted",
            "run {id} was resumed, yet is {}",
            parent.status
        );
        let steps = vec![
            parent.ended_ms.unwrap_or_default() as f64 - kill_ms,
            resume.created_ms as f64 - kill_ms,
            resume.started_ms.unwrap_or_default() as f64 - kill_ms,
        ];
        interrupted.push(steps[0]);
        row.push(steps[1]);
        running.push(steps[2]);
        resumed.push(took);
        let resumer = cluster.by_machine(&resume.machine_id)?;
        each.push(Repetition {
            ms: ms(took),
            from: victim.name,
            to: resumer.name,
            leader,
            ledger_ms: steps,
        });

        std::thread::sleep(jitter());
        let restarted = Instant::now();
        let pid = cluster.status(victim)?;
        cluster.wait_serving(witness, &[(victim, pid)])?;
        rejoin.push(restarted.elapsed());

        let resumes = pg::resumes_of(&mut db, id)?.len();
        ensure!(resumes == 1, "run {id} was resumed {resumes} times");
        cluster.json(resumer, &["cancel", &resume.id.to_string(), "--json"])?;
        watch(
            || format!("the resume run {} did not end", resume.id),
            || {
                let run = pg::run(&mut db, resume.id)?;
                Ok(run.filter(|r| pg::is_terminal(&r.status)).map(drop))
            },
        )?;
    }
    Ok(Death {
        resumed: Stats::of(&resumed),
        each,
        interrupted: Stats::of_ms(interrupted),
        row: Stats::of_ms(row),
        running: Stats::of_ms(running),
        rejoin: Stats::of(&rejoin),
    })
}
