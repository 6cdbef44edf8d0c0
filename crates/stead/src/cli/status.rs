//! `stead status`: the serving server, started on demand.

use std::path::Path;

use stead_client::Client;
use stead_protocol::limits::CLOCK_SKEW_WARN_MS;
use stead_protocol::{StatusResult, exit};

use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let status = super::connect(&client)?.status()?;
    output::show(&status, args.format)?;
    Ok(exit::SUCCESS)
}

impl Show for StatusResult {
    fn human(&self) -> String {
        let mut text = format!(
            "stead {version} is serving {dir}\n  server   {id} (pid {pid}, epoch {epoch})\n  started  {started}\n  lease    valid until {lease}\n  socket   {socket}\n  ledger   {ledger}\n",
            version = self.version,
            dir = self.state_dir,
            id = self.server_id,
            pid = self.pid,
            epoch = self.epoch,
            started = render::when(&self.started_at),
            lease = render::when(&self.lease_expires_at),
            socket = self.socket,
            ledger = self.ledger,
        );
        if let Some(url) = &self.http {
            text.push_str(&format!("  http     {url} (`stead dashboard` opens it)\n"));
        }
        if let Some(disk) = &self.disk {
            text.push_str(&format!(
                "  disk     {} free of {}\n",
                render::bytes(disk.free_bytes),
                render::bytes(disk.total_bytes)
            ));
            if let Some(warning) = render::disk_warning(disk) {
                text.push_str(&format!("warning: {warning}\n"));
            }
        }
        if let Some(off) = self.clock_offset_ms {
            text.push_str(&format!(
                "  clock    {} from the ledger's database\n",
                render::clock_offset(off)
            ));
            if off.abs() > CLOCK_SKEW_WARN_MS {
                text.push_str(&format!(
                    "warning: this host's clock is {}; stead follows the database's clock, but times this host's other programs show are off by as much\n",
                    render::clock_skew(off)
                ));
            }
        }
        for overdue in &self.overdue {
            text.push_str(&format!(
                "overdue: {} has had no success within {} (since {})\n",
                overdue.job,
                overdue.expect_within,
                render::when(&overdue.since)
            ));
        }
        text
    }
}
