//! Hostile and careless input, tried as an attacker on the same machine would: a run
//! that forges its own log, clients that never read, hundreds of idle connections from
//! another user, slow headers, inherited descriptors, processes escaping their run,
//! planted files, NUL bytes and bodies the API would have ignored. Each is bounded in
//! count and time and aimed at loopback only; the server must stay up, bounded, and
//! reachable by its own user throughout.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::api::Api;
use crate::harness::*;

/// The share of one CPU `pid` uses over `window`, while the test does nothing to it: a
/// server spinning on a listener that stays readable shows near 100%.
fn busy_over(pid: u32, window: Duration) -> f64 {
    let before = cpu_ticks(pid);
    let since = Instant::now();
    std::thread::sleep(window);
    let ticks = cpu_ticks(pid) - before;
    // SAFETY: sysconf with a valid name.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz / since.elapsed().as_secs_f64()
}

/// The server's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// CPU time (user + system) a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn server_pid(dir: &StateDir) -> u32 {
    dir.status()["pid"].as_u64().unwrap() as u32
}

/// A child process killed (and reaped) when the test ends, pass or fail.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `stead run NAME --wait --json`, whatever the run's exit code (it exits with it).
fn run_and_wait(dir: &StateDir, name: &str) -> Value {
    let out = dir.run(&["run", name, "--wait", "--json"]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)))
}

/// A job that writes `bytes` bytes of output, run to its end; returns the run's id.
fn run_writing(dir: &StateDir, name: &str, script: &str) -> i64 {
    add_job(dir, name, &[], script);
    let run = json(dir, &["run", name, "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    run["id"].as_i64().unwrap()
}

#[test]
fn a_sparse_terabyte_log_is_answered_in_bounded_chunks_and_the_server_lives() {
    let dir = StateDir::new();
    // The run makes its own log a sparse terabyte, as any job could, once its monitor
    // has created it for its first output.
    let id = run_writing(
        &dir,
        "forger",
        r#"echo before; log="$STEAD_STATE_DIR/logs/runs/$STEAD_RUN_ID.log"
           for _ in $(seq 1000); do [ -s "$log" ] && break; sleep 0.01; done
           truncate -s 1T "$log""#,
    );
    let api = Api::start(&dir);
    let pid = server_pid(&dir);
    let (status, mut body) = api.stream(&format!("/api/runs/{id}/log"));
    assert_eq!(status, 200);
    let mut first = [0u8; 7];
    body.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"before\n");
    // The answer ends: at most one answer's worth of a file only something else wrote.
    let rest = std::io::copy(&mut body, &mut std::io::sink()).unwrap();
    assert_eq!(
        7 + rest,
        33 * 1024 * 1024,
        "one answer carries at most 33 MiB"
    );
    let whole = api.get(&format!("/api/runs/{id}/log?offset=1099511627000"));
    assert_eq!(whole.status, 200);
    assert_eq!(
        whole.body.len(),
        776,
        "the rest, from an offset near its end"
    );
    assert!(
        rss_kib(pid) < 100 * 1024,
        "the server holds {} KiB",
        rss_kib(pid)
    );
    assert_eq!(dir.status()["pid"], pid, "the same server still serves");
}

#[test]
fn clients_that_never_read_a_log_cost_the_server_a_bounded_buffer() {
    let dir = StateDir::new();
    let id = run_writing(&dir, "big", "head -c 33554432 /dev/zero");
    let api = Api::start(&dir);
    let pid = server_pid(&dir);
    let before = rss_kib(pid);
    let stalled: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut stream = TcpStream::connect(api.authority()).unwrap();
            write!(
                stream,
                "GET /api/runs/{id}/log HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
                api.authority(),
                api.token
            )
            .unwrap();
            // The answer has begun (status line in), then the client reads no more.
            stream.set_read_timeout(Some(PATIENCE)).unwrap();
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).unwrap();
            assert_eq!(&head, b"HTTP/1.1 200");
            stream
        })
        .collect();
    // Give the server every chance to fill its buffers: it keeps serving meanwhile.
    for _ in 0..5 {
        assert_eq!(dir.status()["pid"], pid);
    }
    let during = rss_kib(pid);
    assert!(
        during < before + 60 * 1024,
        "20 stalled readers of a 32 MiB log took the server from {before} to {during} KiB"
    );
    drop(stalled);
}

