//! Request handlers, one file per family of methods, mirrored by the client's calls.

pub mod hosts;
pub mod jobs;
pub mod runs;
pub mod services;

use serde_json::Value;
use stead_protocol::{ErrorBody, ErrorCode};

/// What a handler answers.
pub type HandlerResult = Result<Value, ErrorBody>;

pub fn to_value(value: impl serde::Serialize) -> HandlerResult {
    serde_json::to_value(value).map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))
}

/// A refusal of bad input.
pub fn invalid(message: impl Into<String>) -> ErrorBody {
    ErrorBody::new(ErrorCode::InvalidParams, message)
}
