//! `stead cancel RUN`: cancel a queued or running run.

use std::path::Path;

use stead_client::Client;
use stead_protocol::{Run, exit};

use super::output::{self, OutputArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (from `stead runs`)
    id: i64,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let run = super::connect(&client)?.run_cancel(args.id)?;
    output::show_with(&run, args.format, || render(&run))?;
    Ok(exit::SUCCESS)
}

/// A running command is stopped by its monitor (SIGTERM, then SIGKILL after a grace
/// period), so the answer may come before the end: say so rather than claim it ended.
fn render(run: &Run) -> String {
    if run.status.is_terminal() {
        let ended = match run.ended_processes {
            Some(1) => " (1 process ended)".to_string(),
            Some(n) => format!(" ({n} processes ended)"),
            None => String::new(),
        };
        format!("run {}: {}{ended}\n", run.id, run.status.as_str())
    } else {
        format!(
            "run {}: cancel requested (still {})\n",
            run.id,
            run.status.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use stead_protocol::RunStatus;

    use super::*;
    use crate::cli::runs::tests::sample_run;

    #[test]
    fn says_whether_the_run_has_ended() {
        assert_eq!(
            render(&sample_run(42, RunStatus::Cancelled)),
            "run 42: cancelled\n"
        );
        let ended = Run {
            ended_processes: Some(3),
            ..sample_run(42, RunStatus::Cancelled)
        };
        assert_eq!(render(&ended), "run 42: cancelled (3 processes ended)\n");
        assert_eq!(
            render(&sample_run(42, RunStatus::Running)),
            "run 42: cancel requested (still running)\n"
        );
    }
}
