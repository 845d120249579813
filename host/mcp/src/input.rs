//! Answers to what a server asks in the middle of a 2026-07-28 request (MRTR input requests):
//! roots from what the connection declared, forms and sampling through the asker of the
//! request they arrived in (no routing needed: the request names itself).

use rmcp::model::{ElicitRequestParams, InputRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::questions::{InFlight, Questions, Refusal};

/// The answer to the input request `key`, or why the request cannot go on.
pub(crate) async fn answer(
    questions: &Questions,
    flight: &InFlight,
    key: &str,
    request: &InputRequest,
) -> Result<Value, String> {
    // An input request has no cancellation of its own: the request it rides in has.
    let never = CancellationToken::new();
    match request {
        InputRequest::Elicitation(elicit) => {
            let order = match &elicit.params {
                ElicitRequestParams::FormElicitationParams {
                    requested_schema, ..
                } => requested_schema.property_order.clone(),
                _ => None,
            };
            let params = serde_json::to_value(&elicit.params).unwrap_or_default();
            questions
                .elicit(Ok(flight), &params, order.as_deref(), Some(key), &never)
                .await
                .map_err(|rejected| rejected.message().to_owned())
        }
        InputRequest::ListRoots(_) => Ok(questions.roots(Some(flight)).await),
        InputRequest::CreateMessage(create) => {
            let params = serde_json::to_value(&create.params).unwrap_or_default();
            questions
                .sample(Ok(flight), &params, Some(key), &never)
                .await
                .map_err(|refusal| match refusal {
                    Refusal::Refused(why) => format!("sampling refused: {why}"),
                    Refusal::Rejected(rejected) => rejected.message().to_owned(),
                })
        }
        _ => Err("the server asked for input of a kind rho does not know".into()),
    }
}
