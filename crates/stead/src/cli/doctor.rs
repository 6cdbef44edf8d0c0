//! `stead doctor`: read-only diagnosis of the state directory.

use std::path::Path;

use crate::doctor::{self, Health, Report};
use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_protocol::exit;

use super::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the diagnosis as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let paths = StatePaths::resolve(dir)?;
    let config = Config::load(&paths.config())?;
    let report = doctor::diagnose(&paths, &config, &stead_core::clock::system());
    if args.json {
        output::json(&report)?;
    } else {
        output::text(&render(&report))?;
    }
    Ok(if report.health == Health::Problem {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

fn render(report: &Report) -> String {
    let mut out = format!("state directory {}\n", report.state_dir);
    for check in &report.checks {
        let mark = match check.health {
            Health::Ok => "ok     ",
            Health::Warning => "warning",
            Health::Problem => "PROBLEM",
        };
        out.push_str(&format!("  {mark}  {:<10} {}\n", check.name, check.summary));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("           {:<10} fix: {fix}\n", ""));
        }
    }
    out
}
