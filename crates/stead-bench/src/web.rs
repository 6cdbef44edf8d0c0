//! The web figures: how soon a run's end reaches a client of the event stream and the
//! live dashboard in a real browser, `GET /api/runs` over a large ledger beside the CLI,
//! and the server's memory while the dashboard is open and streaming. Each figure starts
//! and stops its own server in its own state directory, with the API started by `stead
//! dashboard --json`. Every time is wall clock; a run's end is the `ended_at` its monitor
//! recorded in the ledger (whole milliseconds, on this machine's clock).
//!
//! The browser figures run node scripts of `web-tests/` (playwright-core driving
//! /usr/bin/chromium). Each script gets a directory under the bench's guard directory as
//! its argument and puts the browser's profile and crash reports there, so the guard's
//! sweep finds node and every chromium process by their command lines.

use std::io::{self, BufRead, BufReader, Read, Write as _};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use serde_json::Value;

use crate::figures::{Stats, series};
use crate::stead::{Stead, scrub};
use crate::{proc, raw_ledger, runs};

/// The statuses a run never leaves (`docs/ledger.md`).
const TERMINAL: [&str; 5] = ["succeeded", "failed", "cancelled", "interrupted", "skipped"];
/// The longest the bench waits for one answer, one run's end or one event.
const WAIT: Duration = Duration::from_secs(20);
/// The job every web figure runs: `true`.
pub const JOB: &str = "w";
/// The dashboard should show a run's end within this, in ms (p90).
pub const BROWSER_TARGET_MS: f64 = 200.0;
/// Runs streamed through the open dashboard and the raw clients before memory is read.
pub const MEMORY_RUNS: usize = 200;
/// Raw event-stream clients beside the dashboard in the memory figure.
pub const MEMORY_CLIENTS: usize = 10;
/// The node scripts' directory, beside this crate.
const WEB_TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web-tests");
/// The browser the scripts drive.
const CHROMIUM: &str = "/usr/bin/chromium";
/// What to do when the browser figures cannot run.
const SETUP_HINT: &str = "run scripts/setup-browser";

/// The HTTP API of one server, as `stead dashboard --json` names it, through one agent
/// (which keeps its connection alive between requests).
pub struct Api {
    agent: ureq::Agent,
    url: String,
    token: String,
}

impl Api {
    /// Starts the API of the server of `dir` (and the server, when none runs).
    fn start(stead: &Stead, dir: &Path) -> anyhow::Result<Self> {
        let endpoint = stead.json(dir, &["dashboard", "--json"])?;
        let text = |key: &str| {
            endpoint[key]
                .as_str()
                .map(str::to_string)
                .with_context(|| format!("stead dashboard --json printed no {key}"))
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(WAIT))
            .build()
            .into();
        Ok(Self {
            agent,
            url: text("url")?,
            token: text("token")?,
        })
    }

