//! Several hosts on one PostgreSQL ledger, end to end: three stead servers on this
//! machine stand in for three hosts (their own state directories, `STEAD_MACHINE_ID`s and
//! names), sharing a database of the test's own. Killing a server (SIGKILL) stands in for
//! a host dying, freezing it (SIGSTOP) for a host asleep.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use stead_store::postgres::scratch::ScratchDb;

use crate::harness::*;
use crate::private_pg::PrivatePostgres;

struct Cluster {
    // Servers first, then their database: fields drop in this order.
    hosts: Vec<StateDir>,
    _db: Option<ScratchDb>,
}

impl Cluster {
    /// `names.len()` hosts on a database of the test's own, each serving.
    fn of(names: &[&str]) -> Self {
        Self::with_env(names, &[])
    }

    /// The same, with more environment for every host.
    fn with_env(names: &[&str], env: &[(&str, &str)]) -> Self {
        let db = ScratchDb::create();
        let url = db.url.clone();
        Self::on(&url, names, Some(db), env)
    }

    /// `names.len()` hosts on the database at `url`, each serving.
    fn on(url: &str, names: &[&str], db: Option<ScratchDb>, env: &[(&str, &str)]) -> Self {
        let hosts: Vec<StateDir> = names.iter().map(|name| host_dir(url, name, env)).collect();
        Self::serving(hosts, db)
    }

    /// Hosts a and b on a database of the test's own, where a's commands, its server
    /// and its monitors cannot see b's state directory: as two machines, whose only
    /// shared ground is the ledger.
    fn a_blind_to_b() -> Self {
        let db = ScratchDb::create();
        let b = host_dir(&db.url, "b", &[]);
        let mut a = host_dir(&db.url, "a", &[]);
        a.hide_from_commands(b.root());
        Self::serving(vec![a, b], Some(db))
    }

    /// Starts each host's server, in order, and waits for a leader.
    fn serving(hosts: Vec<StateDir>, db: Option<ScratchDb>) -> Self {
        for host in &hosts {
            host.status();
        }
        let cluster = Self { hosts, _db: db };
        cluster.wait_for_a_leader();
        cluster
    }

    fn host(&self, name: &str) -> &StateDir {
        let at = self
            .hosts
            .iter()
            .position(|h| h.env_value("STEAD_HOST_NAME").as_deref() == Some(name))
            .expect("a host of that name");
        &self.hosts[at]
    }

    /// `stead hosts --json`, asked of the first host still serving.
    fn hosts_view(&self, from: &StateDir) -> Value {
        json(from, &["hosts"])
    }

    fn wait_for_a_leader(&self) -> String {
        let mut leader = String::new();
        wait_until("a host leads the scheduler", || {
            match self.hosts_view(&self.hosts[0])["leader"].as_str() {
                Some(l) => {
                    leader = l.to_string();
                    true
                }
                None => false,
            }
        });
        leader
    }

    /// A host other than `host`.
    fn other_than(&self, host: &StateDir) -> &StateDir {
        self.hosts
            .iter()
            .find(|h| !std::ptr::eq(*h, host))
            .expect("a cluster of more than one host")
    }

    /// The host whose machine id is `machine`.
    fn by_machine(&self, machine: &str) -> &StateDir {
        let name = machine.trim_start_matches("machine-");
        self.host(name)
    }

    /// Every run of `job`, oldest first, as one host sees the shared ledger.
    fn runs(&self, from: &StateDir, job: &str) -> Vec<Value> {
        let mut runs = json(from, &["runs", "--job", job, "--limit", "1000"])
            .as_array()
            .unwrap()
            .clone();
        runs.reverse();
        runs
    }
}

/// A host's state directory on the ledger at `url`, named `name`.
fn host_dir(url: &str, name: &str, env: &[(&str, &str)]) -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_STORE_URL", url);
    dir.set_env("STEAD_MACHINE_ID", &format!("machine-{name}"));
    dir.set_env("STEAD_HOST_NAME", name);
    dir.set_env("STEAD_RESUME_DELAY_MS", "200");
    for (name, value) in env {
        dir.set_env(name, value);
    }
    dir
}

