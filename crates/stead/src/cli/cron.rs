//! `stead cron next`: preview a cron expression's next fire times in a zone. Local
//! only: the same schedule code the server uses, no server needed.

use std::fmt::Write as _;
use std::path::Path;

use clap::Subcommand;
use jiff::{Timestamp, Zoned};
use stead_core::schedule;
use stead_protocol::exit;

use super::output::{self, OutputArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: CronCommand,
}

#[derive(Debug, Subcommand)]
enum CronCommand {
    /// Print the next fire times of a cron expression, with their UTC offsets
    Next(NextArgs),
}

#[derive(Debug, clap::Args)]
#[command(mut_arg("json", |json| json.help("Print the fire times as a JSON array of RFC 3339 strings")))]
struct NextArgs {
    /// Five cron fields, quoted as one argument: "0 20 * * *"
    expr: String,
    /// The IANA time zone to evaluate it in [default: the machine's zone]
    #[arg(long, value_name = "ZONE")]
    tz: Option<String>,
    /// Start strictly after this instant, RFC 3339 with an offset [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = instant)]
    after: Option<Timestamp>,
    /// How many fire times to print
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    count: u32,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(_dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let CronCommand::Next(args) = args.command;
    let zone = args.tz.unwrap_or_else(schedule::machine_zone);
    let after = args.after.unwrap_or_else(Timestamp::now);
    let fires = schedule::next_fires(&args.expr, &zone, after, args.count as usize)?;
    let times: Vec<String> = fires.iter().map(rfc3339).collect();
    output::show_with(&times, args.format, || render(&fires, after))?;
    Ok(exit::SUCCESS)
}

/// `--after`: an instant with an offset (`Z`, `+09:00`), optionally with a zone
/// annotation as jiff prints zoned times (`2026-03-29T03:00:00+02:00[Europe/Berlin]`).
fn instant(s: &str) -> Result<Timestamp, String> {
    s.parse::<Timestamp>().map_err(|e| {
        format!("{s:?} is not an RFC 3339 time with an offset, like 2026-11-30T09:00:00Z: {e}")
    })
}

/// A fire as RFC 3339 with its own offset, so a time in a daylight-saving overlap is
/// never ambiguous.
fn rfc3339(fire: &Zoned) -> String {
    fire.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// One line per fire: the time, its weekday, and how long after `after` it comes.
fn render(fires: &[Zoned], after: Timestamp) -> String {
    if fires.is_empty() {
        return "no fire times before the year 5000\n".to_string();
    }
    let mut out = String::new();
    for fire in fires {
        let secs = fire.timestamp().as_second() - after.as_second();
        let _ = writeln!(
            out,
            "{}  ({}, in {})",
            rfc3339(fire),
            fire.strftime("%a"),
            until(secs)
        );
    }
    out
}

/// A rough distance in time: the largest unit and the one below it, cut down, not
/// rounded (`2d 4h`, `11h`, `5m 30s`).
fn until(secs: i64) -> String {
    const UNITS: [(&str, i64); 4] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)];
    let secs = secs.max(0);
    let Some(first) = UNITS.iter().position(|&(_, size)| secs >= size) else {
        return "0s".to_string();
    };
    let (name, size) = UNITS[first];
    let mut out = format!("{}{name}", secs / size);
    if let Some(&(next_name, next_size)) = UNITS.get(first + 1) {
        let rest = secs % size / next_size;
        if rest > 0 {
            let _ = write!(out, " {rest}{next_name}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fires(expr: &str, zone: &str, after: &str, count: usize) -> (Vec<Zoned>, Timestamp) {
        let after = instant(after).unwrap();
        (
            schedule::next_fires(expr, zone, after, count).unwrap(),
            after,
        )
    }

    #[test]
    fn next_fires_print_with_their_local_offset() {
        let (fires, after) = fires("0 20 * * *", "Asia/Seoul", "2026-11-30T00:00:00Z", 3);
        assert_eq!(
            render(&fires, after),
            "2026-11-30T20:00:00+09:00  (Mon, in 11h)\n\
             2026-12-01T20:00:00+09:00  (Tue, in 1d 11h)\n\
             2026-12-02T20:00:00+09:00  (Wed, in 2d 11h)\n"
        );
        let json: Vec<String> = fires.iter().map(rfc3339).collect();
        assert_eq!(json[0], "2026-11-30T20:00:00+09:00");
    }

    #[test]
    fn offsets_change_across_daylight_saving() {
        let (fires, _) = fires("30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 3);
        let times: Vec<String> = fires.iter().map(rfc3339).collect();
        assert_eq!(
            times,
            [
                "2026-03-28T02:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-30T02:30:00+02:00",
            ]
        );
    }

    #[test]
    fn after_accepts_offsets_and_zone_annotations() {
        let utc = instant("2026-11-30T00:00:00Z").unwrap();
        assert_eq!(instant("2026-11-30T09:00:00+09:00").unwrap(), utc);
        assert_eq!(
            instant("2026-11-30T09:00:00+09:00[Asia/Seoul]").unwrap(),
            utc
        );
        let err = instant("2026-11-30T09:00:00").unwrap_err();
        assert!(err.contains("offset"), "{err}");
    }

    #[test]
    fn bad_expressions_and_zones_are_schedule_errors() {
        let after = instant("2026-11-30T00:00:00Z").unwrap();
        let err = schedule::next_fires("61 * * * *", "UTC", after, 1).unwrap_err();
        assert!(err.to_string().contains("minute"), "{err}");
        let err = schedule::next_fires("* * * * *", "Mars/Olympus", after, 1).unwrap_err();
        assert_eq!(err.to_string(), "unknown time zone \"Mars/Olympus\"");
    }

    #[test]
    fn distances_keep_two_units() {
        assert_eq!(until(0), "0s");
        assert_eq!(until(45), "45s");
        assert_eq!(until(330), "5m 30s");
        assert_eq!(until(39_600), "11h");
        assert_eq!(until(2 * 86_400 + 4 * 3_600 + 59 * 60), "2d 4h");
        assert_eq!(until(86_400 + 59), "1d");
    }
}
