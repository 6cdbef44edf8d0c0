//! `stead sleeps`: the sleeps the machine woke from, newest first, as the server put
//! them on the ledger (when, how long, and whether the wall clock was set besides).

use std::path::Path;

use stead_client::Client;
use stead_protocol::{Sleep, SleepFilter, exit, method};

use super::output::{self, OutputArgs, Show};
use super::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// At most this many (default 50)
    #[arg(long, value_name = "N")]
    limit: Option<u32>,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let sleeps =
        super::connect(&client)?.call::<method::SleepList>(&SleepFilter { limit: args.limit })?;
    output::show(&Sleeps(sleeps), args.format)?;
    Ok(exit::SUCCESS)
}

/// The listing, as `--json` prints it: an array.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Sleeps(Vec<Sleep>);

impl Show for Sleeps {
    fn human(&self) -> String {
        if self.0.is_empty() {
            return "no sleeps recorded\n".into();
        }
        render::table(
            &["ID", "HOST", "FROM", "TO", "SLEPT", "CLOCK SET"],
            self.0.iter().map(|s| {
                vec![
                    s.id.to_string(),
                    s.host.clone(),
                    render::when(&s.started_at),
                    render::when(&s.ended_at),
                    render::elapsed(i64::try_from(s.duration_ms).unwrap_or(i64::MAX)),
                    s.wall_set_ms.map_or_else(String::new, |ms| {
                        format!(
                            "{}{}",
                            if ms < 0 { "-" } else { "+" },
                            render::elapsed(ms.abs())
                        )
                    }),
                ]
            }),
        )
    }
}
