//! `stead service add|ls|rm`: the services runs depend on.

use std::path::Path;

use clap::Subcommand;
use stead_client::Client;
use stead_protocol::{Service, ServiceSpec, exit};

use super::output::{self, OutputArgs, Show};
use super::render::{self, NONE};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ServiceCommand,
}

#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// Declare a service: how to restart it, how to tell it is ready, how the system knows it
    Add(AddArgs),
    /// List services (the built-in `stead` first)
    Ls(OutputArgs),
    /// Remove a service (refused while a job depends on it)
    Rm(NameArgs),
}

#[derive(Debug, clap::Args)]
struct AddArgs {
    /// The service's name
    name: String,
    /// A shell command that restarts it (used by `stead restart --service NAME`)
    #[arg(long, value_name = "CMD")]
    restart: Option<String>,
    /// Ready when this shell command exits 0, or this http:// URL answers 2xx
    #[arg(long, value_name = "CMD|URL")]
    ready: Option<String>,
    /// Its systemd unit (the guard refuses `systemctl restart|stop|kill UNIT` ungated)
    #[arg(long, value_name = "UNIT")]
    systemd_unit: Option<String>,
    /// Its launchd label (the guard refuses `launchctl kickstart -k|bootout|…` ungated)
    #[arg(long, value_name = "LABEL")]
    launchd_label: Option<String>,
    /// Its process name (the guard refuses `kill`/`pkill`/`killall` of it ungated)
    #[arg(long, value_name = "NAME")]
    process: Option<String>,
    #[command(flatten)]
    format: OutputArgs,
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    name: String,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let mut conn = super::connect(&Client::for_state_dir(dir)?)?;
    match args.command {
        ServiceCommand::Add(add) => {
            let format = add.format;
            let service = conn.service_add(&ServiceSpec {
                name: add.name,
                restart: add.restart,
                ready: add.ready,
                systemd_unit: add.systemd_unit,
                launchd_label: add.launchd_label,
                process: add.process,
            })?;
            output::show_with(&service, format, || {
                format!("added service {}\n", service.spec.name)
            })?;
        }
        ServiceCommand::Ls(format) => output::show(&conn.service_list()?, format)?,
        ServiceCommand::Rm(rm) => {
            let service = conn.service_remove(&rm.name)?;
            output::show_with(&service, rm.format, || {
                format!("removed service {}\n", service.spec.name)
            })?;
        }
    }
    Ok(exit::SUCCESS)
}

/// The `stead service ls` table.
impl Show for Vec<Service> {
    fn human(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .iter()
            .map(|s| {
                vec![
                    s.spec.name.clone(),
                    if s.restarting { "restarting" } else { "-" }.to_string(),
                    s.spec.ready.clone().unwrap_or_else(|| NONE.into()),
                    s.spec.restart.clone().unwrap_or_else(|| NONE.into()),
                    known_as(&s.spec),
                    if s.dependents.is_empty() {
                        NONE.into()
                    } else {
                        s.dependents.join(", ")
                    },
                ]
            })
            .collect();
        render::table(
            &[
                "NAME",
                "STATE",
                "READY",
                "RESTART",
                "KNOWN AS",
                "DEPENDENT JOBS",
            ],
            rows,
        )
    }
}

fn known_as(spec: &ServiceSpec) -> String {
    let names: Vec<String> = [
        spec.systemd_unit.as_ref().map(|u| format!("unit {u}")),
        spec.launchd_label.as_ref().map(|l| format!("label {l}")),
        spec.process.as_ref().map(|p| format!("process {p}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if names.is_empty() {
        NONE.into()
    } else {
        names.join(", ")
    }
}
