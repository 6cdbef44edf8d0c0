//! `stead show RUN`: every field of one run, and what its idempotency key holds: its
//! completed steps (by which attempt, when) and its checkpoint keys (not their values,
//! which `stead checkpoint get` prints).

use std::fmt::Write as _;
use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use stead_client::{Client, ClientError, Connection};
use stead_protocol::{ErrorCode, Run, Step, exit};

use super::output::{self, OutputArgs};
use super::render;
use super::runs::{self, or_dash};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (from `stead runs`)
    id: i64,
    #[command(flatten)]
    format: OutputArgs,
}

/// A run as `show` prints it: the run's fields, then its key's steps and checkpoint
/// keys when it has any (so a run without them reads as `run_get` answers it).
#[derive(Debug, Serialize)]
pub(crate) struct Shown {
    #[serde(flatten)]
    run: Run,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    steps: Vec<Step>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checkpoint_keys: Vec<String>,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let shown = shown(&mut super::connect(&client)?, args.id)?;
    output::show_with(&shown, args.format, || {
        render(&shown, Timestamp::now(), &TimeZone::system())
    })?;
    Ok(exit::SUCCESS)
}

/// Run `id` and its key's steps and checkpoint keys, as `show` prints them (and MCP's
/// `run_show` answers).
pub(crate) fn shown(conn: &mut Connection, id: i64) -> Result<Shown, ClientError> {
    let run = conn.run_get(id)?;
    let (steps, checkpoint_keys) = match conn.checkpoint_list(id) {
        Ok(all) => (
            all.steps,
            all.checkpoints.into_iter().map(|c| c.key).collect(),
        ),
        // A server of an earlier release keeps no checkpoints.
        Err(ClientError::Server(e)) if e.code == ErrorCode::UnknownMethod => Default::default(),
        Err(e) => return Err(e),
    };
    Ok(Shown {
        run,
        steps,
        checkpoint_keys,
    })
}