#[test]
fn slow_headers_and_idle_connections_are_closed() {
    let mut dir = StateDir::new();
    dir.set_env("STEAD_HTTP_IDLE_TIMEOUT_MS", "300");
    let api = Api::start(&dir);
    let closed_within = |mut stream: TcpStream, what: &str| {
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
                Err(_) => {}
            }
            assert!(Instant::now() < deadline, "{what}: still open after 5 s");
        }
    };
    // Headers that never end.
    let mut slow = TcpStream::connect(api.authority()).unwrap();
    write!(
        slow,
        "GET /api/status HTTP/1.1\r\nHost: {}\r\n",
        api.authority()
    )
    .unwrap();
    closed_within(slow, "a request whose headers never end");
    // Nothing at all.
    closed_within(
        TcpStream::connect(api.authority()).unwrap(),
        "a connection that sends nothing",
    );
    // One request, then silence: a kept-alive connection does not stay forever.
    let mut idle = TcpStream::connect(api.authority()).unwrap();
    write!(
        idle,
        "GET /api/status HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
        api.authority(),
        api.token
    )
    .unwrap();
    closed_within(idle, "an idle kept-alive connection");
    assert_eq!(api.get("/api/status").status, 200);
}

/// A Python program run as `nobody`: opens `count` connections to `addr` and holds them,
/// writing nothing, until killed. Prints how many it opened.
fn idle_connections_as_nobody(addr: &str, count: usize) -> Killed {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let script = format!(
        "import socket, sys, time\n\
         held = []\n\
         for _ in range({count}):\n\
         \x20   try:\n\
         \x20       held.append(socket.create_connection(('{host}', {port}), timeout=2))\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         print(len(held), flush=True)\n\
         time.sleep(120)\n"
    );
    let mut child = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            &script,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("setpriv and /usr/bin/python3");
    let mut line = String::new();
    let mut out = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        line.push(byte[0] as char);
    }
    assert!(
        line.trim().parse::<usize>().is_ok(),
        "the connector said {line:?}"
    );
    Killed(child)
}

#[test]
fn hundreds_of_idle_connections_from_another_user_lock_nobody_out() {
    let dir = StateDir::new();
    // The server gets a limit of 256 descriptors, soft and hard, from the client that
    // starts it.
    let started = Command::new("prlimit")
        .arg("--nofile=256:256")
        .arg("--")
        .args(dir_command(&dir, &["status", "--json"]))
        .envs(dir_env(&dir))
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", text(&started.stderr));
    let pid = server_pid(&dir);
    let api = Api::start(&dir);
    add_job(&dir, "quick", &[], "echo hi");
    let log_before = std::fs::metadata(dir.server_log()).unwrap().len();
    let _held = idle_connections_as_nobody(api.authority(), 400);
    // The server's own user still gets through, within a second or two.
    for _ in 0..3 {
        let asked = Instant::now();
        let status = dir.status();
        assert_eq!(status["pid"], pid);
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "status took {:?}",
            asked.elapsed()
        );
    }
    let asked = Instant::now();
    let run = json(&dir, &["run", "quick", "--wait"]);
    assert_eq!(run["status"], "succeeded");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    // Neither spinning while the connections are held nor logging a line per refusal.
    let busy = busy_over(pid, Duration::from_secs(1));
    assert!(busy < 0.3, "the server used {:.0}% of a CPU", busy * 100.0);
    let grown = std::fs::metadata(dir.server_log()).unwrap().len() - log_before;
    assert!(grown < 64 * 1024, "server.log grew by {grown} bytes");
}

/// The argv of `stead --state-dir DIR ARGS` (for wrapping in another program).
fn dir_command(dir: &StateDir, args: &[&str]) -> Vec<String> {
    let cmd = dir.stead(args);
    std::iter::once(cmd.get_program().to_string_lossy().into_owned())
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect()
}

/// The environment `dir`'s commands get.
fn dir_env(dir: &StateDir) -> Vec<(String, String)> {
    dir.stead(&[])
        .get_envs()
        .filter_map(|(k, v)| {
            Some((
                k.to_string_lossy().into_owned(),
                v?.to_string_lossy().into_owned(),
            ))
        })
        .collect()
}

