//! `stead hosts`: the hosts sharing the ledger, which one leads the scheduler, each one's
//! last heartbeat and runs in flight.

use std::path::Path;

use stead_client::Client;
use stead_protocol::limits::CLOCK_SKEW_WARN_MS;
use stead_protocol::{HostsResult, exit};

use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let hosts = super::connect(&client)?.hosts()?;
    output::show(&hosts, args.format)?;
    Ok(exit::SUCCESS)
}

impl Show for HostsResult {
    fn human(&self) -> String {
        let mut table = comfy_table::Table::new();
        table
            .load_preset(comfy_table::presets::NOTHING)
            .set_header([
                "HOST",
                "STATE",
                "LEADER",
                "LAST HEARTBEAT",
                "IN FLIGHT",
                "CLOCK",
                "MACHINE",
            ]);
        let mut skewed = Vec::new();
        for host in &self.hosts {
            if let Some(off) = host
                .clock_offset_ms
                .filter(|o| o.abs() > CLOCK_SKEW_WARN_MS)
            {
                skewed.push(format!(
                    "warning: {}'s clock is {} (times it shows are off by as much; leases follow the database's clock)\n",
                    host.name,
                    render::clock_skew(off)
                ));
            }
            table.add_row([
                host.name.clone(),
                host.state.clone(),
                if host.leader { "leader" } else { "" }.to_string(),
                render::when_or_none(host.last_heartbeat.as_deref()),
                host.in_flight.to_string(),
                host.clock_offset_ms
                    .map_or_else(|| "-".into(), render::clock_offset),
                host.machine_id.clone(),
            ]);
        }
        let ledger = if self.shared {
            format!("shared ledger {}", self.ledger)
        } else {
            format!("ledger {} (this host only)", self.ledger)
        };
        let leader = match &self.leader {
            Some(_) => String::new(),
            None => {
                "\nno host leads the scheduler right now: the next heartbeat elects one\n".into()
            }
        };
        format!("{ledger}\n{table}\n{leader}{}", skewed.concat())
    }
}