/// Aligned `key  value` lines, keyed by the JSON field names so the two outputs read
/// alike, times in zone `tz`; `duration` is the only derived line. Fields a run may not
/// have (parameters, queue, a resume's origin, ...) get a line only when it has them.
fn render(shown: &Shown, now: Timestamp, tz: &TimeZone) -> String {
    let run = &shown.run;
    let number = |n: Option<i64>| n.map_or_else(|| or_dash(None), |n| n.to_string());
    let when = |t: Option<&str>| t.map_or_else(|| or_dash(None), |t| render::when_in(t, tz));
    let mut lines: Vec<(&str, String)> = vec![
        ("id", run.id.to_string()),
        ("job", run.job.clone()),
        ("trigger", run.trigger.as_str().to_string()),
        ("status", run.status.as_str().to_string()),
        ("exit_code", number(run.exit_code.map(i64::from))),
        ("signal", number(run.signal.map(i64::from))),
        ("reason", or_dash(run.reason.as_deref())),
        ("attempt", run.attempt.to_string()),
        ("parent_id", number(run.parent_id)),
        ("scheduled_at", when(run.scheduled_at.as_deref())),
        ("created_at", when(Some(&run.created_at))),
        ("started_at", when(run.started_at.as_deref())),
        ("ended_at", when(run.ended_at.as_deref())),
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
    if let Some(next) = run.followed_by {
        lines.push(("followed_by", next.to_string()));
    }
    if let Some(why) = &run.caught_up {
        lines.push(("caught_up", why.clone()));
    }
    if let Some(note) = &run.wait_note {
        lines.push(("waited", note.clone()));
    }
    if let Some(trigger) = run.original_trigger {
        lines.push(("original_trigger", trigger.as_str().to_string()));
    }
    if let Some(resolution) = &run.resolution {
        lines.push(("resolution", resolution.clone()));
    }
    if let Some(params) = &run.params {
        for (key, value) in &params.env {
            lines.push(("params.env", format!("{key}={value}")));
        }
        if !params.args.is_empty() {
            let words: Vec<String> = params.args.iter().map(|a| render::quote(a)).collect();
            lines.push(("params.args", words.join(" ")));
        }
    }
    if let Some(queue) = &run.queue {
        lines.push(("queue", queue.clone()));
    }
    if let Some(waiting) = &run.waiting {
        lines.push(("waiting", waiting.clone()));
    }
    if let Some(at) = &run.not_before {
        lines.push(("not_before", render::when_in(at, tz)));
    }
    if run.slept_ms > 0 {
        let ms = i64::try_from(run.slept_ms).unwrap_or(i64::MAX);
        lines.push(("slept", render::elapsed(ms)));
    }
    if let Some(n) = run.ended_processes {
        lines.push(("ended_processes", n.to_string()));
    }
    if let Some(at) = &run.log_pruned_at {
        lines.push(("log_pruned_at", render::when_in(at, tz)));
    }
    for step in &shown.steps {
        lines.push((
            "step",
            format!(
                "{} (run {}, attempt {}, {})",
                step.name,
                step.run_id,
                step.attempt,
                render::when_in(&step.completed_at, tz)
            ),
        ));
    }
    if !shown.checkpoint_keys.is_empty() {
        lines.push(("checkpoint_keys", shown.checkpoint_keys.join(" ")));
    }
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

    fn plain(run: Run) -> Shown {
        Shown {
            run,
            steps: Vec::new(),
            checkpoint_keys: Vec::new(),
        }
    }

    #[test]
    fn steps_and_checkpoint_keys_end_the_lines() {
        let shown = Shown {
            run: sample_run(44, RunStatus::Running),
            steps: vec![Step {
                name: "fetch".into(),
                run_id: 43,
                attempt: 1,
                completed_at: "2026-11-30T09:00:02Z".into(),
            }],
            checkpoint_keys: vec!["draft".into(), "session".into()],
        };
        let out = render(
            &shown,
            "2026-11-30T10:00:00Z".parse().unwrap(),
            &TimeZone::UTC,
        );
        let tail: Vec<&str> = out.lines().rev().take(2).collect();
        assert_eq!(
            tail,
            [
                "checkpoint_keys  draft session",
                "step             fetch (run 43, attempt 1, 2026-11-30 09:00:02 UTC)",
            ],
            "{out}"
        );
        let json = serde_json::to_value(&shown).unwrap();
        assert_eq!(json["steps"][0]["name"], "fetch");
        assert_eq!(json["checkpoint_keys"][1], "session");
        let bare = serde_json::to_value(plain(sample_run(44, RunStatus::Running))).unwrap();
        assert!(bare.get("steps").is_none() && bare.get("checkpoint_keys").is_none());
    }

    #[test]
    fn every_field_has_a_line() {
        let mut run = sample_run(42, RunStatus::Failed);
        run.exit_code = Some(3);
        run.reason = Some("exited with code 3".into());
        let now = "2026-11-30T10:00:00Z".parse().unwrap();
        assert_eq!(
            render(&plain(run), now, &TimeZone::UTC),
            "id               42\n\
             job              backup\n\
             trigger          scheduled\n\
             status           failed\n\
             exit_code        3\n\
             signal           -\n\
             reason           exited with code 3\n\
             attempt          1\n\
             parent_id        -\n\
             scheduled_at     2026-11-30 09:00:00 UTC\n\
             created_at       2026-11-30 09:00:00 UTC\n\
             started_at       2026-11-30 09:00:00 UTC\n\
             ended_at         2026-11-30 09:00:04 UTC\n\
             duration         4.2s\n\
             idempotency_key  backup@2026-11-30T09:00:00Z#42\n\
             machine_id       m-1\n\
             boot_id          b-1\n\
             monitor_pid      4242\n\
             log_path         /state/logs/runs/42.log\n"
        );
    }

    #[test]
    fn parameters_queues_and_waits_get_lines_of_their_own() {
        let mut run = sample_run(43, RunStatus::Queued);
        run.trigger = stead_protocol::Trigger::Retry;
        run.params = Some(stead_protocol::RunParams {
            env: [("MODE".to_string(), "full".to_string())].into(),
            args: vec!["--since".into(), "two days".into()],
        });
        run.queue = Some("gpu".into());
        run.waiting = Some("its retry delay, until 2026-11-30T09:05:00Z".into());
        run.not_before = Some("2026-11-30T09:05:00.400Z".into());
        run.followed_by = Some(44);
        let out = render(
            &plain(run),
            "2026-11-30T10:00:00Z".parse().unwrap(),
            &TimeZone::UTC,
        );
        let tail: Vec<&str> = out.lines().skip(19).collect();
        assert_eq!(
            tail,
            [
                "followed_by      44",
                "params.env       MODE=full",
                "params.args      --since 'two days'",
                "queue            gpu",
                "waiting          its retry delay, until 2026-11-30T09:05:00Z",
                "not_before       2026-11-30 09:05:00 UTC",
            ],
            "{out}"
        );
    }
}