#[test]
fn a_socket_flood_that_exhausts_descriptors_neither_spins_nor_floods_the_log() {
    let dir = StateDir::new();
    let started = Command::new("prlimit")
        .arg("--nofile=48:48")
        .arg("--")
        .args(dir_command(&dir, &["status", "--json"]))
        .envs(dir_env(&dir))
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", text(&started.stderr));
    let pid = server_pid(&dir);
    let socket = dir.status()["socket"].as_str().unwrap().to_string();
    let log_before = std::fs::metadata(dir.server_log()).unwrap().len();
    // More connections than the server has descriptors: its accepts fail (EMFILE).
    let flood: Vec<_> = (0..80)
        .filter_map(|_| std::os::unix::net::UnixStream::connect(&socket).ok())
        .collect();
    // While they are held the listener stays readable: the server must wait, not spin.
    let busy = busy_over(pid, Duration::from_millis(1500));
    assert!(is_alive(pid));
    assert!(busy < 0.3, "the server used {:.0}% of a CPU", busy * 100.0);
    let grown = std::fs::metadata(dir.server_log()).unwrap().len() - log_before;
    assert!(
        grown < 16 * 1024,
        "server.log grew by {grown} bytes: {}",
        dir.log()
    );
    // Once the flood is gone, the server answers again.
    drop(flood);
    let asked = Instant::now();
    assert_eq!(dir.status()["pid"], pid);
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
}

/// A pipe whose write end a child inherits as descriptor 5 (not close-on-exec).
fn inherited_pipe() -> (OwnedFd, OwnedFd) {
    // Both ends close-on-exec: only the descriptor 5 made of it in the child is inherited.
    let (read, write) = std::io::pipe().expect("a pipe");
    (read.into(), write.into())
}

#[test]
fn a_descriptor_the_client_inherited_reaches_neither_the_server_nor_its_runs() {
    let dir = StateDir::new();
    add_job(&dir, "fds", &[], "ls /proc/$$/fd");
    json(&dir, &["stop"]);
    let (read, write) = inherited_pipe();
    let write_fd = write.as_raw_fd();
    let mut status = dir.stead(&["status", "--json"]);
    // SAFETY: dup2 is async-signal-safe; the new descriptor 5 is not close-on-exec.
    unsafe {
        status.pre_exec(move || {
            if libc::dup2(write_fd, 5) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = status.stdout(Stdio::piped()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    drop(write);
    // Every writer is gone, the server (which serves on) included: end of file at once.
    let mut reader = std::fs::File::from(read);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1];
        let _ = tx.send(reader.read(&mut buf).map(|n| n == 0));
    });
    assert!(
        matches!(rx.recv_timeout(PATIENCE), Ok(Ok(true))),
        "the server holds the client's inherited descriptor"
    );
    // A run starts with stdin, stdout and stderr alone.
    let run = json(&dir, &["run", "fds", "--wait"]);
    let log = std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log, "0\n1\n2\n", "the run's shell had {log:?} open");
}

#[test]
fn a_monitors_own_diagnostics_reach_the_monitors_log() {
    let dir = StateDir::new();
    add_job(&dir, "waits", &[], "sleep 300");
    let run = json(&dir, &["run", "waits"]);
    let id = run["id"].as_i64().unwrap();
    let running = wait_status(&dir, id, "running");
    let pid = running["monitor_pid"].as_u64().expect("its monitor's pid");
    // Its stderr (what it says of itself: a plan it cannot read, a panic) is the
    // monitors' log, not nowhere.
    let stderr = std::fs::read_link(format!("/proc/{pid}/fd/2")).unwrap();
    assert_eq!(stderr, dir.path().join("logs/monitors.log"));
    json(&dir, &["cancel", &id.to_string()]);
    wait_status(&dir, id, "cancelled");
}

/// `sleep MARKER` processes, started so that they leave the command's process group.
fn escaping(markers: &[&str]) -> String {
    let [a, b] = markers else { panic!() };
    // One calls setsid; the other is a double fork (its parent exits at once).
    format!(
        "setsid sleep {a} </dev/null >/dev/null 2>&1 & sh -c 'sleep {b} </dev/null >/dev/null 2>&1 &'"
    )
}

