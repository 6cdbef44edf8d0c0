//! Time zone lookup by IANA name, and the machine's own zone.

use jiff::tz::TimeZone;

use crate::schedule::ScheduleError;

/// The machine's IANA time zone name, such as `Europe/Berlin`.
///
/// Follows jiff's detection: the `TZ` environment variable when it is set to
/// a zone name, otherwise `/etc/localtime`. Falls back to `"UTC"` when the
/// zone has no IANA name (a POSIX rule in `TZ`, or an unlinked copy of a
/// zone file), because a job stored with a name must be reloadable later.
pub fn machine_zone() -> String {
    TimeZone::system().iana_name().unwrap_or("UTC").to_string()
}

/// Loads a zone, returning it with its canonical name (`europe/berlin`
/// becomes `Europe/Berlin`) so that stored jobs spell zones one way.
pub(crate) fn load(name: &str) -> Result<(TimeZone, String), ScheduleError> {
    let tz = TimeZone::get(name).map_err(|_| ScheduleError::UnknownZone {
        zone: name.to_string(),
    })?;
    let canonical = tz.iana_name().unwrap_or(name).to_string();
    Ok((tz, canonical))
}
