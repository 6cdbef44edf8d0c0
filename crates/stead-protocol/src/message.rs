//! Envelopes: the hello line, requests, responses and error bodies.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The first line a server writes on every connection. Its arrival is what "serving"
/// means: a process that accepts connections but writes no hello is not serving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Always [`crate::PROTOCOL`] for this version of the protocol.
    pub protocol: String,
    /// The server's identity for this process lifetime (a fresh UUID at every start).
    pub server_id: String,
    /// The lease epoch this server holds.
    pub epoch: i64,
    /// The server's process id.
    pub pid: u32,
    /// The server's `stead` version.
    pub version: String,
}

/// The hello line on the wire: `{"hello": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloLine {
    pub hello: Hello,
}

/// One request line: `{"id": 1, "method": "status", "params": {}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// Chosen by the client; echoed in the response.
    pub id: u64,
    pub method: String,
    /// Method-specific parameters; omitted means `{}`.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

/// One response line: `{"id": 1, "result": {...}}` or `{"id": 1, "error": {...}}`.
///
/// `id` is `null` only when the request line could not be read far enough to find its id
/// (invalid JSON, an over-long line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseEnvelope {
    pub id: Option<u64>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Either a method's result or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Result(Value),
    Error(ErrorBody),
}

/// A machine-readable code plus a sentence for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

/// Error codes. New codes may be added in later protocol versions; clients treat an
/// unknown code like [`ErrorCode::Internal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The line was not valid JSON.
    InvalidJson,
    /// The line exceeded [`crate::MAX_LINE_BYTES`]; it was skipped.
    LineTooLong,
    /// The line was JSON but not a request envelope (missing or non-integer `id`, no `method`).
    InvalidRequest,
    /// The server does not know this method.
    UnknownMethod,
    /// The method's parameters did not match its schema.
    InvalidParams,
    /// The named object (job, run) does not exist.
    NotFound,
    /// The request conflicts with current state (a duplicate name, a finished run).
    Conflict,
    /// The server is stopping and takes no new work; retry against its successor.
    ShuttingDown,
    /// The ledger could not be read or written.
    StoreUnavailable,
    /// HTTP only: the request carried no token or a wrong one.
    Unauthorized,
    /// HTTP only: the Host or Origin header is not this server's (a page on another site,
    /// DNS rebinding).
    Forbidden,
    /// HTTP only: the path exists but not with this method.
    MethodNotAllowed,
    /// Anything else; the message says what.
    #[serde(other)]
    Internal,
}

impl ErrorCode {
    /// Every code of this version, in declaration order: for those who must answer each
    /// (the enum is non-exhaustive: a later version may add codes).
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::InvalidJson,
        ErrorCode::LineTooLong,
        ErrorCode::InvalidRequest,
        ErrorCode::UnknownMethod,
        ErrorCode::InvalidParams,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::ShuttingDown,
        ErrorCode::StoreUnavailable,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Internal,
    ];
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl ResponseEnvelope {
    pub fn result(id: u64, value: Value) -> Self {
        Self {
            id: Some(id),
            outcome: Outcome::Result(value),
        }
    }

    pub fn error(id: Option<u64>, error: ErrorBody) -> Self {
        Self {
            id,
            outcome: Outcome::Error(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Where each code stands in [`ErrorCode::ALL`]: an exhaustive match, so a new code
    /// fails to compile here until it is listed.
    fn position(code: ErrorCode) -> usize {
        match code {
            ErrorCode::InvalidJson => 0,
            ErrorCode::LineTooLong => 1,
            ErrorCode::InvalidRequest => 2,
            ErrorCode::UnknownMethod => 3,
            ErrorCode::InvalidParams => 4,
            ErrorCode::NotFound => 5,
            ErrorCode::Conflict => 6,
            ErrorCode::ShuttingDown => 7,
            ErrorCode::StoreUnavailable => 8,
            ErrorCode::Unauthorized => 9,
            ErrorCode::Forbidden => 10,
            ErrorCode::MethodNotAllowed => 11,
            ErrorCode::Internal => 12,
        }
    }

    #[test]
    fn every_code_is_listed_once_in_order() {
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(position(*code), i, "{code:?}");
        }
    }

    #[test]
    fn response_shapes_are_flat() {
        let ok = ResponseEnvelope::result(7, json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"id": 7, "result": {"a": 1}})
        );
        let err = ResponseEnvelope::error(None, ErrorBody::new(ErrorCode::LineTooLong, "too long"));
        assert_eq!(
            serde_json::to_value(&err).unwrap(),
            json!({"id": null, "error": {"code": "line_too_long", "message": "too long"}})
        );
        let back: ResponseEnvelope = serde_json::from_value(
            json!({"id": 1, "error": {"code": "unknown_method", "message": "x"}}),
        )
        .unwrap();
        assert_eq!(
            back.outcome,
            Outcome::Error(ErrorBody::new(ErrorCode::UnknownMethod, "x"))
        );
    }

    #[test]
    fn unknown_error_codes_read_as_internal() {
        let body: ErrorBody =
            serde_json::from_value(json!({"code": "from_the_future", "message": "m"})).unwrap();
        assert_eq!(body.code, ErrorCode::Internal);
    }

    #[test]
    fn params_default_to_null_and_are_omitted() {
        let req: RequestEnvelope = serde_json::from_str(r#"{"id":1,"method":"status"}"#).unwrap();
        assert_eq!(req.params, Value::Null);
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"id":1,"method":"status"}"#
        );
    }
}
