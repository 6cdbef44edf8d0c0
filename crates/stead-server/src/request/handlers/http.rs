//! `http`: where the HTTP API listens and its token; with `start`, it is first started on
//! a free loopback port if it is off (what `stead dashboard` asks for).

use std::sync::Arc;

use stead_protocol::{ErrorBody, ErrorCode, HttpEndpoint, HttpParams};

use super::Answer;
use crate::shared::Shared;

pub async fn handle(shared: &Arc<Shared>, params: HttpParams) -> Answer<HttpEndpoint> {
    let current = match shared.web.endpoint() {
        Some(endpoint) => Some(endpoint),
        None if params.start => Some(shared.web.start_on_loopback(shared).map_err(|e| {
            ErrorBody::new(
                ErrorCode::Internal,
                format!("failed to start the HTTP API on 127.0.0.1: {e}"),
            )
        })?),
        None => None,
    };
    Ok(HttpEndpoint {
        url: current.as_ref().map(|e| e.url()),
        dashboard_url: current
            .as_ref()
            .map(|e| format!("{}/#token={}", e.url(), e.token)),
        token: current.map(|e| e.token),
        token_file: shared.world.paths.http_token().display().to_string(),
    })
}
