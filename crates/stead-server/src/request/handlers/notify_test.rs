//! `notify_test`: POST one `test` event to a notifier now, outside the outbox, and say
//! what its receiver answered.

use std::sync::Arc;

use stead_core::clock::rfc3339;
use stead_protocol::{
    ErrorBody, ErrorCode, Notification, NotifierName, NotifyEvent, NotifyTestResult,
};

use super::Answer;
use stead_store::StoreError;

use crate::request::ledger_calls::{blocking, store_error};
use crate::shared::Shared;
use crate::tasks::notify::{post, secret};
use stead_store::Refusal;

pub async fn handle(shared: &Arc<Shared>, params: NotifierName) -> Answer<NotifyTestResult> {
    let all = blocking(shared, |s| s.world.store.notifier_list()).await?;
    let Some(spec) = all.into_iter().find(|n| n.name == params.name) else {
        return Err(store_error(StoreError::Refused(Refusal::NoSuchNotifier(
            params.name,
        ))));
    };
    let id = uuid::Uuid::now_v7().to_string();
    let body = Notification {
        id: id.clone(),
        event: NotifyEvent::Test,
        job: String::new(),
        at: rfc3339(shared.world.clock.now()),
        text: format!("stead: a test notification to {}", spec.name),
        run: None,
    };
    let body = serde_json::to_string(&body).expect("a notification serializes");
    let signing = match spec.sign {
        true => {
            Some(secret(shared, &spec.name).map_err(|e| ErrorBody::new(ErrorCode::Internal, e))?)
        }
        false => None,
    };
    let url = spec.url.clone();
    let outcome = tokio::task::spawn_blocking(move || post(&url, &body, &id, signing.as_deref()))
        .await
        .map_err(|e| ErrorBody::new(ErrorCode::Internal, e.to_string()))?;
    let (status, error) = match outcome {
        Ok(status) => (Some(status), None),
        Err(refused) => (refused.status, Some(refused.why)),
    };
    Ok(NotifyTestResult {
        name: spec.name,
        url: stead_protocol::redact_notifier_url(&spec.url),
        status,
        delivered: error.is_none(),
        error,
    })
}
