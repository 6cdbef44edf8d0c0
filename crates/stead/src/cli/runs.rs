//! `stead runs`: the run table, newest first; and the pieces of a run's description
//! that `run`, `show` and `cancel` share (its one-line summary, exit and duration).

use std::path::Path;

use clap::ValueEnum;
use jiff::Timestamp;
use stead_client::Client;
use stead_protocol::{Run, RunFilter, RunStatus, Trigger, exit};

use super::output::{self, OutputArgs, Show};
use super::render::{self, NONE};

/// The REASON column is cut to this many characters; `stead show` has the whole text.
const REASON_WIDTH: usize = 40;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only runs of this job
    #[arg(long, value_name = "NAME")]
    job: Option<String>,
    /// Only runs with this status
    #[arg(long, value_enum, value_name = "STATUS")]
    status: Option<StatusArg>,
    /// At most this many runs
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    limit: u32,
    /// Leave out skipped rows (fires not run, overlaps)
    #[arg(long)]
    no_skipped: bool,
    #[command(flatten)]
    format: OutputArgs,
}

/// The run statuses as the command line spells them (as on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatusArg {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    Interrupted,
    Skipped,
}

impl From<StatusArg> for RunStatus {
    fn from(arg: StatusArg) -> Self {
        match arg {
            StatusArg::Queued => RunStatus::Queued,
            StatusArg::Running => RunStatus::Running,
            StatusArg::Succeeded => RunStatus::Succeeded,
            StatusArg::Failed => RunStatus::Failed,
            StatusArg::Cancelled => RunStatus::Cancelled,
            StatusArg::Interrupted => RunStatus::Interrupted,
            StatusArg::Skipped => RunStatus::Skipped,
        }
    }
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let runs = super::connect(&client)?.run_list(RunFilter {
        job: args.job,
        status: args.status.map(RunStatus::from),
        limit: Some(args.limit),
        before_id: None,
        no_skipped: args.no_skipped,
    })?;
    output::show(&runs, args.format)?;
    Ok(exit::SUCCESS)
}

impl Show for Vec<Run> {
    fn human(&self) -> String {
        render_runs(self, Timestamp::now())
    }
}

/// The `stead runs` table; `now` measures runs still going.
fn render_runs(runs: &[Run], now: Timestamp) -> String {
    if runs.is_empty() {
        return "no runs\n".to_string();
    }
    let rows = runs.iter().map(|run| {
        vec![
            run.id.to_string(),
            run.job.clone(),
            run.trigger.as_str().to_string(),
            run.status.as_str().to_string(),
            exit_cell(run),
            render::when_or_none(run.scheduled_at.as_deref()),
            render::when_or_none(run.started_at.as_deref()),
            duration(run, now).unwrap_or_else(|| NONE.to_string()),
            // A run that waits says what for until it has a reason of its own.
            render::truncate(
                run.reason
                    .as_deref()
                    .or(run.waiting.as_deref())
                    .unwrap_or(NONE),
                REASON_WIDTH,
            ),
        ]
    });
    render::table(
        &[
            "ID",
            "JOB",
            "TRIGGER",
            "STATUS",
            "EXIT",
            "SCHEDULED",
            "STARTED",
            "DURATION",
            "REASON",
        ],
        rows,
    )
}

pub fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or(NONE).to_string()
}

/// How the command ended: its exit code, `sig N`, or `-`.
pub fn exit_cell(run: &Run) -> String {
    match (run.exit_code, run.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("sig {signal}"),
        (None, None) => NONE.to_string(),
    }
}

/// From start to end, or to `now` for a run still going (shown with a `+`: it grows).
pub fn duration(run: &Run, now: Timestamp) -> Option<String> {
    let started: Timestamp = run.started_at.as_deref()?.parse().ok()?;
    match run.ended_at.as_deref() {
        Some(ended) => {
            let ended: Timestamp = ended.parse().ok()?;
            Some(render::elapsed(ms_between(started, ended)))
        }
        None if !run.status.is_terminal() => {
            Some(format!("{}+", render::elapsed(ms_between(started, now))))
        }
        None => None,
    }
}

fn ms_between(from: Timestamp, to: Timestamp) -> i64 {
    let ms = to.as_millisecond() - from.as_millisecond();
    ms.max(0)
}

