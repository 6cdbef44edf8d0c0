//! `stead prune [--dry-run] [--json]`: the retention rules applied now, and what they
//! removed (or would remove): runs and log files by job, bytes of logs, and with `--json`
//! the ids. The rules are in docs/ledger.md, "Retention".

use std::path::Path;

use stead_client::Client;
use stead_protocol::{PruneResult, exit};

use super::output::{self, OutputArgs, Show};

#[derive(Debug, clap::Args)]
#[command(mut_arg("json", |json| json.help("Print the result as JSON, with the ids of the runs and logs removed")))]
pub struct Args {
    /// Say what would be removed; remove nothing
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let result = super::connect(&client)?.prune(args.dry_run)?;
    output::show(&result, args.format)?;
    Ok(exit::SUCCESS)
}

impl Show for PruneResult {
    fn human(&self) -> String {
        let verb = if self.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let mut out = format!(
            "{verb} {} run{} and {} more log{} ({})\n",
            self.runs,
            plural(self.runs),
            self.logs,
            plural(self.logs),
            bytes(self.log_bytes)
        );
        for job in &self.jobs {
            out.push_str(&format!(
                "  {}: {} run{}, {} log{} ({})\n",
                job.job,
                job.runs,
                plural(job.runs),
                job.logs,
                plural(job.logs),
                bytes(job.log_bytes)
            ));
        }
        out
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Bytes in the largest binary unit that keeps a whole number before the point.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use stead_protocol::PrunedJob;

    #[test]
    fn a_prune_is_told_by_job() {
        let r = PruneResult {
            dry_run: true,
            jobs: vec![PrunedJob {
                job: "backup".into(),
                runs: 7,
                logs: 1,
                log_bytes: 3 * 1024 * 1024,
            }],
            runs: 7,
            logs: 1,
            log_bytes: 3 * 1024 * 1024,
            run_ids: vec![1, 2, 3, 4, 5, 6, 7],
            log_ids: vec![8],
            ids_truncated: false,
            longest_batch_ms: 3,
        };
        assert_eq!(
            r.human(),
            "would remove 7 runs and 1 more log (3.0 MiB)\n  backup: 7 runs, 1 log (3.0 MiB)\n"
        );
        assert_eq!(bytes(512), "512 B");
    }
}
