//! Tests of the schedule module, one file per concern.

mod api;
mod dst;
mod durations;
mod errors;
mod fields;
mod props;
mod support;
