//! Where the machine draws its power from: mains or battery.
//!
//! Linux lists its power supplies under `/sys/class/power_supply`, one directory each
//! with a `type` (`Mains`, `USB`, `Battery`...) and an `online` or `status` file; macOS
//! says it through `pmset -g batt`. A directory laid out as sysfs may be given instead
//! (`[power] supplies`), on either platform, so a test can switch the machine from
//! battery to mains. A machine with no battery is always on mains.

use std::io;
use std::path::Path;

/// The power source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Mains,
    Battery,
}

/// The power source, read from `supplies` (a sysfs-style directory) when given, else
/// from the platform.
pub fn source(supplies: Option<&Path>) -> io::Result<Source> {
    match supplies {
        Some(dir) => read_supplies(dir),
        None => crate::os::power_source(),
    }
}

/// Reads a sysfs-style directory of power supplies: on battery when a battery is
/// discharging and no mains or USB supply is online; on mains otherwise (no battery, a
/// supply online, a battery charging or full).
pub fn read_supplies(dir: &Path) -> io::Result<Source> {
    let mut on_line = false;
    let mut discharging = false;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let read = |name: &str| {
            std::fs::read_to_string(path.join(name))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        match read("type").as_str() {
            "Battery" => discharging |= read("status") == "Discharging",
            "Mains" | "USB" | "USB_C" | "USB_PD" => on_line |= read("online") == "1",
            _ => {}
        }
    }
    Ok(if discharging && !on_line {
        Source::Battery
    } else {
        Source::Mains
    })
}

/// Reads `pmset -g batt`'s first line: `Now drawing from 'Battery Power'` or `'AC Power'`.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) fn from_pmset(output: &str) -> Source {
    if output.contains("'Battery Power'") {
        Source::Battery
    } else {
        Source::Mains
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn supply(dir: &Path, name: &str, files: &[(&str, &str)]) {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        for (file, text) in files {
            std::fs::write(d.join(file), format!("{text}\n")).unwrap();
        }
    }

    #[test]
    fn supplies_say_battery_only_when_it_discharges_with_nothing_online() {
        for (ac, battery, expected) in [
            (None, None, Source::Mains),
            (Some("0"), None, Source::Mains),
            (None, Some("Discharging"), Source::Battery),
            (Some("0"), Some("Discharging"), Source::Battery),
            (Some("1"), Some("Discharging"), Source::Mains),
            (Some("0"), Some("Charging"), Source::Mains),
            (Some("1"), Some("Full"), Source::Mains),
            (None, Some("Not charging"), Source::Mains),
        ] {
            let dir = tempfile::tempdir().unwrap();
            if let Some(online) = ac {
                supply(dir.path(), "AC", &[("type", "Mains"), ("online", online)]);
            }
            if let Some(status) = battery {
                supply(
                    dir.path(),
                    "BAT0",
                    &[("type", "Battery"), ("status", status)],
                );
            }
            assert_eq!(
                read_supplies(dir.path()).unwrap(),
                expected,
                "{ac:?} {battery:?}"
            );
        }
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        assert!(read_supplies(Path::new("/nonexistent/power")).is_err());
    }

    #[test]
    fn pmset_says_which_power_it_draws_from() {
        let battery =
            "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=1)\t81%; discharging;";
        assert_eq!(from_pmset(battery), Source::Battery);
        assert_eq!(from_pmset("Now drawing from 'AC Power'\n"), Source::Mains);
        assert_eq!(from_pmset(""), Source::Mains);
    }

    #[test]
    fn this_machine_has_a_source() {
        source(None).unwrap();
    }
}
