//! `stead queue set|ls|rm`: named limits on how many runs of their jobs go at once on a
//! host. A job joins one with `--queue NAME`; runs beyond the limit wait `queued`, in
//! order, and none is skipped for it.

use std::path::Path;

use clap::Subcommand;
use stead_client::Client;
use stead_protocol::{Empty, Queue, QueueName, QueueSpec, exit, method};

use super::output::{self, OutputArgs, Show};
use super::render::{self, NONE};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: QueueCommand,
}

#[derive(Debug, Subcommand)]
enum QueueCommand {
    /// Create a queue or change its limit
    Set(SetArgs),
    /// List the queues, their jobs, and their runs going and waiting on this host
    Ls(OutputArgs),
    /// Remove a queue (refused while a job names it)
    Rm(NameArgs),
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// The queue's name
    name: String,
    /// At most this many runs of its jobs at once on a host
    #[arg(long, value_name = "N")]
    parallel: u32,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The queue's name
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
    match args.command {
        QueueCommand::Set(set) => {
            let queue = conn.call::<method::QueueSet>(&QueueSpec {
                name: set.name,
                parallel: set.parallel,
            })?;
            output::show_with(&queue, set.format, || {
                format!(
                    "queue {}: at most {} run(s) at once on a host\n",
                    queue.spec.name, queue.spec.parallel
                )
            })?;
        }
        QueueCommand::Ls(format) => {
            output::show(&conn.call::<method::QueueList>(&Empty {})?, format)?;
        }
        QueueCommand::Rm(rm) => {
            let queue = conn.call::<method::QueueRemove>(&QueueName { name: rm.name })?;
            output::show_with(&queue, rm.format, || {
                format!("removed queue {}\n", queue.spec.name)
            })?;
        }
    }
    Ok(exit::SUCCESS)
}

impl Show for Vec<Queue> {
    fn human(&self) -> String {
        render_list(self)
    }
}

/// The `stead queue ls` table.
fn render_list(queues: &[Queue]) -> String {
    if queues.is_empty() {
        return "no queues; add one with `stead queue set NAME --parallel N`\n".to_string();
    }
    let rows = queues.iter().map(|q| {
        vec![
            q.spec.name.clone(),
            q.spec.parallel.to_string(),
            q.running.to_string(),
            q.waiting.to_string(),
            if q.jobs.is_empty() {
                NONE.to_string()
            } else {
                q.jobs.join(", ")
            },
        ]
    });
    render::table(&["NAME", "PARALLEL", "RUNNING", "WAITING", "JOBS"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_each_queues_limit_load_and_jobs() {
        let queue = Queue {
            spec: QueueSpec {
                name: "gpu".into(),
                parallel: 2,
            },
            jobs: vec!["render".into(), "train".into()],
            running: 2,
            waiting: 4,
        };
        let out = render_list(&[queue]);
        let rows: Vec<Vec<&str>> = out
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows[0], ["NAME", "PARALLEL", "RUNNING", "WAITING", "JOBS"]);
        assert_eq!(rows[1], ["gpu", "2", "2", "4", "render,", "train"]);
        assert_eq!(render_list(&[]).lines().count(), 1);
    }
}