    /// `HOST:PORT` of the listener.
    fn authority(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// `GET PATH`, answered 200 with JSON.
    fn get(&self, path: &str) -> anyhow::Result<Value> {
        let answer = self
            .agent
            .get(format!("{}{path}", self.url))
            .header("Authorization", self.bearer())
            .call();
        json_answer("GET", path, 200, answer)
    }

    /// `POST /api/jobs/JOB/run`: the new run's id.
    fn run(&self) -> anyhow::Result<i64> {
        let path = format!("/api/jobs/{JOB}/run");
        let answer = self
            .agent
            .post(format!("{}{path}", self.url))
            .header("Authorization", self.bearer())
            .send_empty();
        let run = json_answer("POST", &path, 201, answer)?;
        run["id"]
            .as_i64()
            .with_context(|| format!("POST {path} answered a run without id: {run}"))
    }
}

/// The JSON body of an answer with status `want`; any other status fails with the body.
fn json_answer(
    method: &str,
    path: &str,
    want: u16,
    answer: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> anyhow::Result<Value> {
    let mut answer = answer.with_context(|| format!("{method} {path}"))?;
    let status = answer.status().as_u16();
    let body = answer
        .body_mut()
        .read_to_vec()
        .with_context(|| format!("{method} {path}: reading the body"))?;
    if status != want {
        bail!(
            "{method} {path}: HTTP {status}, expected {want}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    serde_json::from_slice(&body).with_context(|| format!("{method} {path} answered no JSON"))
}

/// One event of `GET /api/events`, with the wall-clock time it was read.
struct Event {
    at: SystemTime,
    name: String,
    data: String,
}

/// A client of `GET /api/events` on a connection of its own: a thread reads the stream
/// and hands on every event, timestamped as it is read. Dropping it closes the connection.
struct EventStream {
    socket: TcpStream,
    events: mpsc::Receiver<Event>,
    reader: Option<JoinHandle<()>>,
}

impl EventStream {
    /// Connects, and returns once the `hello` event is in: the server subscribes before it
    /// sends `hello`, so no run change after this is missed.
    fn open(api: &Api) -> anyhow::Result<Self> {
        let socket = TcpStream::connect(api.authority())
            .with_context(|| format!("connecting to {}", api.url))?;
        socket.set_nodelay(true)?;
        socket.set_read_timeout(Some(WAIT))?;
        write!(
            &socket,
            "GET /api/events HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\n\
             Accept: text/event-stream\r\n\r\n",
            api.authority(),
            api.bearer()
        )?;
        let mut head = BufReader::new(socket.try_clone()?);
        read_head(&mut head)?;
        // Keep-alive comments come every 15 s; a quiet stream is not an error.
        socket.set_read_timeout(None)?;
        let (tx, events) = mpsc::channel();
        let body = Chunked {
            inner: head,
            left: 0,
            crlf: false,
        };
        let reader = std::thread::spawn(move || read_events(body, &tx));
        let stream = Self {
            socket,
            events,
            reader: Some(reader),
        };
        let hello = stream.next(Instant::now() + WAIT)?;
        if hello.name != "hello" {
            bail!("GET /api/events began with {:?}, not hello", hello.name);
        }
        Ok(stream)
    }

    fn next(&self, deadline: Instant) -> anyhow::Result<Event> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.events.recv_timeout(left).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => anyhow!("no event for {} s", WAIT.as_secs()),
            mpsc::RecvTimeoutError::Disconnected => anyhow!("the event stream ended"),
        })
    }

    /// The first `run` event of run `id` with a terminal status: when it was read, and
    /// the run it carries. Events of other runs are passed over.
    fn ended(&self, id: i64) -> anyhow::Result<(SystemTime, Value)> {
        let deadline = Instant::now() + WAIT;
        loop {
            let event = self
                .next(deadline)
                .with_context(|| format!("waiting for the end of run {id}"))?;
            match event.name.as_str() {
                "lagged" => bail!("the event stream lagged (missed events) before run {id} ended"),
                "run" => {
                    let run: Value = serde_json::from_str(&event.data)
                        .with_context(|| format!("a run event that is not JSON: {}", event.data))?;
                    if run["id"].as_i64() == Some(id) && is_terminal(&run) {
                        return Ok((event.at, run));
                    }
                }
                _ => {}
            }
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // Wakes the reader from its blocking read with end of file.
        let _ = self.socket.shutdown(Shutdown::Both);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

fn is_terminal(run: &Value) -> bool {
    run["status"]
        .as_str()
        .is_some_and(|s| TERMINAL.contains(&s))
}

/// Reads the status line and headers of the event stream's answer: 200 and chunked.
fn read_head(reader: &mut impl BufRead) -> anyhow::Result<()> {
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .context("GET /api/events: no answer")?;
    let status = line.trim_end().to_string();
    let mut chunked = false;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            bail!("GET /api/events: the connection closed within the headers ({status})");
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            chunked |= name.eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked");
        }
    }
    if !status.starts_with("HTTP/1.1 200") {
        bail!("GET /api/events: {status}");
    }
    if !chunked {
        bail!("GET /api/events: the answer is not chunked");
    }
    Ok(())
}

/// A chunked HTTP/1.1 body as plain bytes. A chunk's trailing CRLF is read only before
/// the next chunk, so a read never waits for more than the chunk at hand.
struct Chunked<R> {
    inner: R,
    /// Bytes left in the current chunk.
    left: usize,
    /// A chunk's trailing CRLF is still to be read.
    crlf: bool,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            let mut line = String::new();
            if self.crlf {
                self.inner.read_line(&mut line)?;
                self.crlf = false;
                line.clear();
            }
            if self.inner.read_line(&mut line)? == 0 {
                return Ok(0);
            }
            let size = line.trim_end().split(';').next().unwrap_or_default();
            self.left = usize::from_str_radix(size, 16).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidData, format!("chunk size {size:?}"))
            })?;
            if self.left == 0 {
                return Ok(0); // the last chunk: the server ended the stream
            }
        }
        let want = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n;
        self.crlf = self.left == 0;
        Ok(n)
    }
}