/// One line about a run: `run 42 of backup: failed: exited with code 3`.
pub fn summary(run: &Run) -> String {
    let mut line = format!("run {} of {}: {}", run.id, run.job, run.status.as_str());
    if run.trigger == Trigger::Retry {
        line = format!(
            "run {} of {} (retry, attempt {}): {}",
            run.id,
            run.job,
            run.attempt,
            run.status.as_str()
        );
    }
    if let Some(waiting) = &run.waiting {
        line.push_str(&format!(", waiting for {waiting}"));
    }
    match (&run.reason, run.exit_code, run.signal) {
        // A reason that begins with the status (`interrupted: ...`) says it once.
        (Some(reason), _, _) => match reason.strip_prefix(run.status.as_str()) {
            Some(rest) if rest.starts_with(':') => line.push_str(rest),
            _ => line.push_str(&format!(": {reason}")),
        },
        (None, Some(code), _) if run.status != RunStatus::Succeeded => {
            line.push_str(&format!(" (exit code {code})"));
        }
        (None, None, Some(signal)) => line.push_str(&format!(" (signal {signal})")),
        _ => {}
    }
    line
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A run as the server would send it, for rendering tests.
    pub fn sample_run(id: i64, status: RunStatus) -> Run {
        Run {
            id,
            job: "backup".into(),
            trigger: Trigger::Scheduled,
            status,
            exit_code: None,
            signal: None,
            reason: None,
            attempt: 1,
            parent_id: None,
            idempotency_key: format!("backup@2026-11-30T09:00:00Z#{id}"),
            machine_id: "m-1".into(),
            boot_id: "b-1".into(),
            monitor_pid: Some(4242),
            scheduled_at: Some("2026-11-30T09:00:00Z".into()),
            created_at: "2026-11-30T09:00:00.010Z".into(),
            started_at: (status != RunStatus::Queued && status != RunStatus::Skipped)
                .then(|| "2026-11-30T09:00:00.020Z".into()),
            ended_at: status
                .is_terminal()
                .then(|| "2026-11-30T09:00:04.270Z".into()),
            log_path: format!("/state/logs/runs/{id}.log"),
            original_trigger: None,
            resolution: None,
            ended_processes: None,
            log_pruned_at: None,
            params: None,
            queue: None,
            waiting: None,
            not_before: None,
            slept_ms: 0,
            followed_by: None,
            waited_ms: None,
            wait_note: None,
            caught_up: None,
        }
    }

    fn now() -> Timestamp {
        "2026-11-30T09:01:00.020Z".parse().unwrap()
    }

    #[test]
    fn exits_show_codes_and_signals() {
        let mut run = sample_run(1, RunStatus::Failed);
        assert_eq!(exit_cell(&run), "-");
        run.exit_code = Some(3);
        assert_eq!(exit_cell(&run), "3");
        run.exit_code = None;
        run.signal = Some(9);
        assert_eq!(exit_cell(&run), "sig 9");
    }

    #[test]
    fn durations_cover_ended_running_and_queued_runs() {
        assert_eq!(
            duration(&sample_run(1, RunStatus::Succeeded), now()).as_deref(),
            Some("4.2s")
        );
        assert_eq!(
            duration(&sample_run(2, RunStatus::Running), now()).as_deref(),
            Some("1m00s+")
        );
        assert_eq!(duration(&sample_run(3, RunStatus::Queued), now()), None);
        assert_eq!(duration(&sample_run(4, RunStatus::Skipped), now()), None);
    }

    #[test]
    fn summaries_say_why() {
        let mut run = sample_run(42, RunStatus::Queued);
        assert_eq!(summary(&run), "run 42 of backup: queued");
        run.status = RunStatus::Succeeded;
        run.exit_code = Some(0);
        assert_eq!(summary(&run), "run 42 of backup: succeeded");
        run.status = RunStatus::Failed;
        run.exit_code = Some(3);
        assert_eq!(summary(&run), "run 42 of backup: failed (exit code 3)");
        run.reason = Some("exited with code 3".into());
        assert_eq!(
            summary(&run),
            "run 42 of backup: failed: exited with code 3"
        );
        let mut retry = sample_run(44, RunStatus::Queued);
        retry.trigger = Trigger::Retry;
        retry.attempt = 2;
        retry.waiting = Some("its retry delay, until 2026-11-30T09:00:30Z".into());
        assert_eq!(
            summary(&retry),
            "run 44 of backup (retry, attempt 2): queued, waiting for its retry delay, until 2026-11-30T09:00:30Z"
        );
        let mut cut = sample_run(45, RunStatus::Interrupted);
        cut.reason = Some("interrupted: its monitor (pid 9) is gone".into());
        assert_eq!(
            summary(&cut),
            "run 45 of backup: interrupted: its monitor (pid 9) is gone"
        );
        let mut skipped = sample_run(43, RunStatus::Skipped);
        skipped.reason = Some("run 41 is still running".into());
        assert_eq!(
            summary(&skipped),
            "run 43 of backup: skipped: run 41 is still running"
        );
    }

    #[test]
    fn the_run_table_has_every_column() {
        let mut failed = sample_run(7, RunStatus::Failed);
        failed.signal = Some(15);
        failed.reason = Some("timed out after 5m; terminated with SIGTERM, then more".into());
        let running = sample_run(8, RunStatus::Running);
        let mut queued = sample_run(9, RunStatus::Queued);
        queued.trigger = stead_protocol::Trigger::OnDemand;
        queued.scheduled_at = None;
        let out = render_runs(&[queued, running, failed], now());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            [
                "ID",
                "JOB",
                "TRIGGER",
                "STATUS",
                "EXIT",
                "SCHEDULED",
                "STARTED",
                "DURATION",
                "REASON"
            ]
        );
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            [
                "9",
                "backup",
                "on_demand",
                "queued",
                "-",
                "-",
                "-",
                "-",
                "-"
            ]
        );
        assert!(
            lines[2].contains("running") && lines[2].contains("1m00s+"),
            "{out}"
        );
        assert!(
            lines[3].contains("sig 15") && lines[3].contains("4.2s"),
            "{out}"
        );
        assert!(
            lines[3].ends_with("timed out after 5m; terminated with SIG…"),
            "{out}"
        );
        assert_eq!(render_runs(&[], now()), "no runs\n");
    }

    #[test]
    fn status_names_match_the_wire() {
        for status in RunStatus::ALL {
            let arg = StatusArg::from_str(status.as_str(), false).unwrap();
            assert_eq!(RunStatus::from(arg), status);
        }
        assert!(StatusArg::from_str("done", false).is_err());
    }
}
