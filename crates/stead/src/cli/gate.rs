//! `stead readiness` and `stead gate`: what a restart would cut, and waiting until it
//! would cut nothing.
//!
//! The gate asks the server and then waits on the server's answer changing (the server
//! holds the request until a run ends, a hold is released, a fire passes...), so it exits
//! within milliseconds of the last blocker clearing, not at its next print. It never
//! restarts anything: `stead gate && <restart>` chains.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use stead_client::{Client, ClientError, Connection};
use stead_core::schedule;
use stead_protocol::{Readiness, STEAD_SERVICE, exit};

use super::errors::DataError;
use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct ReadinessArgs {
    /// The service a restart of which is considered [default: stead]
    #[arg(long, value_name = "NAME")]
    service: Option<String>,
    /// How far ahead a due fire counts
    #[arg(long, value_name = "DURATION", default_value = "90s")]
    window: String,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct GateArgs {
    /// The service about to be restarted [default: stead]
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
    /// Give up (exit 75, nothing restarted) after this long
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    pub timeout: String,
    /// How often to print what it waits for (when not on a terminal)
    #[arg(long, value_name = "DURATION", default_value = "15s")]
    pub interval: String,
    /// How far ahead a due fire counts
    #[arg(long, value_name = "DURATION", default_value = "90s")]
    pub window: String,
    /// Do not wait: exit 0 at once, with a warning naming what a restart now would cut
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: OutputArgs,
}

/// How a gate ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum GateOutcome {
    /// Nothing left to cut.
    Clear {
        waited_ms: u64,
        readiness: Readiness,
    },
    /// No server answers: nothing is running that a restart could cut.
    ServerDown { waited_ms: u64 },
    /// `--force`: not waited for.
    Forced { readiness: Option<Readiness> },
    /// The timeout passed first; nothing may be restarted.
    Deferred {
        waited_ms: u64,
        readiness: Readiness,
    },
}

impl GateOutcome {
    pub fn code(&self) -> i32 {
        match self {
            GateOutcome::Deferred { .. } => exit::TEMP_FAIL,
            _ => exit::SUCCESS,
        }
    }
}

pub fn readiness(dir: Option<&Path>, args: ReadinessArgs) -> anyhow::Result<i32> {
    let readiness = super::connect(&Client::for_state_dir(dir)?)?
        .readiness(args.service.as_deref(), Some(&args.window))?;
    output::show(&readiness, args.format)?;
    Ok(exit::SUCCESS)
}

pub fn run(dir: Option<&Path>, args: GateArgs) -> anyhow::Result<i32> {
    let outcome = wait(&Client::for_state_dir(dir)?, &args)?;
    if let GateOutcome::Deferred {
        waited_ms,
        readiness,
    } = &outcome
        && !args.format.json
    {
        // A person is told on stderr, as a failure; the JSON says it itself.
        eprintln!(
            "stead gate: deferred after {}: a restart of {} would still cut {}; restart nothing, try later",
            seconds(*waited_ms),
            readiness.service,
            blockers(readiness)
        );
    }
    output::show(&outcome, args.format)?;
    Ok(outcome.code())
}

impl Show for GateOutcome {
    fn human(&self) -> String {
        match self {
            GateOutcome::Clear {
                waited_ms,
                readiness,
            } => format!(
                "clear: a restart of {} cuts nothing now (waited {})\n",
                readiness.service,
                seconds(*waited_ms)
            ),
            GateOutcome::ServerDown { .. } => {
                "clear: stead is not running, so a restart cuts nothing\n".to_string()
            }
            // What a forced or deferred gate cuts is said on stderr: stdout stays empty.
            GateOutcome::Forced { .. } | GateOutcome::Deferred { .. } => String::new(),
        }
    }
}

fn service(args: &GateArgs) -> &str {
    args.service.as_deref().unwrap_or(STEAD_SERVICE)
}

fn parse(field: &str, value: &str) -> Result<Duration, DataError> {
    schedule::parse_duration(value).map_err(|e| DataError(format!("--{field}: {e}")))
}