/// Fires of an every-second job: one run per scheduled time, none missing in between.
fn assert_each_fire_once(runs: &[Value]) -> Vec<i64> {
    let mut by_time: BTreeMap<i64, usize> = BTreeMap::new();
    for run in runs {
        if let Some(at) = run["scheduled_at"].as_str() {
            *by_time.entry(ms_of(at)).or_default() += 1;
        }
    }
    let doubled: Vec<_> = by_time.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "fires recorded twice: {doubled:?}");
    let times: Vec<i64> = by_time.keys().copied().collect();
    for pair in times.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            1000,
            "a fire is missing between {pair:?}"
        );
    }
    times
}

fn tick_job(host: &StateDir) {
    add_job(
        host,
        "tick",
        &["--every", "1s", "--catch-up", "all"],
        "echo $STEAD_SCHEDULED_AT",
    );
}

fn wait_for_fires(cluster: &Cluster, from: &StateDir, n: usize) {
    wait_until(&format!("{n} fires have run"), || {
        cluster
            .runs(from, "tick")
            .iter()
            .filter(|r| r["status"] == "succeeded")
            .count()
            >= n
    });
}

#[test]
fn three_hosts_run_each_fire_once_somewhere() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let a = cluster.host("a");
    tick_job(a);
    wait_for_fires(&cluster, a, 8);
    let runs = cluster.runs(cluster.host("c"), "tick");
    let times = assert_each_fire_once(&runs);
    assert!(times.len() >= 8);
    // Every run was claimed by exactly one host and ran there.
    for run in runs.iter().filter(|r| r["status"] == "succeeded") {
        assert!(
            run["machine_id"].as_str().unwrap().starts_with("machine-"),
            "{run}"
        );
    }
    let view = cluster.hosts_view(a);
    assert_eq!(view["shared"], true);
    let states: Vec<&str> = view["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["serving", "serving", "serving"]);
    assert_eq!(
        view["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["leader"] == true)
            .count(),
        1
    );
}

#[test]
fn killing_the_leader_hands_the_schedule_over_within_the_lease() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let leader = cluster.wait_for_a_leader();
    let leader_dir = cluster.by_machine(&leader);
    tick_job(leader_dir);
    wait_for_fires(&cluster, leader_dir, 3);

    let pid = leader_dir.status()["pid"].as_u64().unwrap() as u32;
    signal(pid, libc::SIGKILL);
    let killed = Instant::now();
    let witness = cluster.other_than(leader_dir);
    let mut next = String::new();
    wait_until("another host leads", || {
        match cluster.hosts_view(witness)["leader"].as_str() {
            Some(l) if l != leader => {
                next = l.to_string();
                true
            }
            _ => false,
        }
    });
    let took = killed.elapsed();
    let bound = Duration::from_millis(LEASE_MS + 4 * HEARTBEAT_MS);
    assert!(
        took < bound,
        "failover took {took:?}, the lease is {LEASE_MS} ms"
    );
    eprintln!("failover after SIGKILL of the leader: {took:?}");

    let before = cluster.runs(witness, "tick").len();
    wait_until("fires go on under the new leader", || {
        cluster.runs(witness, "tick").len() >= before + 3
    });
    wait_for_fires(&cluster, witness, before + 2);
    assert_each_fire_once(&cluster.runs(witness, "tick"));
}

#[test]
fn a_frozen_leader_thaws_as_a_follower_and_writes_nothing() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let leader = cluster.wait_for_a_leader();
    let frozen = cluster.by_machine(&leader);
    tick_job(frozen);
    wait_for_fires(&cluster, frozen, 2);
    let pid = frozen.status()["pid"].as_u64().unwrap() as u32;
    let witness = cluster.other_than(frozen);

    signal(pid, libc::SIGSTOP);
    let thaw = scopeguard(pid);
    wait_until("another host leads while the leader sleeps", || {
        cluster.hosts_view(witness)["leader"]
            .as_str()
            .is_some_and(|l| l != leader)
    });
    drop(thaw);
    wait_until("the thawed server steps down", || {
        frozen
            .log()
            .contains("another server leads the scheduler now")
    });
    let count = cluster.runs(witness, "tick").len();
    wait_until("fires go on", || {
        cluster.runs(witness, "tick").len() >= count + 2
    });
    assert_each_fire_once(&cluster.runs(witness, "tick"));
}

