//! `stead-probe FILE`: what the latency figures' jobs run. It takes the time first thing
//! and appends one line, `RUN_ID TRIGGER STEAD_SCHEDULED_AT START_NANOS`, to FILE in one
//! write (`-` for a variable it was not given, as under cron). Nothing but std, so its
//! own start is as small a part of "the command is running" as a real program's would be.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let started = SystemTime::now();
    let nanos = started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let var = |name| std::env::var(name).unwrap_or_else(|_| "-".to_string());
    let line = format!(
        "{} {} {} {nanos}\n",
        var("STEAD_RUN_ID"),
        var("STEAD_TRIGGER"),
        var("STEAD_SCHEDULED_AT")
    );
    let Some(file) = std::env::args_os().nth(1) else {
        eprintln!("usage: stead-probe FILE");
        std::process::exit(2);
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = appended {
        eprintln!("stead-probe: {e}");
        std::process::exit(1);
    }
}