/// Waits until a restart of the service would cut nothing, the server is gone, or the
/// timeout passes. Progress goes to stderr, so stdout stays the answer.
pub fn wait(client: &Client, args: &GateArgs) -> anyhow::Result<GateOutcome> {
    let timeout = parse("timeout", &args.timeout)?;
    let interval = parse("interval", &args.interval)?.max(Duration::from_millis(100));
    let started = Instant::now();
    let waited = || started.elapsed().as_millis() as u64;
    let mut conn = match connect(client)? {
        Some(conn) => conn,
        None => {
            return Ok(GateOutcome::ServerDown {
                waited_ms: waited(),
            });
        }
    };
    let service = service(args);
    let mut readiness = match conn.readiness(Some(service), Some(&args.window)) {
        Ok(r) => r,
        Err(e) if gone(&e) => {
            return Ok(GateOutcome::ServerDown {
                waited_ms: waited(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    if args.force {
        if !readiness.ready {
            eprintln!(
                "stead gate: --force: not waiting; a restart of {service} now cuts {}",
                blockers(&readiness)
            );
        }
        return Ok(GateOutcome::Forced {
            readiness: Some(readiness),
        });
    }
    let live = std::io::stderr().is_terminal() && !args.format.json;
    let mut last_print: Option<Instant> = None;
    loop {
        if readiness.ready {
            if live {
                eprint!("\r\x1b[2K");
            }
            return Ok(GateOutcome::Clear {
                waited_ms: waited(),
                readiness,
            });
        }
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            if live {
                eprintln!();
            }
            return Ok(GateOutcome::Deferred {
                waited_ms: waited(),
                readiness,
            });
        }
        let line = format!(
            "stead gate: waiting {} for {}",
            seconds(waited()),
            blockers(&readiness)
        );
        if live {
            eprint!("\r\x1b[2K{line}");
        } else if last_print.is_none_or(|t| t.elapsed() >= interval) {
            eprintln!("{line}");
            last_print = Some(Instant::now());
        }
        // On a terminal the line is refreshed each second; elsewhere one line an interval.
        let step = if live {
            Duration::from_secs(1)
        } else {
            interval
        };
        readiness = match conn.readiness_change(&readiness, Some(&args.window), step.min(left)) {
            Ok(r) => r,
            Err(e) if gone(&e) => match connect(client)? {
                // A server that went away has nothing left to cut; a successor is asked.
                None => {
                    return Ok(GateOutcome::ServerDown {
                        waited_ms: waited(),
                    });
                }
                Some(again) => {
                    conn = again;
                    conn.readiness(Some(service), Some(&args.window))?
                }
            },
            Err(e) => return Err(e.into()),
        };
    }
}

/// Connects without starting a server: a gate never brings one up.
fn connect(client: &Client) -> anyhow::Result<Option<Connection>> {
    match client.connect() {
        Ok(conn) => Ok(Some(conn)),
        Err(e) if gone(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn gone(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::NotRunning { .. } | ClientError::Unavailable(_) | ClientError::Io(_)
    ) || matches!(e, ClientError::Server(body) if body.code == stead_protocol::ErrorCode::ShuttingDown)
}

fn blockers(r: &Readiness) -> String {
    let names: Vec<String> = r.blockers.iter().map(|b| b.describe()).collect();
    names.join(", ")
}

fn seconds(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

impl Show for Readiness {
    fn human(&self) -> String {
        let mut out = if self.ready {
            format!("ready: a restart of {} cuts nothing now\n", self.service)
        } else {
            format!(
                "not ready: a restart of {} would cut (window {}):\n",
                self.service, self.window
            )
        };
        for b in &self.blockers {
            out.push_str(&format!("  {}\n", b.describe()));
        }
        for h in &self.wedged_holds {
            out.push_str(&format!(
                "  (wedged hold {} expired at {}: blocks nothing)\n",
                h.name,
                render::when(&h.expires_at)
            ));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}
