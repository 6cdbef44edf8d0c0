//! A host cut off from the database by a real network partition. Host p's server, CLI,
//! monitors and commands run in a network namespace of the test's own and reach a
//! private PostgreSQL over a veth pair (with a URL of p's own); host q reaches it over
//! loopback. Bringing the pair's host end down cuts p off from the database, while p's
//! own socket, files and processes go on as on a real machine whose link dropped.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::*;
use crate::private_pg::PrivatePostgres;

/// A network namespace joined to this one by a veth pair on a /30 of its own; removed
/// (with the pair) when dropped, even when the test fails.
struct NetNs {
    name: String,
    host_end: String,
    /// This side's address (where the database listens for the namespace).
    host_ip: String,
    /// The pair's network, `10.231.N.0/30`.
    subnet: String,
}

fn ip(args: &[&str]) {
    run_checked(
        Command::new("ip").args(args),
        &format!("ip {args:?} (iproute2: scripts/setup-faults installs it)"),
    );
}

impl NetNs {
    fn create() -> Self {
        let tag = std::process::id() % 100_000;
        let subnet = 1 + std::process::id() % 250;
        let ns = Self {
            name: format!("stead-p{tag}"),
            host_end: format!("stp{tag}h"),
            host_ip: format!("10.231.{subnet}.1"),
            subnet: format!("10.231.{subnet}.0/30"),
        };
        let inner = format!("stp{tag}n");
        let inner_ip = format!("10.231.{subnet}.2/30");
        ip(&["netns", "add", &ns.name]);
        ip(&[
            "link",
            "add",
            &ns.host_end,
            "type",
            "veth",
            "peer",
            "name",
            &inner,
        ]);
        ip(&["link", "set", &inner, "netns", &ns.name]);
        ip(&[
            "addr",
            "add",
            &format!("{}/30", ns.host_ip),
            "dev",
            &ns.host_end,
        ]);
        ip(&["link", "set", &ns.host_end, "up"]);
        ip(&[
            "netns", "exec", &ns.name, "ip", "addr", "add", &inner_ip, "dev", &inner,
        ]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", &inner, "up"]);
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"]);
        ns
    }

    /// The partition: the namespace's packets to the database go nowhere.
    fn cut(&self) {
        ip(&["link", "set", &self.host_end, "down"]);
    }

    fn heal(&self) {
        ip(&["link", "set", &self.host_end, "up"]);
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        for args in [
            vec!["netns", "del", self.name.as_str()],
            vec!["link", "del", self.host_end.as_str()],
        ] {
            let _ = Command::new("ip")
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn host(url: &str, name: &str) -> StateDir {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_STORE_URL", url);
    dir.set_env("STEAD_MACHINE_ID", &format!("machine-{name}"));
    dir.set_env("STEAD_HOST_NAME", name);
    dir.set_env("STEAD_RESUME_DELAY_MS", "200");
    dir
}

/// The nanosecond timestamps a run's command wrote, one per line.
fn stamps(path: &Path) -> Vec<i64> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

fn host_state(view: &Value, name: &str) -> Option<String> {
    view["hosts"]
        .as_array()?
        .iter()
        .find(|h| h["name"] == name)
        .and_then(|h| h["state"].as_str())
        .map(str::to_string)
}

#[test]
fn a_partitioned_host_stops_a_run_resumed_elsewhere_within_the_bound_and_rejoins() {
    let ns = NetNs::create();
    let pg = PrivatePostgres::start_configured(
        &format!("127.0.0.1,{}", ns.host_ip),
        "",
        &format!("host all all {} trust", ns.subnet),
    );
    // p reaches the database through the veth pair, with a URL of its own.
    let mut p = host(&pg.url_at(&ns.host_ip), "p");
    p.run_in_netns(&ns.name);
    let q = host(&pg.url(), "q");
    p.status();
    let out = p.root().join("out");
    std::fs::create_dir(&out).unwrap();
    // Each copy writes a timestamp every 50 ms to a file of its own run.
    add_job(
        &p,
        "work",
        &["--every", "1h", "--resume-on", "any"],
        &format!(
            "i=0; while [ $i -lt 160 ]; do date +%s%N >> '{}/'$STEAD_RUN_ID; sleep 0.05; i=$((i+1)); done",
            out.display()
        ),
    );
    // Only p serves yet, so p claims the run.
    let id = json(&p, &["run", "work"])["id"].as_i64().unwrap();
    let run = wait_status(&p, id, "running");
    assert_eq!(run["machine_id"], "machine-p");
    q.status();
    wait_until("both hosts serve", || {
        let view = json(&q, &["hosts"]);
        host_state(&view, "p").as_deref() == Some("serving")
            && host_state(&view, "q").as_deref() == Some("serving")
    });
    let original = out.join(id.to_string());
    wait_until("the first copy writes", || stamps(&original).len() >= 5);

    let cut_at = now_ns();
    ns.cut();
    let cut = Instant::now();
    // q judges p lost after a lease of silence (by the database's clock), and resumes.
    let mut resumed = Value::Null;
    wait_until("the run is resumed on q", || {
        let runs = json(&q, &["runs", "--job", "work"]);
        match runs
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["parent_id"] == id && r["status"] == "running")
        {
            Some(r) => {
                resumed = r.clone();
                true
            }
            None => false,
        }
    });
    assert_eq!(resumed["machine_id"], "machine-q");
    let copy = out.join(resumed["id"].as_i64().unwrap().to_string());
    wait_until("the resumed copy writes", || !stamps(&copy).is_empty());
    // The cut-off copy stops on its own: nothing written for a second.
    wait_until("the partitioned copy has stopped", || {
        stamps(&original)
            .last()
            .is_some_and(|last| now_ns() - last > 1_000_000_000)
    });
    let last_original = *stamps(&original).last().unwrap();
    let first_copy = stamps(&copy)[0];
    let stopped_after = Duration::from_nanos((last_original - cut_at).max(0) as u64);
    let overlap_ms = (last_original - first_copy) / 1_000_000;
    eprintln!(
        "partitioned copy stopped {:.2} s after the cut; the two copies overlapped by {overlap_ms} ms",
        stopped_after.as_secs_f64()
    );
    // The bound (docs/cluster.md): a lease after the host's last renewal (its last
    // confirmation follows it at once) plus one check interval (a heartbeat here); the
    // copies overlap by at most a check interval minus the resume delay. Half a second
    // of slack for a loaded machine.
    let lease = Duration::from_millis(LEASE_MS);
    let beat = Duration::from_millis(HEARTBEAT_MS);
    let slack = Duration::from_millis(500);
    assert!(
        stopped_after <= lease + beat + slack,
        "the partitioned copy ran {stopped_after:?} past the cut"
    );
    assert!(
        overlap_ms <= (beat + slack).as_millis() as i64,
        "both copies ran at once for {overlap_ms} ms"
    );
    let cut_run = run_of(&q, id);
    assert_eq!(cut_run["status"], "interrupted", "{cut_run}");

    // Four leases cut off, then the link comes back: p serves again at once.
    wait_until("four leases have passed", || {
        cut.elapsed() >= Duration::from_millis(4 * LEASE_MS)
    });
    ns.heal();
    let healed = Instant::now();
    wait_until("p serves again", || {
        host_state(&json(&q, &["hosts"]), "p").as_deref() == Some("serving")
    });
    let rejoined = healed.elapsed();
    eprintln!(
        "p served again {:.2} s after the link came back",
        rejoined.as_secs_f64()
    );
    assert!(
        rejoined <= lease,
        "p took {rejoined:?} to serve again after the link came back"
    );
    // p's view agrees, and the resumed run finishes on q, once.
    wait_until("p sees the cluster again", || {
        host_state(&json(&p, &["hosts"]), "q").as_deref() == Some("serving")
    });
    wait_status(&q, resumed["id"].as_i64().unwrap(), "succeeded");
    let runs = json(&q, &["runs", "--job", "work"]);
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
}
