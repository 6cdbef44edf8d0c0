//! Text helpers shared by the commands that print jobs and runs: plain tables, cell
//! truncation, command lines quoted for reading, times in one form, short elapsed times,
//! and how far a host's clock is from a shared ledger's. All pure, so
//! what a command prints is tested without a server.

use comfy_table::{ContentArrangement, Table, presets};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use stead_protocol::JobSpec;

/// Shown for a value that is absent.
pub const NONE: &str = "-";

/// A borderless table with a header row, columns separated by two spaces, no trailing
/// whitespace. Its width never depends on the terminal, so output is the same in a pipe.
pub fn table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty()
        .set_header(header.iter().copied());
    for row in rows {
        table.add_row(row);
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    let mut out = table.trim_fmt();
    out.push('\n');
    out
}

/// At most `max` characters of the first line of `s`, ending in `…` when anything was
/// cut (including further lines), so one table row stays one line.
pub fn truncate(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    let more_lines = first.len() < s.trim_end_matches('\n').len();
    if first.chars().count() <= max && !more_lines {
        return first.to_string();
    }
    let kept: String = first.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// A job's command as a person would type it: a shell job's script as written, a
/// program's words quoted for `sh` where they need it.
pub fn command_line(spec: &JobSpec) -> String {
    if spec.shell {
        return spec.command.join(" ");
    }
    spec.command
        .iter()
        .map(|word| quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` quoted for `sh` when it holds anything but plainly safe characters.
pub fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A time as every table and listing shows it, whatever zone or precision the ledger
/// wrote it in: this machine's zone, to the second, with the zone's abbreviation
/// (`2026-12-02 07:03:23 CET`). `--json` keeps the exact RFC 3339 text.
pub fn when(rfc3339: &str) -> String {
    when_in(rfc3339, &TimeZone::system())
}

/// [`when`] in zone `tz`. Text that is not a time is shown as it is.
pub fn when_in(rfc3339: &str, tz: &TimeZone) -> String {
    match rfc3339.parse::<Timestamp>() {
        Ok(t) => t
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S %Z")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}

/// [`when`] of a time that may be absent (`-`).
pub fn when_or_none(rfc3339: Option<&str>) -> String {
    rfc3339.map_or_else(|| NONE.to_string(), when)
}

/// A short elapsed time for a table: `340ms`, `4.2s`, `3m07s`, `2h05m`, `3d04h`.
pub fn elapsed(ms: i64) -> String {
    let ms = ms.max(0);
    let secs = ms / 1000;
    match secs {
        0 => format!("{ms}ms"),
        1..60 => format!("{}.{}s", secs, (ms % 1000) / 100),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        3600..86400 => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d{:02}h", secs / 86400, secs % 86400 / 3600),
    }
}

/// Bytes for reading: `512 B`, `3.1 MiB`, `12.0 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// What to say of a disk that is full or nearly: `None` while it has room.
pub fn disk_warning(disk: &stead_protocol::DiskSpace) -> Option<String> {
    let free = bytes(disk.free_bytes);
    let reserve = bytes(disk.reserve_bytes);
    if disk.below_reserve() {
        Some(format!(
            "the disk holding the state directory has {free} free, less than the {reserve} kept free (logs.keep_free): run output is being dropped to leave room for the ledger; free some space"
        ))
    } else if disk.nearly_full() {
        Some(format!(
            "the disk holding the state directory is nearly full: {free} free, and run output stops being written below {reserve} (logs.keep_free)"
        ))
    } else {
        None
    }
}

/// A clock offset (a host's clock minus the database's) as a cell: `+10.0 s`, `-0.2 s`.
pub fn clock_offset(ms: i64) -> String {
    format!("{:+.1} s", ms as f64 / 1000.0)
}

/// A clock offset in words: `10.0 s ahead of the database's`.
pub fn clock_skew(ms: i64) -> String {
    let way = if ms > 0 { "ahead of" } else { "behind" };
    format!(
        "{:.1} s {way} the database's",
        ms.unsigned_abs() as f64 / 1000.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_any_zone_and_precision_read_alike() {
        let berlin = jiff::tz::TimeZone::get("Europe/Berlin").unwrap();
        // A UTC time with milliseconds and the same instant written with Berlin's offset.
        for text in ["2026-12-02T06:03:23.456Z", "2026-12-02T07:03:23+01:00"] {
            assert_eq!(when_in(text, &berlin), "2026-12-02 07:03:23 CET");
            assert_eq!(
                when_in(text, &jiff::tz::TimeZone::UTC),
                "2026-12-02 06:03:23 UTC"
            );
        }
        assert_eq!(when_in("soon", &berlin), "soon");
        assert_eq!(when_or_none(None), "-");
    }

    fn spec(command: &[&str], shell: bool) -> JobSpec {
        JobSpec {
            name: "j".into(),
            cron: None,
            tz: None,
            every: None,
            command: command.iter().map(|s| s.to_string()).collect(),
            shell,
            cwd: None,
            env: Default::default(),
            timeout: None,
            concurrency: Default::default(),
            enabled: true,
            ..JobSpec::default()
        }
    }

    #[test]
    fn tables_are_borderless_and_unpadded_at_the_end() {
        let out = table(
            &["ID", "NAME"],
            [
                vec!["1".to_string(), "alpha".to_string()],
                vec!["22".to_string(), "b".to_string()],
            ],
        );
        assert_eq!(out, "ID  NAME\n1   alpha\n22  b\n");
    }

    #[test]
    fn truncation_keeps_one_line() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("exactly10!", 10), "exactly10!");
        assert_eq!(truncate("a bit too long", 10), "a bit too…");
        assert_eq!(truncate("set -e\necho hi", 40), "set -e…");
        assert_eq!(truncate("one line\n", 40), "one line");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }

    #[test]
    fn commands_read_as_typed() {
        assert_eq!(command_line(&spec(&["date", "-u"], false)), "date -u");
        assert_eq!(
            command_line(&spec(&["echo", "hello world", "it's", ""], false)),
            r#"echo 'hello world' 'it'\''s' ''"#
        );
        assert_eq!(
            command_line(&spec(&["echo $HOME | wc -c"], true)),
            "echo $HOME | wc -c"
        );
    }

    #[test]
    fn elapsed_times_are_short() {
        assert_eq!(elapsed(0), "0ms");
        assert_eq!(elapsed(340), "340ms");
        assert_eq!(elapsed(4_250), "4.2s");
        assert_eq!(elapsed(187_000), "3m07s");
        assert_eq!(elapsed(7_500_000), "2h05m");
        assert_eq!(elapsed(3 * 86_400_000 + 4 * 3_600_000), "3d04h");
        assert_eq!(elapsed(-5), "0ms");
    }

    #[test]
    fn sizes_and_disk_warnings_read_plainly() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
        let disk = |free| stead_protocol::DiskSpace {
            free_bytes: free,
            total_bytes: 100 << 20,
            reserve_bytes: 5 << 20,
        };
        assert_eq!(disk_warning(&disk(50 << 20)), None);
        assert!(
            disk_warning(&disk(8 << 20))
                .unwrap()
                .contains("nearly full")
        );
        assert!(
            disk_warning(&disk(1 << 20))
                .unwrap()
                .contains("being dropped")
        );
    }

    #[test]
    fn clock_offsets_read_with_their_direction() {
        assert_eq!(clock_offset(10_049), "+10.0 s");
        assert_eq!(clock_offset(-250), "-0.2 s");
        assert_eq!(clock_skew(-10_000), "10.0 s behind the database's");
        assert_eq!(clock_skew(1_500), "1.5 s ahead of the database's");
    }
}
