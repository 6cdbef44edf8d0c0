//! `stead restart [--service S]`: the gate, then the restart, then proof.
//!
//! For stead: stop the server, wait until the old process is really gone (its pid and
//! start identity, not merely the stop returning: a successor started a moment early
//! would meet the old one), start a new one, and check its hello carries a new server
//! id. For a declared service: mark the restart on the server (dependent fires wait; a
//! dependent run failing meanwhile is interrupted, not failed), run its restart
//! command, wait for its ready check, and mark the restart over.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::ready_check::{self, Check};
use anyhow::{Context, bail};
use serde::Serialize;
use stead_client::Client;
use stead_core::schedule;
use stead_protocol::{STEAD_SERVICE, StopParams, exit};
use stead_sys::identity::{self, StartIdentity};

use super::gate::{self, GateArgs, GateOutcome};
use super::output::{self, OutputArgs, Show};

/// How long the old server may take to exit after it released everything.
const OLD_SERVER_EXIT: Duration = Duration::from_secs(15);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The service to restart [default: stead itself]
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
    /// Restart without waiting; dependent runs in flight are cut (interrupted, resumed
    /// once the service is ready)
    #[arg(long)]
    pub force: bool,
    /// How long the gate, and then the ready check, may wait
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    pub timeout: String,
    #[command(flatten)]
    pub format: OutputArgs,
}

#[derive(Debug, Serialize)]
struct Phase {
    name: &'static str,
    ms: u64,
    detail: String,
}

/// What a restart did, phase by phase: what `stead restart --json` prints.
#[derive(Debug, Serialize)]
pub struct Report {
    service: String,
    restarted: bool,
    phases: Vec<Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_server_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    new_server_id: Option<String>,
}

struct Timer {
    phases: Vec<Phase>,
    at: Instant,
}

impl Timer {
    fn lap(&mut self, name: &'static str, detail: impl Into<String>) {
        self.phases.push(Phase {
            name,
            ms: self.at.elapsed().as_millis() as u64,
            detail: detail.into(),
        });
        self.at = Instant::now();
    }
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let (report, code) = perform(&Client::for_state_dir(dir)?, &args)?;
    output::show(&report, args.format)?;
    Ok(code)
}

/// The gate, the restart and its proof; answers the report and the exit code (75 when
/// the gate deferred and nothing was restarted). Progress goes to stderr only.
pub fn perform(client: &Client, args: &Args) -> anyhow::Result<(Report, i32)> {
    let service = args.service.clone().unwrap_or_else(|| STEAD_SERVICE.into());
    let mut timer = Timer {
        phases: Vec::new(),
        at: Instant::now(),
    };
    let gate_args = GateArgs {
        service: Some(service.clone()),
        timeout: args.timeout.clone(),
        interval: "15s".into(),
        window: "90s".into(),
        force: args.force,
        format: args.format,
    };
    let outcome = gate::wait(client, &gate_args)?;
    let waited = match &outcome {
        GateOutcome::Deferred { readiness, .. } => {
            timer.lap("gate", "deferred: something would still be cut");
            let names: Vec<String> = readiness.blockers.iter().map(|b| b.describe()).collect();
            eprintln!(
                "stead restart: deferred: a restart of {service} would still cut {}; nothing was restarted",
                names.join(", ")
            );
            let report = Report {
                service,
                restarted: false,
                phases: timer.phases,
                old_server_id: None,
                new_server_id: None,
            };
            return Ok((report, exit::TEMP_FAIL));
        }
        GateOutcome::Forced { .. } => "forced: not waited for",
        GateOutcome::ServerDown { .. } => "stead is not running",
        GateOutcome::Clear { .. } => "clear",
    };
    timer.lap("gate", waited);
    let report = if service == STEAD_SERVICE {
        restart_stead(client, service, timer)?
    } else {
        restart_service(client, args, service, timer)?
    };
    Ok((report, exit::SUCCESS))
}

