//! `stead doctor`: read-only diagnosis of the state directory.

use std::path::Path;

use crate::doctor::{self, Health, Report};
use stead_client::config::Config;
use stead_client::paths::StatePaths;
use stead_protocol::exit;

use super::output::{self, OutputArgs, Show};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let paths = StatePaths::resolve(dir)?;
    let config = Config::load(&paths.config())?;
    let report = doctor::diagnose(&paths, &config, &stead_core::clock::system());
    output::show(&report, args.format)?;
    Ok(if report.health == Health::Problem {
        exit::FAILURE
    } else {
        exit::SUCCESS
    })
}

impl Show for Report {
    fn human(&self) -> String {
        let mut out = format!("state directory {}\n", self.state_dir);
        for check in &self.checks {
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
}
