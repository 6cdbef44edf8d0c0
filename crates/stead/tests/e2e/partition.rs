//! A host cut off from the database by a real network partition. Host p's server, CLI,
//! monitors and commands run in a network namespace of the test's own and reach a
//! private PostgreSQL over a veth pair (with a URL of p's own); host q reaches it over
//! loopback. Bringing the pair's host end down cuts p off from the database, while p's
//! own socket, files and processes go on as on a real machine whose link dropped. Its
//! cut run, resumed on q, cannot overwrite the checkpoints its resume recorded.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::*;
use crate::netns::NetNs;
use crate::private_pg::PrivatePostgres;

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

fn host_state(view: &Value, name: &str) -> Option<String> {
    view["hosts"]
        .as_array()?
        .iter()
        .find(|h| h["name"] == name)
        .and_then(|h| h["state"].as_str())
        .map(str::to_string)
}

/// A private PostgreSQL, host p in a network namespace of its own reaching it through the
/// veth pair with a URL of its own (serving), and host q reaching it over loopback (not
/// started yet). The namespace goes last, after the hosts and the database.
fn two_hosts() -> (NetNs, PrivatePostgres, StateDir, StateDir) {
    let ns = NetNs::create();
    let pg = PrivatePostgres::start_configured(
        &format!("127.0.0.1,{}", ns.host_ip),
        "",
        &format!("host all all {} trust", ns.subnet),
    );
    let mut p = host(&pg.url_at(&ns.host_ip), "p");
    p.run_in_netns(&ns.name);
    let q = host(&pg.url(), "q");
    p.status();
    (ns, pg, p, q)
}

#[test]
fn a_partitioned_host_stops_a_run_resumed_elsewhere_within_the_bound_and_rejoins() {
    let (ns, _pg, p, q) = two_hosts();
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

/// The value of `name` in an `env` dump.
fn env_var(dump: &str, name: &str) -> String {
    dump.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {dump}"))
        .to_string()
}

#[test]
fn a_partitioned_hosts_cut_run_cannot_overwrite_what_its_resume_recorded() {
    let (ns, _pg, p, q) = two_hosts();
    let out = p.root().join("out");
    std::fs::create_dir(&out).unwrap();
    let f = |n: &str| out.join(n).display().to_string();
    // Attempt 1 (on p) records a checkpoint and what it runs with, then works on;
    // attempt 2 (on q) reads it, records its own, and waits to be let go.
    let script = format!(
        "S={stead}
if [ $STEAD_ATTEMPT = 1 ]; then
  $S checkpoint set owner p && env > {env}.tmp && mv {env}.tmp {env}
  while :; do sleep 0.05; done
fi
$S checkpoint get owner > {seen}
$S checkpoint set owner q && touch {resumed}
while [ ! -e {done} ]; do sleep 0.05; done",
        stead = env!("CARGO_BIN_EXE_stead"),
        env = f("env"),
        seen = f("seen"),
        resumed = f("resumed"),
        done = f("done"),
    );
    add_job(&p, "work", &["--resume-on", "any"], &script);
    let id = json(&p, &["run", "work"])["id"].as_i64().unwrap();
    wait_until("the first attempt recorded its checkpoint", || {
        out.join("env").exists()
    });
    let dump = std::fs::read_to_string(out.join("env")).unwrap();
    let token = env_var(&dump, "STEAD_RUN_TOKEN");
    q.status();

    ns.cut();
    wait_until("the resume on q recorded its checkpoint", || {
        out.join("resumed").exists()
    });
    assert_eq!(
        std::fs::read_to_string(out.join("seen")).unwrap().trim(),
        "p",
        "the resume on another host reads what the cut run recorded"
    );
    let resumed = children_of(&q, "work", id)
        .into_iter()
        .next()
        .expect("a resume");
    assert_eq!(resumed["machine_id"], "machine-q");

    // The link back, and a write with the cut run's credentials from its host while its
    // resume runs: refused, nothing written.
    ns.heal();
    wait_until("p serves again", || {
        host_state(&json(&q, &["hosts"]), "p").as_deref() == Some("serving")
    });
    let late = p
        .stead(&["checkpoint", "set", "owner", "late"])
        .env("STEAD_RUN_ID", id.to_string())
        .env("STEAD_RUN_TOKEN", &token)
        .output()
        .unwrap();
    assert_eq!(late.status.code(), Some(1), "{}", text(&late.stderr));
    assert!(
        text(&late.stderr).contains(&format!(
            "run {id} no longer holds its idempotency key (run {} holds it now)",
            resumed["id"]
        )),
        "{}",
        text(&late.stderr)
    );
    std::fs::write(out.join("done"), "").unwrap();
    wait_status(&q, resumed["id"].as_i64().unwrap(), "succeeded");
    let all = json(&q, &["checkpoint", "ls", "--run", &id.to_string()]);
    assert_eq!(all["checkpoints"][0]["value"], "q", "{all:#}");
    assert_eq!(all["checkpoints"][0]["run_id"], resumed["id"]);
}