/// Sends SIGCONT to `pid` when dropped, so a failing test never leaves it frozen.
fn scopeguard(pid: u32) -> impl Drop {
    struct Thaw(u32);
    impl Drop for Thaw {
        fn drop(&mut self) {
            signal(self.0, libc::SIGCONT);
        }
    }
    Thaw(pid)
}

/// Kills a host's server, the run's monitor and its command, as a dying machine would.
fn kill_host(host: &StateDir, run: &Value, marker: &str) {
    let pid = host.status()["pid"].as_u64().unwrap() as u32;
    signal(pid, libc::SIGKILL);
    if let Some(monitor) = run["monitor_pid"].as_u64() {
        signal(monitor as u32, libc::SIGKILL);
    }
    let _ = std::process::Command::new("pkill")
        .args(["-KILL", "-f", &format!("sleep {marker}")])
        .status();
}

#[test]
fn a_lost_hosts_run_resumes_once_elsewhere_only_when_its_job_allows() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let a = cluster.host("a");
    add_job(
        a,
        "anywhere",
        &["--every", "1h", "--resume-on", "any"],
        "sleep 299.311",
    );
    add_job(a, "mine", &["--every", "1h"], "sleep 299.312");

    for (job, marker, resumes_elsewhere) in
        [("anywhere", "299.311", true), ("mine", "299.312", false)]
    {
        let id = json(a, &["run", job])["id"].as_i64().unwrap();
        let run = wait_status(a, id, "running");
        let owner = cluster.by_machine(run["machine_id"].as_str().unwrap());
        let witness = cluster.other_than(owner);
        kill_host(owner, &run, marker);
        let cut = wait_status(witness, id, "interrupted");
        assert!(
            cut["reason"].as_str().unwrap().contains("was lost"),
            "{cut}"
        );
        if resumes_elsewhere {
            let resumed = wait_until_resumed(&cluster, witness, job, id);
            assert_ne!(resumed["machine_id"], run["machine_id"]);
            assert_eq!(resumed["trigger"], "resume");
            assert_eq!(resumed["parent_id"], id);
        } else {
            // Its debt waits for its own host: the lease of the others runs on, and
            // nothing resumes it meanwhile.
            let deadline = Instant::now() + Duration::from_millis(3 * LEASE_MS);
            while Instant::now() < deadline {
                assert_eq!(cluster.runs(witness, job).len(), 1, "resumed elsewhere");
                assert!(run_of(witness, id)["resolution"].is_null());
                std::thread::sleep(Duration::from_millis(100));
            }
            // The host comes back: its server resumes its own debt.
            owner.status();
            let resumed = wait_until_resumed(&cluster, witness, job, id);
            assert_eq!(resumed["machine_id"], run["machine_id"]);
        }
        let all = cluster.runs(witness, job);
        assert_eq!(all.len(), 2, "resumed exactly once: {all:?}");
    }
}

fn wait_until_resumed(cluster: &Cluster, from: &StateDir, job: &str, parent: i64) -> Value {
    let mut found = Value::Null;
    wait_until("the cut run is resumed", || {
        match cluster
            .runs(from, job)
            .into_iter()
            .find(|r| r["parent_id"] == parent && r["status"] == "running")
        {
            Some(r) => {
                found = r;
                true
            }
            None => false,
        }
    });
    found
}

