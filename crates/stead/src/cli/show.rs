//! `stead show RUN`: every field of one run.

use std::fmt::Write as _;
use std::path::Path;

use jiff::Timestamp;
use stead_client::Client;
use stead_protocol::{Run, exit};

use super::output;
use super::runs::{self, or_dash};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (from `stead runs`)
    id: i64,
    /// Print the run as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let run = super::connect(&client)?.run_get(args.id)?;
    if args.json {
        output::json(&run)?;
    } else {
        output::text(&render(&run, Timestamp::now()))?;
    }
    Ok(exit::SUCCESS)
}

/// Aligned `key  value` lines, keyed by the JSON field names so the two outputs read
/// alike; `duration` is the only derived line.
fn render(run: &Run, now: Timestamp) -> String {
    let number = |n: Option<i64>| n.map_or_else(|| or_dash(None), |n| n.to_string());
    let lines: [(&str, String); 19] = [
        ("id", run.id.to_string()),
        ("job", run.job.clone()),
        ("trigger", run.trigger.as_str().to_string()),
        ("status", run.status.as_str().to_string()),
        ("exit_code", number(run.exit_code.map(i64::from))),
        ("signal", number(run.signal.map(i64::from))),
        ("reason", or_dash(run.reason.as_deref())),
        ("attempt", run.attempt.to_string()),
        ("parent_id", number(run.parent_id)),
        ("scheduled_at", or_dash(run.scheduled_at.as_deref())),
        ("created_at", run.created_at.clone()),
        ("started_at", or_dash(run.started_at.as_deref())),
        ("ended_at", or_dash(run.ended_at.as_deref())),
        (
            "duration",
            runs::duration(run, now).unwrap_or_else(|| or_dash(None)),
        ),
        ("idempotency_key", run.idempotency_key.clone()),
        ("machine_id", run.machine_id.clone()),
        ("boot_id", run.boot_id.clone()),
        ("monitor_pid", number(run.monitor_pid.map(i64::from))),
        ("log_path", run.log_path.clone()),
    ];
    let mut out = String::new();
    for (key, value) in lines {
        let _ = writeln!(out, "{key:<16} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use stead_protocol::RunStatus;

    use super::*;
    use crate::cli::runs::tests::sample_run;

    #[test]
    fn every_field_has_a_line() {
        let mut run = sample_run(42, RunStatus::Failed);
        run.exit_code = Some(3);
        run.reason = Some("exited with code 3".into());
        let now = "2026-11-30T10:00:00Z".parse().unwrap();
        assert_eq!(
            render(&run, now),
            "id               42\n\
             job              backup\n\
             trigger          scheduled\n\
             status           failed\n\
             exit_code        3\n\
             signal           -\n\
             reason           exited with code 3\n\
             attempt          1\n\
             parent_id        -\n\
             scheduled_at     2026-11-30T09:00:00Z\n\
             created_at       2026-11-30T09:00:00.010Z\n\
             started_at       2026-11-30T09:00:00.020Z\n\
             ended_at         2026-11-30T09:00:04.270Z\n\
             duration         4.2s\n\
             idempotency_key  backup@2026-11-30T09:00:00Z#42\n\
             machine_id       m-1\n\
             boot_id          b-1\n\
             monitor_pid      4242\n\
             log_path         /state/logs/runs/42.log\n"
        );
    }
}
