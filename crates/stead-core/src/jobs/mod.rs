//! Jobs: validating what a person declared, when a job fires, and how a declarative
//! job file changes the stored set.
//!
//! - [`mod@validate`]: a [`JobSpec`](stead_protocol::JobSpec) checked and normalized, with
//!   errors that name the field and the value;
//! - [`timing`]: a job's schedule and its next fires;
//! - [`apply`]: the plan that turns the stored jobs into the declared ones (pure).

pub mod apply;
pub mod timing;
pub mod validate;

pub use timing::{CatchUpPolicy, JobTiming};
pub use validate::{JobError, validate};