#[test]
fn a_job_runs_only_on_its_hosts_and_is_cancelled_from_any_host() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let a = cluster.host("a");
    add_job(
        a,
        "pinned",
        &["--every", "1h", "--host", "c", "--concurrency", "allow"],
        "sleep 299.313",
    );
    let ids: Vec<i64> = (0..3)
        .map(|_| json(a, &["run", "pinned"])["id"].as_i64().unwrap())
        .collect();
    for id in &ids {
        let run = wait_status(a, *id, "running");
        assert_eq!(run["machine_id"], "machine-c", "{run}");
    }
    // Cancelled from a host that does not run it: the host that does signals its monitor.
    for id in &ids {
        let cancelled = json(a, &["cancel", &id.to_string()]);
        assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    }
    wait_until("the cancelled commands are gone", || {
        processes_with("299.313") == 0
    });
}

#[test]
fn a_chained_run_goes_to_a_host_its_job_may_run_on() {
    let cluster = Cluster::of(&["a", "b"]);
    let a = cluster.host("a");
    add_job(a, "fetch", &["--host", "a"], "echo fetched");
    add_job(
        a,
        "report",
        &["--after", "fetch", "--host", "b"],
        "echo reported",
    );
    let up = json(a, &["run", "fetch", "--wait"]);
    assert_eq!(up["machine_id"], "machine-a", "{up}");
    let mut down = Vec::new();
    wait_until("report ran after fetch", || {
        down = json(a, &["runs", "--job", "report"])
            .as_array()
            .unwrap()
            .clone();
        down.iter().any(|r| r["status"] == "succeeded")
    });
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(down[0]["trigger"], "after");
    assert_eq!(down[0]["parent_id"], up["id"]);
    assert_eq!(down[0]["machine_id"], "machine-b", "{down:?}");
}

#[test]
fn restarting_postgresql_under_load_loses_and_doubles_nothing() {
    let pg = PrivatePostgres::start();
    let cluster = Cluster::on(&pg.url(), &["a", "b"], None, &[]);
    let a = cluster.host("a");
    tick_job(a);
    add_job(
        a,
        "work",
        &["--every", "1h", "--concurrency", "allow"],
        "sleep 1.5; echo worked",
    );
    wait_for_fires(&cluster, a, 2);
    let before: Vec<i64> = (0..3)
        .map(|_| json(a, &["run", "work"])["id"].as_i64().unwrap())
        .collect();

    pg.restart();

    // Runs in flight end as they would have: their monitors retried the final write.
    for id in &before {
        let run = wait_status(a, *id, "succeeded");
        assert_eq!(run["exit_code"], 0, "{run}");
    }
    // New work is taken again, and the schedule goes on with every fire once.
    let after = json(a, &["run", "work", "--wait"]);
    assert_eq!(after["status"], "succeeded", "{after}");
    let count = cluster.runs(a, "tick").len();
    wait_until("fires go on after the restart", || {
        cluster.runs(a, "tick").len() >= count + 3
    });
    wait_for_fires(&cluster, a, count + 2);
    assert_each_fire_once(&cluster.runs(a, "tick"));
    assert_eq!(
        cluster.runs(a, "work").len(),
        4,
        "no work run doubled or lost"
    );
}

