//! The error type shared by every parser in the schedule module.

/// Why a cron expression, time zone or duration was rejected.
///
/// Messages are lowercase fragments that quote the offending input, so the
/// CLI and the daemon can show them as they are or wrap them in context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The cron expression is malformed, or can never fire.
    #[error("invalid cron expression {expr:?}: {reason}")]
    InvalidCron {
        /// The expression as given.
        expr: String,
        /// What is wrong, naming the field and value where there is one.
        reason: String,
    },
    /// The time zone is not in the time zone database.
    #[error("unknown time zone {zone:?}")]
    UnknownZone {
        /// The zone name as given.
        zone: String,
    },
    /// The duration is malformed, or shorter than one second.
    #[error("invalid duration {value:?}: {reason}")]
    InvalidDuration {
        /// The duration as given.
        value: String,
        /// What is wrong.
        reason: String,
    },
}

impl From<stead_protocol::units::DurationError> for ScheduleError {
    fn from(e: stead_protocol::units::DurationError) -> Self {
        Self::InvalidDuration {
            value: e.value,
            reason: e.reason,
        }
    }
}