/// The reader thread: parses server-sent events until the stream ends or the receiver
/// is gone. An event is stamped when its closing blank line is read.
fn read_events(body: impl Read, tx: &mpsc::Sender<Event>) {
    let mut lines = BufReader::new(body);
    let (mut name, mut data) = (String::new(), Vec::<String>::new());
    let mut line = String::new();
    loop {
        line.clear();
        if !matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
            return;
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            if !data.is_empty() {
                let event = Event {
                    at: SystemTime::now(),
                    name: std::mem::take(&mut name),
                    data: data.join("\n"),
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
            name.clear();
            data.clear();
        } else if !l.starts_with(':') {
            let (field, value) = l.split_once(':').unwrap_or((l, ""));
            let value = value.strip_prefix(' ').unwrap_or(value).to_string();
            match field {
                "event" => name = value,
                "data" => data.push(value),
                _ => {}
            }
        }
    }
}

/// A server in `dir` with the job [`JOB`] (`true`, runs may overlap) and its API on.
fn serve(stead: &Stead, dir: &Path) -> anyhow::Result<Api> {
    stead.status(dir, &[])?;
    stead.call(
        dir,
        &["job", "add", JOB, "--concurrency", "allow", "--", "true"],
    )?;
    Api::start(stead, dir)
}

/// Milliseconds from the recorded end of `run` (which must have succeeded) to `at`.
fn since_end(at: SystemTime, run: &Value) -> anyhow::Result<f64> {
    if run["status"] != "succeeded" {
        bail!("run {} ended {}, not succeeded", run["id"], run["status"]);
    }
    let ended = run["ended_at"]
        .as_str()
        .with_context(|| format!("run {} has no ended_at", run["id"]))?;
    let ended = ended
        .parse::<jiff::Timestamp>()
        .with_context(|| format!("run {}'s ended_at {ended:?}", run["id"]))?;
    let at = at.duration_since(UNIX_EPOCH)?.as_secs_f64() * 1e3;
    Ok(at - ended.as_millisecond() as f64)
}

/// Figure 1: `n` runs of `true`, one after another, each started with `POST
/// /api/jobs/JOB/run` once the last has ended; for each, its recorded end → the first
/// `run` event with a terminal status, read by a client of `/api/events`.
pub fn stream(stead: &Stead, n: usize) -> anyhow::Result<Stats> {
    let dir = stead.dir("ws");
    let api = serve(stead, &dir)?;
    let events = EventStream::open(&api)?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let id = api.run()?;
        let (at, run) = events.ended(id)?;
        samples.push(since_end(at, &run)?);
    }
    drop(events);
    stead.stop(&dir)?;
    Ok(Stats::of_ms(samples))
}

/// A browser figure's outcome: measured, or why it could not be.
pub enum Browser<T> {
    Measured(T),
    Skipped(String),
}

/// Why the browser figures cannot run here, if they cannot.
fn browser_missing() -> Option<String> {
    let playwright = Path::new(WEB_TESTS).join("node_modules/playwright-core");
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
    };
    if !Path::new(CHROMIUM).is_file() {
        Some(format!("{CHROMIUM} not found; {SETUP_HINT}"))
    } else if !on_path("node") {
        Some(format!("node not found on PATH; {SETUP_HINT}"))
    } else if !playwright.is_dir() {
        Some(format!(
            "web-tests/node_modules/playwright-core not found; {SETUP_HINT}"
        ))
    } else {
        None
    }
}

/// `node SCRIPT WORK` in `web-tests/`, with the server's address and token, stdin from
/// /dev/null, and stdout and stderr in files of `work` (created here).
fn node(script: &str, work: &Path, api: &Api) -> anyhow::Result<Command> {
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let file = |name: &str| {
        std::fs::File::create(work.join(name))
            .with_context(|| format!("creating {}", work.join(name).display()))
    };
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .arg(work)
        .current_dir(WEB_TESTS)
        .env("STEAD_URL", &api.url)
        .env("STEAD_TOKEN", &api.token)
        .stdin(Stdio::null())
        .stdout(file("stdout")?)
        .stderr(file("stderr")?);
    scrub(&mut cmd);
    Ok(cmd)
}

