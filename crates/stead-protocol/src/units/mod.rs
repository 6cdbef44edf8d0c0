//! Durations and sizes as a person writes them, read the same way wherever they are
//! written: a job's fields, the command line and `config.toml`. They live here, below
//! both the client and the server, so that the client library reads its configuration
//! with the very parsers the command line uses.

mod duration;
mod size;

pub use duration::{DurationError, format_delay, format_duration, parse_delay, parse_duration};
pub use size::{SizeError, format_size, parse_size};