impl Show for Report {
    fn human(&self) -> String {
        let mut out = if self.restarted {
            format!("restarted {}\n", self.service)
        } else {
            format!("did not restart {}\n", self.service)
        };
        for p in &self.phases {
            out.push_str(&format!("  {:<10} {:>7} ms  {}\n", p.name, p.ms, p.detail));
        }
        if let (Some(old), Some(new)) = (&self.old_server_id, &self.new_server_id) {
            out.push_str(&format!("  server     {old} -> {new}\n"));
        }
        out
    }
}

fn restart_stead(client: &Client, service: String, mut timer: Timer) -> anyhow::Result<Report> {
    // Before stopping anything: a server stopped with no program to start the next one
    // would leave stead down.
    super::daemon::program()?;
    let old = match client.connect() {
        Ok(mut conn) => {
            let stopped = conn.stop(StopParams::default())?;
            timer.lap(
                "stop",
                format!("server {} released the state directory", stopped.server_id),
            );
            let identity = StartIdentity::from_stored(stopped.start_identity);
            if !identity::wait_gone(stopped.pid, &identity, OLD_SERVER_EXIT) {
                bail!(
                    "the old server (pid {}) did not exit within {}s; not starting another beside it",
                    stopped.pid,
                    OLD_SERVER_EXIT.as_secs()
                );
            }
            timer.lap("exit", format!("pid {} is gone", stopped.pid));
            Some(stopped.server_id)
        }
        Err(_) => None,
    };
    let hello = super::connect(client)?
        .hello()
        .cloned()
        .expect("a connection through the socket is greeted");
    if old.as_deref() == Some(hello.server_id.as_str()) {
        bail!(
            "the server answering after the restart is the old one ({})",
            hello.server_id
        );
    }
    timer.lap(
        "start",
        format!("server {} (pid {}) answers", hello.server_id, hello.pid),
    );
    Ok(Report {
        service,
        restarted: true,
        phases: timer.phases,
        old_server_id: old,
        new_server_id: Some(hello.server_id),
    })
}

fn restart_service(
    client: &Client,
    args: &Args,
    service: String,
    mut timer: Timer,
) -> anyhow::Result<Report> {
    let mut conn = super::connect(client)?;
    let spec = conn
        .service_list()?
        .into_iter()
        .find(|s| s.spec.name == service)
        .with_context(|| format!("no service named {service:?} (see `stead service ls`)"))?
        .spec;
    let Some(command) = spec.restart.clone() else {
        bail!(
            "service {service} has no restart command (stead service add {service} --restart CMD)"
        );
    };
    conn.restart_begin(&service, args.force)?;
    let limit = schedule::parse_duration(&args.timeout)?;
    let result = (|| -> anyhow::Result<()> {
        // A hung restart must not leave the service marked as restarting for ever.
        let Some(status) = ready_check::run_bounded(&command, limit, Stdio::inherit())
            .with_context(|| format!("failed to run the restart command {command:?}"))?
        else {
            bail!("the restart command {command:?} did not finish within {limit:?}; it was killed");
        };
        if !status.success() {
            bail!("the restart command {command:?} {status}");
        }
        timer.lap("restart", format!("`{command}` succeeded"));
        let Some(ready) = &spec.ready else {
            timer.lap("ready", "no ready check declared");
            return Ok(());
        };
        let started = Instant::now();
        loop {
            match ready_check::check(ready, Duration::from_secs(5)) {
                Check::Ready => break,
                Check::NotYet(why) if started.elapsed() >= limit => {
                    bail!(
                        "{service} did not become ready within {}: {why}",
                        args.timeout
                    )
                }
                Check::NotYet(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        timer.lap("ready", format!("`{ready}` passes"));
        Ok(())
    })();
    // Whatever happened, the restart is over: dependent fires must not wait for ever.
    let ended = conn.restart_end(&service);
    result?;
    ended?;
    Ok(Report {
        service,
        restarted: true,
        phases: timer.phases,
        old_server_id: None,
        new_server_id: None,
    })
}