/// The last lines of a script's stderr in `work`, for an error message.
fn stderr_tail(work: &Path) -> String {
    let text = std::fs::read_to_string(work.join("stderr")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Waits for `child` for at most `limit`; past it, kills the child and whatever else
/// runs under `work` (its browser).
fn wait(child: &mut Child, work: &Path, limit: Duration) -> anyhow::Result<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            proc::kill_under(work);
            bail!("still running after {} s; killed", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Figure 2: `web-tests/latency.mjs` opens the dashboard in chromium, starts `n` runs of
/// `true` one after another through the API, and times each from its recorded end to the
/// page first showing it succeeded (a MutationObserver in the page).
pub fn browser(stead: &Stead, root: &Path, n: usize) -> anyhow::Result<Browser<Stats>> {
    if let Some(reason) = browser_missing() {
        return Ok(Browser::Skipped(reason));
    }
    let dir = stead.dir("wb");
    let api = serve(stead, &dir)?;
    let work = root.join("latency");
    let mut cmd = node("latency.mjs", &work, &api)?;
    cmd.env("STEAD_JOB", JOB).env("STEAD_RUNS", n.to_string());
    let mut child = cmd.spawn().context("starting node web-tests/latency.mjs")?;
    let limit = Duration::from_secs(90 + 2 * n as u64);
    let status = wait(&mut child, &work, limit).context("web-tests/latency.mjs")?;
    if !status.success() {
        bail!(
            "web-tests/latency.mjs failed ({status}):\n{}",
            stderr_tail(&work)
        );
    }
    let out = std::fs::read_to_string(work.join("stdout"))?;
    let samples = out
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["samples_ms"].as_array().cloned())
        .context("web-tests/latency.mjs printed no {\"samples_ms\": [...]}")?;
    let samples: Vec<f64> = samples.iter().filter_map(Value::as_f64).collect();
    if samples.len() != n {
        bail!(
            "web-tests/latency.mjs timed {} runs, not {n}",
            samples.len()
        );
    }
    stead.stop(&dir)?;
    Ok(Browser::Measured(Stats::of_ms(samples)))
}

/// Figure 3: `GET /api/runs` and `stead runs` with [`runs::LEDGER_ROWS`] runs in the
/// ledger.
pub struct Listing {
    pub rows: u64,
    /// `GET /api/runs?limit=50`
    pub newest: Stats,
    /// `GET /api/runs?job=JOB&status=failed&limit=50` (no run matches)
    pub no_match: Stats,
    /// `stead runs --limit 50 --json`, a whole client process each
    pub cli: Stats,
}

/// The paths of figure 3's two requests.
pub fn listing_paths() -> [String; 2] {
    [
        "/api/runs?limit=50".to_string(),
        format!("/api/runs?job={JOB}&status=failed&limit=50"),
    ]
}

/// Figure 3: one real run, the server stopped, [`runs::LEDGER_ROWS`] succeeded runs
/// inserted, the server and its API started, then `n` timed requests of each kind over
/// one kept-alive connection, and `n` timed `stead runs --limit 50 --json` processes.
pub fn listing(stead: &Stead, n: usize) -> anyhow::Result<Listing> {
    let dir = stead.dir("wq");
    raw_ledger::with_one_run(stead, &dir, &[], JOB)?;
    raw_ledger::refill(stead, &dir, &[], JOB, runs::LEDGER_ROWS)?;
    let api = Api::start(stead, &dir)?;
    let count = |path: &str, expect: usize| {
        series(n, || {
            let got = api.get(path)?.as_array().map_or(0, Vec::len);
            if got != expect {
                bail!("GET {path} listed {got} runs, not {expect}");
            }
            Ok(())
        })
    };
    let [newest, no_match] = listing_paths();
    let newest = count(&newest, 50)?;
    let no_match = count(&no_match, 0)?;
    let args = runs::LISTINGS[0];
    let cli = series(n, || {
        let got = stead.json(&dir, args)?.as_array().map_or(0, Vec::len);
        if got != 50 {
            bail!("stead {} listed {got} runs, not 50", args.join(" "));
        }
        Ok(())
    })?;
    stead.stop(&dir)?;
    Ok(Listing {
        rows: runs::LEDGER_ROWS,
        newest,
        no_match,
        cli,
    })
}

/// `web-tests/hold-open.mjs`: the dashboard open in chromium until [`Dashboard::close`]
/// (or drop, which kills it and its browser).
struct Dashboard {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    work: PathBuf,
}

impl Dashboard {
    /// Starts the script and returns once it says the page is live.
    fn open(api: &Api, work: &Path) -> anyhow::Result<Self> {
        let mut cmd = node("hold-open.mjs", work, api)?;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .context("starting node web-tests/hold-open.mjs")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("hold-open.mjs stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut dashboard = Self {
            child,
            stdin,
            lines,
            work: work.to_path_buf(),
        };
        let line = dashboard.line(Duration::from_secs(60))?;
        if line != "ready" {
            bail!("web-tests/hold-open.mjs said {line:?}, not ready");
        }
        Ok(dashboard)
    }

    /// The script's next line on stdout; failing with its stderr when it ends first.
    fn line(&mut self, limit: Duration) -> anyhow::Result<String> {
        let why = match self.lines.recv_timeout(limit) {
            Ok(line) => return Ok(line),
            Err(mpsc::RecvTimeoutError::Timeout) => "no answer in time".to_string(),
            // Its stdout is closed: it is exiting, or has.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                match wait(&mut self.child, &self.work, Duration::from_secs(5)) {
                    Ok(status) => format!("ended early ({status})"),
                    Err(e) => format!("closed its stdout and {e}"),
                }
            }
        };
        bail!(
            "web-tests/hold-open.mjs: {why}:\n{}",
            stderr_tail(&self.work)
        )
    }

    /// Closes the script's stdin; it answers with what the page showed, closes the
    /// browser and exits. Returns how many runs the page listed.
    fn close(mut self) -> anyhow::Result<u64> {
        drop(self.stdin.take());
        let summary: Value = serde_json::from_str(&self.line(WAIT)?)
            .context("web-tests/hold-open.mjs printed no JSON summary")?;
        let status = wait(&mut self.child, &self.work, WAIT).context("web-tests/hold-open.mjs")?;
        if !status.success() {
            bail!(
                "web-tests/hold-open.mjs failed ({status}):\n{}",
                stderr_tail(&self.work)
            );
        }
        if summary["conn"] != "live" {
            bail!("the dashboard's connection was not live at the end: {summary}");
        }
        summary["runs"]
            .as_u64()
            .with_context(|| format!("no run count in {summary}"))
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        proc::kill_under(&self.work);
    }
}

