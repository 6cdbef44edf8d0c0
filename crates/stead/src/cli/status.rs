//! `stead status`: the serving server, started on demand.

use std::path::Path;

use stead_client::Client;
use stead_protocol::limits::CLOCK_SKEW_WARN_MS;
use stead_protocol::{StatusResult, exit};

use super::{output, render};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the status as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let status = super::connect(&client)?.status()?;
    if args.json {
        output::json(&status)?;
    } else {
        output::text(&render(&status))?;
    }
    Ok(exit::SUCCESS)
}

fn render(s: &StatusResult) -> String {
    let mut text = format!(
        "stead {version} is serving {dir}\n  server   {id} (pid {pid}, epoch {epoch})\n  started  {started}\n  lease    valid until {lease}\n  socket   {socket}\n  ledger   {ledger}\n",
        version = s.version,
        dir = s.state_dir,
        id = s.server_id,
        pid = s.pid,
        epoch = s.epoch,
        started = render::when(&s.started_at),
        lease = render::when(&s.lease_expires_at),
        socket = s.socket,
        ledger = s.ledger,
    );
    if let Some(url) = &s.http {
        text.push_str(&format!("  http     {url} (`stead dashboard` opens it)\n"));
    }
    if let Some(disk) = &s.disk {
        text.push_str(&format!(
            "  disk     {} free of {}\n",
            render::bytes(disk.free_bytes),
            render::bytes(disk.total_bytes)
        ));
        if let Some(warning) = render::disk_warning(disk) {
            text.push_str(&format!("warning: {warning}\n"));
        }
    }
    if let Some(off) = s.clock_offset_ms {
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
    text
}
