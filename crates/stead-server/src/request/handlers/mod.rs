//! Request handlers, one file per protocol method (named after it), each a
//! `handle(shared, params)` answering the method's typed output. [`crate::request::dispatch`]
//! matches every request to its handler; the HTTP API calls the same dispatcher. What
//! several handlers of one noun share is in [`jobs`], [`services`], [`queues`] and
//! [`notifiers`].

pub mod apply;
pub mod checkpoint_get;
pub mod checkpoint_list;
pub mod checkpoint_set;
pub mod hold_acquire;
pub mod hold_list;
pub mod hold_release;
pub mod hosts;
pub mod http;
pub mod job_add;
pub mod job_get;
pub mod job_list;
pub mod job_pause;
pub mod job_remove;
pub mod job_set_enabled;
pub mod jobs;
pub mod monitor_check;
pub mod monitor_finished;
pub mod monitor_next;
pub mod monitor_started;
pub mod notifiers;
pub mod notify_add;
pub mod notify_list;
pub mod notify_remove;
pub mod notify_test;
pub mod prune;
pub mod queue_list;
pub mod queue_remove;
pub mod queue_set;
pub mod queues;
pub mod readiness;
pub mod restart_begin;
pub mod restart_end;
pub mod run_cancel;
pub mod run_get;
pub mod run_list;
pub mod run_log;
pub mod run_now;
pub mod run_wait;
pub mod service_add;
pub mod service_list;
pub mod service_remove;
pub mod services;
pub mod sleep_list;
pub mod status;
pub mod step_begin;
pub mod step_done;
pub mod stop;

use stead_protocol::{ErrorBody, ErrorCode};

/// What a handler answers: the method's output, or an error for the client.
pub type Answer<T> = Result<T, ErrorBody>;

/// A refusal of bad input.
pub fn invalid(message: impl Into<String>) -> ErrorBody {
    ErrorBody::new(ErrorCode::InvalidParams, message)
}