/// The server's memory at one stage of figure 4.
pub struct Stage {
    pub name: String,
    /// VmRSS and VmHWM, once VmRSS is unchanged for 1 s.
    pub rss: f64,
    pub hwm: f64,
    /// Proportional set size, read right after.
    pub pss: f64,
    /// Sockets the server holds open (its socket listener, the HTTP listener, connections).
    pub sockets: usize,
}

fn stage(name: impl Into<String>, pid: u32) -> anyhow::Result<Stage> {
    let (rss, hwm) = runs::settled(pid)?;
    Ok(Stage {
        name: name.into(),
        rss,
        hwm,
        pss: proc::rollup_field(pid, "Pss")? as f64 / 1024.0,
        sockets: proc::sockets(pid)?,
    })
}

/// Figure 4: the server's memory in MiB.
pub struct Memory {
    /// Idle with HTTP off; HTTP on; streaming; after the clients left.
    pub stages: [Stage; 4],
    /// Runs the page listed when it was closed, or why no browser was open.
    pub browser: Browser<u64>,
}

/// Figure 4: one server, measured idle, then with its API on, then with the dashboard
/// open in chromium (hold-open.mjs) and [`MEMORY_CLIENTS`] raw event-stream clients
/// after [`MEMORY_RUNS`] runs of `true` (one after another) streamed to all of them, then
/// after they all disconnected.
pub fn memory(stead: &Stead, root: &Path) -> anyhow::Result<Memory> {
    let dir = stead.dir("wm");
    let pid = stead.status(&dir, &[])?.pid;
    stead.call(
        &dir,
        &["job", "add", JOB, "--concurrency", "allow", "--", "true"],
    )?;
    let idle = stage("idle, HTTP off", pid)?;
    let api = Api::start(stead, &dir)?;
    if stead.status(&dir, &[])?.pid != pid {
        bail!("the server changed when its HTTP API started");
    }
    let http = stage("HTTP on, no client", pid)?;

    let page = match browser_missing() {
        Some(reason) => Err(reason),
        None => Ok(Dashboard::open(&api, &root.join("hold-open"))?),
    };
    let clients = (0..MEMORY_CLIENTS)
        .map(|_| EventStream::open(&api))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut ids = Vec::with_capacity(MEMORY_RUNS);
    for _ in 0..MEMORY_RUNS {
        let id = api.run()?;
        clients[0].ended(id)?;
        ids.push(id);
    }
    for client in &clients[1..] {
        for &id in &ids {
            client.ended(id)?;
        }
    }
    let streaming = stage(
        match page {
            Ok(_) => format!("dashboard + {MEMORY_CLIENTS} SSE clients, {MEMORY_RUNS} runs"),
            Err(_) => format!("{MEMORY_CLIENTS} SSE clients (no browser), {MEMORY_RUNS} runs"),
        },
        pid,
    )?;
    drop(clients);
    let browser = match page {
        Ok(page) => Browser::Measured(page.close()?),
        Err(reason) => Browser::Skipped(reason),
    };
    drop(api); // and the bench's own kept-alive connection
    let after = stage("after the clients disconnected", pid)?;
    stead.stop(&dir)?;
    Ok(Memory {
        stages: [idle, http, streaming, after],
        browser,
    })
}
