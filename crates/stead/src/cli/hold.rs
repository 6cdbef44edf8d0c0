//! `stead hold acquire|release|ls`: "I am mid-work on this service".

use std::path::Path;

use clap::Subcommand;
use stead_client::Client;
use stead_protocol::{Hold, HoldSpec, exit};

use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: HoldCommand,
}

#[derive(Debug, Subcommand)]
enum HoldCommand {
    /// Hold a service (a restart of it waits); acquiring a held name renews it
    Acquire(AcquireArgs),
    /// Release a hold
    Release(ReleaseArgs),
    /// List holds, live and wedged
    Ls(OutputArgs),
}

#[derive(Debug, clap::Args)]
struct AcquireArgs {
    /// The hold's name (one per piece of work, e.g. a session's id)
    name: String,
    /// The service held [default: stead]
    #[arg(long, default_value = stead_protocol::STEAD_SERVICE)]
    service: String,
    /// How long the hold lasts unless renewed; past it, it is wedged and blocks nothing
    #[arg(long, value_name = "DURATION")]
    ttl: String,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, clap::Args)]
struct ReleaseArgs {
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
    match args.command {
        HoldCommand::Acquire(a) => {
            let hold = conn.hold_acquire(&HoldSpec {
                name: a.name,
                service: a.service,
                ttl: a.ttl,
            })?;
            output::show_with(&hold, a.format, || said("holding", &hold))?;
        }
        HoldCommand::Release(r) => {
            let hold = conn.hold_release(&r.name)?;
            output::show_with(&hold, r.format, || said("released", &hold))?;
        }
        HoldCommand::Ls(format) => output::show(&conn.hold_list()?, format)?,
    }
    Ok(exit::SUCCESS)
}

/// `VERB NAME on SERVICE (until TIME)`.
fn said(verb: &str, hold: &Hold) -> String {
    format!(
        "{verb} {} on {} (until {})\n",
        hold.name,
        hold.service,
        render::when(&hold.expires_at)
    )
}

/// The `stead hold ls` table.
impl Show for Vec<Hold> {
    fn human(&self) -> String {
        let rows = self.iter().map(|h| {
            vec![
                h.name.clone(),
                h.service.clone(),
                if h.wedged { "wedged" } else { "live" }.to_string(),
                render::when(&h.acquired_at),
                render::when(&h.expires_at),
            ]
        });
        render::table(&["NAME", "SERVICE", "STATE", "ACQUIRED", "EXPIRES"], rows)
    }
}