#[test]
fn an_outage_of_postgresql_longer_than_a_lease_cuts_nothing() {
    let pg = PrivatePostgres::start();
    let cluster = Cluster::on(&pg.url(), &["a", "b"], None, &[]);
    let a = cluster.host("a");
    add_job(
        a,
        "work",
        &["--every", "1h", "--concurrency", "allow"],
        "sleep 2; echo worked",
    );
    let ids: Vec<i64> = (0..4)
        .map(|_| json(a, &["run", "work"])["id"].as_i64().unwrap())
        .collect();
    for id in &ids {
        wait_status(a, *id, "running");
    }

    pg.stop();
    // The CLI says what is wrong, and nothing is started or lost meanwhile.
    let out = a.run(&["runs"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{stderr}");
    assert!(stderr.contains("unreachable"), "{stderr}");
    // The outage itself: longer than a lease, so every host looks silent when it ends.
    std::thread::sleep(Duration::from_millis(LEASE_MS + 1_000));
    pg.start_again();

    // Every host looked silent for longer than a lease, yet none was taken for lost:
    // the runs on both hosts end as their commands did.
    for id in &ids {
        let run = wait_status(a, *id, "succeeded");
        assert_eq!(run["exit_code"], 0, "{run}");
    }
    assert_eq!(cluster.runs(a, "work").len(), 4);
}

#[test]
fn a_job_added_through_any_host_is_scheduled_by_the_leader() {
    let cluster = Cluster::of(&["a", "b"]);
    let leader = cluster.wait_for_a_leader();
    let follower = cluster.other_than(cluster.by_machine(&leader));
    // Added through the server that does not schedule: the leader hears of it.
    tick_job(follower);
    wait_for_fires(&cluster, follower, 2);
    assert_each_fire_once(&cluster.runs(follower, "tick"));
}

#[test]
fn a_host_judged_lost_stops_its_command_so_the_work_runs_once() {
    let cluster = Cluster::of(&["a", "b", "c"]);
    let a = cluster.host("a");
    add_job(
        a,
        "moved",
        &["--every", "1h", "--resume-on", "any"],
        "sleep 299.414",
    );
    let id = json(a, &["run", "moved"])["id"].as_i64().unwrap();
    let run = wait_status(a, id, "running");
    let owner = cluster.by_machine(run["machine_id"].as_str().unwrap());
    let witness = cluster.other_than(owner);
    // The owner's server sleeps (its monitor and command go on): past a lease it is lost.
    let pid = owner.status()["pid"].as_u64().unwrap() as u32;
    signal(pid, libc::SIGSTOP);
    let _thaw = scopeguard(pid);
    let resumed = wait_until_resumed(&cluster, witness, "moved", id);
    assert_ne!(resumed["machine_id"], run["machine_id"]);
    // The first command learns its run ended elsewhere and stops: one copy runs.
    wait_until("only the resumed command runs", || {
        processes_with("299.414") == 1
    });
}

#[test]
fn a_cancel_asked_while_the_runs_host_was_down_is_carried_out_when_it_returns() {
    // A lease long enough that b, down for the cancel's wait, is not judged lost.
    let cluster = Cluster::with_env(&["a", "b"], &[("STEAD_LEASE_MS", "30000")]);
    let a = cluster.host("a");
    let b = cluster.host("b");
    add_job(
        a,
        "held",
        &["--every", "1h", "--host", "b"],
        "sleep 299.515",
    );
    let id = json(a, &["run", "held"])["id"].as_i64().unwrap();
    wait_status(a, id, "running");
    // b's server dies; its monitor and command go on. The cancel is asked on a.
    signal(b.status()["pid"].as_u64().unwrap() as u32, libc::SIGKILL);
    let asked = json(a, &["cancel", &id.to_string()]);
    assert_eq!(asked["status"], "running", "nobody heard it yet: {asked}");
    // b's next server reads the request from the run's row.
    b.status();
    let run = wait_status(a, id, "cancelled");
    assert_eq!(run["status"], "cancelled");
    wait_until("the command is gone", || processes_with("299.515") == 0);
}

/// libfaketime, which moves what a process reads as the wall clock (its monotonic clock,
/// which timers use, stays real).
const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

#[test]
fn hosts_whose_clocks_are_ten_seconds_off_judge_nobody_lost_and_fire_once() {
    assert!(
        std::path::Path::new(FAKETIME_LIB).exists(),
        "libfaketime is missing: apt-get install faketime (scripts/setup-faults does)"
    );
    let db = ScratchDb::create();
    // a keeps the true time; b runs 10 s ahead of the database, c 10 s behind.
    let skewed = |offset| {
        [
            ("LD_PRELOAD", FAKETIME_LIB),
            ("FAKETIME", offset),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ]
    };
    let hosts = vec![
        host_dir(&db.url, "a", &[]),
        host_dir(&db.url, "b", &skewed("+10s")),
        host_dir(&db.url, "c", &skewed("-10s")),
    ];
    let cluster = Cluster::serving(hosts, Some(db));
    let (a, b, c) = (cluster.host("a"), cluster.host("b"), cluster.host("c"));
    // The clocks really are off, as the hosts' own processes read them.
    let skew = |host: &StateDir| {
        let view = json(host, &["hosts"]);
        let name = host.env_value("STEAD_HOST_NAME").unwrap();
        view["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name.as_str())
            .and_then(|h| h["clock_offset_ms"].as_i64())
            .expect("every host's clock offset is reported")
    };
    wait_until("the skewed hosts report their offsets", || {
        (skew(b) - 10_000).abs() < 1_000 && (skew(c) + 10_000).abs() < 1_000
    });
    assert!(skew(a).abs() < 1_000, "a's clock is true: {}", skew(a));
    // A long run pinned to the healthy host, and an every-second job for everyone.
    add_job(a, "long", &["--every", "1h", "--host", "a"], "sleep 9");
    let long = json(a, &["run", "long"])["id"].as_i64().unwrap();
    tick_job(b);
    // Watched for the whole span of the long run: nobody is ever judged lost.
    let mut ticks_at_end = 0;
    wait_until("the long run ends, with fires running meanwhile", || {
        for from in [a, b, c] {
            let view = cluster.hosts_view(from);
            for host in view["hosts"].as_array().unwrap() {
                assert_eq!(host["state"], "serving", "a host was judged lost: {view}");
            }
        }
        ticks_at_end = cluster.runs(a, "tick").len();
        json(a, &["show", &long.to_string()])["status"] != "running"
            && json(a, &["show", &long.to_string()])["status"] != "queued"
    });
    let run = json(a, &["show", &long.to_string()]);
    assert_eq!(run["status"], "succeeded", "the pinned run was cut: {run}");
    assert!(ticks_at_end >= 5, "fires ran meanwhile: {ticks_at_end}");
    let ticks = cluster.runs(c, "tick");
    assert_each_fire_once(&ticks);
    for tick in &ticks {
        assert_ne!(tick["status"], "interrupted", "a fire was cut: {tick}");
    }
    // Fires follow the database's clock, whichever host leads: the newest is due now,
    // not ten seconds early or late.
    let newest = ticks
        .iter()
        .filter_map(|t| t["scheduled_at"].as_str())
        .map(ms_of)
        .max()
        .unwrap();
    let now_ms = jiff::Timestamp::now().as_millisecond();
    assert!(
        (now_ms - newest).abs() < 5_000,
        "the newest fire is {} ms from the database's now",
        now_ms - newest
    );
    // The skewed hosts are told.
    let out = b.run(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        ["9.9", "10.0", "10.1"]
            .iter()
            .any(|s| text.contains(&format!(
                "warning: this host's clock is {s} s ahead of the database's"
            ))),
        "{text}"
    );
    let out = a.run(&["hosts"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning: c's clock is"), "{text}");
    assert!(text.contains("behind the database's"), "{text}");
}

/// `line 000000` to `line 059999`, as `seq -f 'line %06g'` prints them.
fn numbered_lines(from: usize, to: usize) -> Vec<u8> {
    (from..to)
        .flat_map(|i| format!("line {i:06}\n").into_bytes())
        .collect()
}

#[test]
fn a_run_of_another_host_is_read_whole_from_a_host_that_cannot_see_its_files() {
    let cluster = Cluster::a_blind_to_b();
    let (a, b) = (cluster.host("a"), cluster.host("b"));
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("go");
    // 720,000 bytes (a little under three chunks of the ledger): half, then, once the
    // gate opens, the rest.
    add_job(
        a,
        "numbers",
        &["--every", "1h", "--host", "b"],
        &format!(
            "seq -f 'line %06g' 0 29999; while [ ! -e {gate} ]; do sleep 0.05; done; seq -f 'line %06g' 30000 59999",
            gate = gate.display()
        ),
    );
    let (first_half, whole) = (numbered_lines(0, 30_000), numbered_lines(0, 60_000));
    assert_eq!(whole.len(), 720_000);

    let id = json(a, &["run", "numbers"])["id"].as_i64().unwrap();
    let run = wait_status(a, id, "running");
    assert_eq!(run["machine_id"], "machine-b");
    let log_path = run["log_path"].as_str().unwrap().to_string();
    assert!(
        log_path.starts_with(&b.path().display().to_string()),
        "{log_path}"
    );
    // b's file is there, and host a's processes cannot see it.
    wait_until("b's log file holds the first half", || {
        std::fs::metadata(&log_path).is_ok_and(|m| m.len() == first_half.len() as u64)
    });
    let seen = a.command("test").args(["-e", &log_path]).status().unwrap();
    assert!(!seen.success(), "host a's commands see b's files");
    let namespace = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap();
    let a_server = a.status()["pid"].as_u64().unwrap().to_string();
    assert_ne!(
        namespace(&a_server),
        namespace("self"),
        "host a's server runs where b's files are hidden"
    );

    // While it runs, what b has shipped so far reads from a.
    wait_until("the first half is shipped and reads from a", || {
        let out = a.run(&["logs", &id.to_string()]);
        out.status.success() && out.stdout == first_half
    });

    // Followed from a while the run is still going, to its end.
    let mut follow = a.stead(&["logs", &id.to_string(), "--follow"]);
    follow
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = ChildGuard(follow.spawn().unwrap());
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let mut out = child.0.stdout.take().unwrap();
        let got = got.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            loop {
                match std::io::Read::read(&mut out, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
        })
    };
    wait_until("the follower printed the first half", || {
        got.lock().unwrap().len() >= first_half.len()
    });
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the follower stopped while the run was going"
    );
    assert_eq!(run_of(a, id)["status"], "running");
    // And through the API, also from while it runs.
    let api = crate::api::Api::start(a);
    let (status, mut stream) = api.stream(&format!("/api/runs/{id}/log?follow=true"));
    assert_eq!(status, 200);
    let streamed = std::thread::spawn(move || {
        let mut body = Vec::new();
        std::io::Read::read_to_end(&mut stream, &mut body).map(|_| body)
    });
    assert_eq!(run_of(a, id)["status"], "running");
    std::fs::write(&gate, "").unwrap();
    wait_until("the follower ends with the run", || {
        child.0.try_wait().unwrap().is_some()
    });
    reader.join().unwrap();
    let status = child.0.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let followed = got.lock().unwrap().clone();
    assert!(
        followed == whole,
        "the followed log differs ({} bytes)",
        followed.len()
    );
    assert_eq!(run_of(a, id)["status"], "succeeded");
    assert_eq!(std::fs::read(&log_path).unwrap(), whole, "b's own file");
    let streamed = streamed
        .join()
        .unwrap()
        .expect("the followed answer ends cleanly");
    assert!(
        streamed == whole,
        "the API's followed log differs ({} bytes)",
        streamed.len()
    );

    // Read whole, after the end: the CLI and the HTTP API, with the API's offsets.
    let out = a.run(&["logs", &id.to_string()]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        text(&out.stderr)
    );
    assert!(
        out.stdout == whole,
        "stead logs differs ({} bytes)",
        out.stdout.len()
    );
    let answer = api.get(&format!("/api/runs/{id}/log"));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(
        answer.body == whole,
        "the API differs ({} bytes)",
        answer.body.len()
    );
    assert_eq!(answer.header("x-stead-log-offset"), Some("720000"));
    let rest = api.get(&format!("/api/runs/{id}/log?offset=300000"));
    assert!(rest.body == whole[300_000..], "from an offset");
    assert_eq!(rest.header("x-stead-log-offset"), Some("720000"));
    let followed = api.get(&format!("/api/runs/{id}/log?follow=true&offset=262140"));
    assert!(
        followed.body == whole[262_140..],
        "followed through the API"
    );
    let past = api.get(&format!("/api/runs/{id}/log?offset=720001"));
    assert_eq!(past.status, 400);
    assert!(past.text().contains("past the end"), "{}", past.text());
}

#[test]
fn a_tail_a_crashed_server_left_is_shipped_when_it_serves_again() {
    let cluster = Cluster::a_blind_to_b();
    let (a, b) = (cluster.host("a"), cluster.host("b"));
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("go");
    add_job(
        a,
        "tail",
        &["--every", "1h", "--host", "b"],
        &format!(
            "seq -f 'line %06g' 0 999; while [ ! -e {gate} ]; do sleep 0.05; done; seq -f 'line %06g' 1000 1999",
            gate = gate.display()
        ),
    );
    let (first_half, whole) = (numbered_lines(0, 1000), numbered_lines(0, 2000));
    let id = json(a, &["run", "tail"])["id"].as_i64().unwrap();
    wait_status(a, id, "running");
    wait_until("the first half is shipped", || {
        a.run(&["logs", &id.to_string()]).stdout == first_half
    });

    // b's server dies; the run ends while no server of b serves.
    let server = b.status()["pid"].as_u64().unwrap() as u32;
    signal(server, libc::SIGKILL);
    wait_until("b's server is gone", || !is_alive(server));
    std::fs::write(&gate, "").unwrap();
    wait_status(a, id, "succeeded");

    // Followed from a meanwhile: what was shipped, then, once b is lost, where the
    // rest is.
    let out = within_patience(a.stead(&["logs", &id.to_string(), "--follow"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout == first_half, "{} bytes", out.stdout.len());
    let note = text(&out.stderr);
    assert!(
        note.contains(&format!(
            "the rest of run {id}'s log stayed on host b (lost)"
        )),
        "{note}"
    );

    // b's next server ships the tail at its start.
    b.status();
    wait_until("the tail is shipped by b's next server", || {
        let out = a.run(&["logs", &id.to_string()]);
        out.status.success() && out.stderr.is_empty() && out.stdout == whole
    });
}

#[test]
fn secrets_stay_on_their_host_and_a_host_lacking_one_fails_the_run_naming_both() {
    let cluster = Cluster::of(&["a", "b"]);
    let (a, b) = (cluster.host("a"), cluster.host("b"));
    let value = "tok-only-on-host-a-7c1e";
    crate::secrets::set_secret(a, "TOK", value);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("handed");
    let script = format!("echo \"tok=$TOK\"; printf %s \"$TOK\" > {}", out.display());
    add_job(a, "on-a", &["--host", "a", "--secret", "TOK"], &script);
    add_job(a, "on-b", &["--host", "b", "--secret", "TOK"], &script);

    // Asked for from b, run on a, which has the secret: masked in the log b reads.
    let ran = json(b, &["run", "on-a", "--wait"]);
    assert_eq!(ran["status"], "succeeded", "{ran}");
    assert_eq!(ran["machine_id"], "machine-a", "{ran}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), value);
    let id = ran["id"].as_i64().unwrap().to_string();
    wait_until("a's log is shipped to the ledger", || {
        text(&b.run(&["logs", &id]).stdout) == "tok=[secret TOK]\n"
    });

    // On b, which lacks it, the run fails to start, naming the secret and the host.
    let failed = json_anyway(a, &["run", "on-b", "--wait"]);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["machine_id"], "machine-b", "{failed}");
    assert_eq!(
        failed["reason"],
        "failed to start: secret TOK is not set on host b (stead secret set TOK)"
    );

    // The shared database holds the name, never the value.
    let url = &cluster
        ._db
        .as_ref()
        .expect("a database of the test's own")
        .url;
    let dump = std::process::Command::new("pg_dump")
        .args(["--data-only", url])
        .output()
        .expect("pg_dump runs");
    assert!(dump.status.success(), "{}", text(&dump.stderr));
    let dump = text(&dump.stdout);
    assert!(
        dump.contains("\"TOK\""),
        "the dump holds the job's secret name"
    );
    assert!(!dump.contains(value), "the database holds the value");
}
