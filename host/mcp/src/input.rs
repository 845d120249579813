//! Answers to what a server asks of rho in the middle of a request (2026-07-28 MRTR input
//! requests): rho has no elicitation, sampling or roots yet, so it declares none of them and
//! answers what a server asks anyway without involving the user.

use rmcp::model::InputRequest;
use serde_json::{Value, json};

/// The answer to one input request, or why the call cannot go on.
pub(crate) fn answer(request: &InputRequest) -> Result<Value, String> {
    match request {
        // Declining is always a valid answer to a form or URL elicitation
        // (client/elicitation: action "decline").
        InputRequest::Elicitation(_) => Ok(json!({ "action": "decline" })),
        // No roots are exposed.
        InputRequest::ListRoots(_) => Ok(json!({ "roots": [] })),
        InputRequest::CreateMessage(_) => Err(
            "the server asked rho's model for a completion (sampling), which rho does not offer"
                .into(),
        ),
        _ => Err("the server asked for input of a kind rho does not know".into()),
    }
}