#[test]
fn descendants_that_left_the_group_end_with_the_run() {
    let dir = StateDir::new();
    // A normal end: the command exits, its escapees would live on.
    add_job(&dir, "leaves", &[], &escaping(&["471.101", "471.102"]));
    let run = json(&dir, &["run", "leaves", "--wait"]);
    assert_eq!(run["status"], "succeeded", "{run}");
    wait_until("the escapees of a run that ended are gone", || {
        processes_with("471.101") + processes_with("471.102") == 0
    });
    assert_eq!(run["ended_processes"], 2, "{run}");
    assert!(
        run["reason"]
            .as_str()
            .is_some_and(|r| r.contains("killed 2 leftover processes")),
        "{run}"
    );

    // A cancel.
    let script = format!("{}; sleep 300", escaping(&["471.201", "471.202"]));
    add_job(&dir, "cancelled", &[], &script);
    let id = json(&dir, &["run", "cancelled"])["id"].as_i64().unwrap();
    wait_until("the escapees have started", || {
        processes_with("471.201") + processes_with("471.202") == 2
    });
    let out = dir.run(&["cancel", &id.to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    let cancelled = wait_status(&dir, id, "cancelled");
    assert!(
        processes_with("471.201") + processes_with("471.202") == 0,
        "escapees outlived the cancel"
    );
    // The command's shell and its sleep, and the two that escaped.
    assert!(
        cancelled["ended_processes"]
            .as_u64()
            .is_some_and(|n| n >= 3),
        "{cancelled}"
    );
    assert!(
        said.contains("processes ended"),
        "`stead cancel` said {said:?}"
    );

    // A timeout.
    let script = format!("{}; sleep 300", escaping(&["471.301", "471.302"]));
    add_job(&dir, "slow", &["--timeout", "1s"], &script);
    let run = run_and_wait(&dir, "slow");
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["reason"].as_str().unwrap().contains("timed out"),
        "{run}"
    );
    assert!(
        processes_with("471.301") + processes_with("471.302") == 0,
        "escapees outlived the timeout"
    );
}

#[test]
fn a_planted_link_or_file_at_the_next_log_path_is_refused_and_left_alone() {
    let dir = StateDir::new();
    let target = dir.path().with_file_name("target.txt");
    std::fs::write(&target, "the target\n").unwrap();
    // A run plants a link at the next run's log path, another a forged file.
    let plant = format!(
        r#"next="$STEAD_STATE_DIR/logs/runs/$((STEAD_RUN_ID + 1)).log"; ln -s {} "$next""#,
        target.display()
    );
    add_job(&dir, "plant-link", &[], &plant);
    add_job(
        &dir,
        "plant-file",
        &[],
        r#"echo forged > "$STEAD_STATE_DIR/logs/runs/$((STEAD_RUN_ID + 1)).log""#,
    );
    add_job(&dir, "victim", &[], "echo secret output");
    for planter in ["plant-link", "plant-file"] {
        let planted = json(&dir, &["run", planter, "--wait"]);
        assert_eq!(planted["status"], "succeeded", "{planted}");
        let victim = run_and_wait(&dir, "victim");
        assert_eq!(victim["id"], planted["id"].as_i64().unwrap() + 1);
        assert_eq!(victim["status"], "failed", "{victim}");
        let reason = victim["reason"].as_str().unwrap();
        assert!(
            reason.contains("already at that path"),
            "{planter}: {reason}"
        );
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "the target\n");
    let forged = dir.path().join("logs/runs/4.log");
    assert_eq!(std::fs::read_to_string(forged).unwrap(), "forged\n");
    // The next run, at a path nobody planted, runs.
    assert_eq!(
        json(&dir, &["run", "victim", "--wait"])["status"],
        "succeeded"
    );
}

#[test]
fn a_nul_byte_in_any_job_field_is_refused_with_nothing_changed() {
    let dir = StateDir::new();
    let socket = dir.status()["socket"].as_str().unwrap().to_string();
    let mut conn = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let mut reader = std::io::BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
    for (field, value) in [
        ("cwd", json!("/tmp\u{0}x")),
        ("tz", json!("UTC\u{0}")),
        ("depends_on", json!(["stead\u{0}"])),
    ] {
        let mut spec = json!({"name": "nul", "command": ["true"]});
        spec[field] = value;
        if field == "tz" {
            spec["cron"] = json!("0 * * * *");
        }
        let request = json!({"id": 1, "method": "job_add", "params": spec});
        writeln!(conn, "{request}").unwrap();
        line.clear();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            answer["error"]["code"], "invalid_params",
            "{field}: {answer}"
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("{field} contains a NUL byte")),
            "{answer}"
        );
    }
    let file = dir.path().join("nul.toml");
    std::fs::write(
        &file,
        "[[job]]\nname = \"nul\"\ncommand = [\"true\"]\ncwd = \"/tmp\\u0000x\"\n",
    )
    .unwrap();
    let out = dir.run(&["apply", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cwd contains a NUL byte"));
    assert_eq!(json(&dir, &["job", "ls"]), json!([]));
}

#[test]
fn bodies_hosts_targets_and_methods_the_api_does_not_take_are_refused() {
    let dir = StateDir::new();
    add_job(&dir, "hello", &[], "echo hi");
    let api = Api::start(&dir);
    let (host, token) = (api.authority().to_string(), api.token.clone());
    let post = |path: &str, body: &[u8], length: usize| {
        api.raw_request(
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/json\r\nContent-Length: {length}\r\n\
                 Connection: close\r\n\r\n"
            ),
            body,
        )
    };
    // Bodies: what an endpoint would ignore is refused, and nothing is done. Whitespace
    // alone is not JSON (schemathesis found it taken for no body).
    for body in [
        &b"not json"[..],
        b"{\"env\": {\"A\": \"1\"}}",
        b"[]",
        b" \n",
    ] {
        let (status, answer) = post("/api/jobs/hello/disable", body, body.len());
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer.contains("takes no parameters in its body"),
            "{answer}"
        );
    }
    assert_ne!(
        json(&dir, &["job", "show", "hello"])["enabled"],
        false,
        "still enabled"
    );
    // A run takes its parameters in its body, read strictly.
    for body in [
        &b"not json"[..],
        b"[]",
        b"{\"envs\": {}}",
        b"{\"args\": \"x\"}",
        b" ",
    ] {
        let (status, answer) = post("/api/jobs/hello/run", body, body.len());
        assert_eq!(status, 400, "{answer}");
        assert!(answer.contains("invalid body"), "{answer}");
    }
    let (status, answer) = post("/api/jobs/hello/run", b"{}", 2);
    assert_eq!(status, 201, "an empty object is no parameters: {answer}");
    let (status, answer) = post("/api/jobs/hello/run", b"{", 50 * 1024 * 1024);
    assert_eq!(status, 413, "{answer}");
    assert_eq!(json(&dir, &["runs"]).as_array().unwrap().len(), 1);

    let get = |head: &str| {
        api.raw_request(
            &format!("{head}Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"),
            b"",
        )
    };
    // Two Host headers, an absolute-form target, HEAD, a body on a GET.
    let (status, _) = get(&format!(
        "GET /api/status HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\n"
    ));
    assert_eq!(status, 400);
    let (status, answer) = get(&format!(
        "GET http://{host}/api/status HTTP/1.1\r\nHost: {host}\r\n"
    ));
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("absolute form"), "{answer}");
    let (status, answer) = get(&format!("HEAD /api/status HTTP/1.1\r\nHost: {host}\r\n"));
    assert_eq!(status, 405, "{answer}");
    let (status, _) = get(&format!(
        "GET /api/status HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}"
    ));
    assert_eq!(status, 400);

    // The Bearer scheme in any case; a name no job can have is a bad request.
    let (status, _) = api.raw_request(
        &format!(
            "GET /api/status HTTP/1.1\r\nHost: {host}\r\nAuthorization: bEARER {token}\r\nConnection: close\r\n\r\n"
        ),
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(api.get("/api/jobs/no%20such%20name").status, 400);
    assert_eq!(api.get("/api/jobs/missing").status, 404);

    // The event stream is no-store, as every API answer (read up to its headers: the
    // stream itself never ends).
    let mut events = TcpStream::connect(api.authority()).unwrap();
    events.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        events,
        "GET /api/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            events.read(&mut byte).unwrap(),
            1,
            "the stream's headers end"
        );
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("cache-control: no-store"), "{head}");
}

#[test]
fn the_logs_of_an_earlier_ledger_are_moved_aside_not_in_the_way() {
    let dir = StateDir::new();
    add_job(&dir, "hello", &[], "echo new");
    json(&dir, &["run", "hello", "--wait"]);
    json(&dir, &["stop"]);
    // The ledger is moved aside (as stead suggests for a broken one); its logs stay.
    std::fs::rename(dir.path().join("stead.db"), dir.path().join("old.db")).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.path().join(format!("stead.db{suffix}")));
    }
    add_job(&dir, "hello", &[], "echo fresh");
    let run = json(&dir, &["run", "hello", "--wait"]);
    assert_eq!(run["id"], 1);
    assert_eq!(run["status"], "succeeded", "{run}");
    let log = std::fs::read_to_string(run["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log, "fresh\n");
    let aside: Vec<_> = std::fs::read_dir(dir.path().join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("runs.before-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let old = dir.path().join("logs").join(&aside[0]).join("1.log");
    assert_eq!(std::fs::read_to_string(old).unwrap(), "new\n");
}
