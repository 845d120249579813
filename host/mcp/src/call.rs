//! Tool calls: within the call budget (paused while the user answers a question), with a
//! progress token, cancellation, the in-flight record questions are routed by, and the
//! `outputSchema` contract checked on the result.

use std::sync::Arc;

use rho_component::Asker;
use rmcp::model::{CallToolRequestParams, ServerResult};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::McpError;
use crate::connection::Connection;
use crate::handler::Progress;
use crate::questions::InFlight;
use crate::request::Failure;

impl Connection {
    /// Calls `tool` with `arguments` within the call budget, with no asker: a question the
    /// server asks during the call is declined (sampling rejected). See
    /// [`Connection::call_tool_with`].
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::Sender<Progress>>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Value, McpError> {
        self.call_tool_with(tool, arguments, progress, cancel, None)
            .await
    }

    /// Calls `tool` with `arguments` within the call budget. Every call carries a progress
    /// token; reports go to `progress` while the call runs. On budget expiry or when `cancel`
    /// fires, the server is sent `notifications/cancelled` and the call fails; a result that
    /// arrives afterwards is dropped. Questions the server asks during the call (a legacy
    /// `elicitation/create` or `sampling/createMessage` while this is the only call in flight
    /// on the connection, or a 2026-07-28 input request of this call) go to `asker`; the
    /// budget stands still while one is open.
    pub async fn call_tool_with(
        &self,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::Sender<Progress>>,
        cancel: tokio_util::sync::CancellationToken,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<Value, McpError> {
        let call_error = |message: String| McpError::Call {
            server: self.spec.id.clone(),
            tool: tool.to_owned(),
            message,
        };
        if self.withdrawn.contains(tool) {
            return Err(call_error(
                "the server withdrew this tool during the session".into(),
            ));
        }
        if !self.tools.iter().any(|t| t.name == tool) {
            let reason = if self.added.iter().any(|t| t.name == tool) {
                "the server added this tool after the session started; it can be called from the next turn"
            } else {
                "the server does not offer this tool"
            };
            return Err(call_error(reason.into()));
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let flight = Arc::new(InFlight::new(asker, self.spec.call_timeout, cancel));
        let _in_flight = self.client.calls.enter(Arc::clone(&flight));
        let mut outcome = self.drive(params.clone(), &flight, progress.as_ref()).await;
        // An OAuth server that refuses the token: a step-up login for the scopes it names
        // (403 insufficient_scope) or a new login (401), then the call once more.
        if let Err(Failure::Unauthorized { challenge, message }) = &outcome
            && self.authorizer.is_some()
        {
            match self.reauthorize(challenge).await {
                Ok(()) => outcome = self.drive(params, &flight, progress.as_ref()).await,
                Err(login) => return Err(call_error(format!("{message}; {login}"))),
            }
        }
        // The tools of a server started from what rho knew of it are checked by the next
        // listing; a call the server refuses before then asks whether the tool is still there,
        // within what is left of the call's budget (cut short, the server's answer stands).
        if self.unchecked
            && refused(&outcome)
            && tokio::select! {
                listed = self.lists(tool) => listed == Some(false),
                () = flight.budget.expired() => false,
                () = flight.cancel.cancelled() => false,
            }
        {
            return Err(call_error(
                "the server withdrew this tool since rho last listed it".into(),
            ));
        }
        let result = outcome.map_err(|failure| match failure {
            Failure::Timeout(seconds) => McpError::CallTimeout {
                server: self.spec.id.clone(),
                tool: tool.to_owned(),
                seconds,
            },
            Failure::Cancelled => call_error("cancelled".into()),
            Failure::Failed(message) | Failure::Unauthorized { message, .. } => call_error(message),
            Failure::Lost { message, delivered } => McpError::Lost {
                server: self.spec.id.clone(),
                tool: tool.to_owned(),
                message,
                delivered,
            },
        })?;
        let value = match result {
            ServerResult::CallToolResult(result) => {
                serde_json::to_value(&result).map_err(|e| call_error(e.to_string()))?
            }
            other => {
                return Err(call_error(format!(
                    "unexpected response {}",
                    serde_json::to_value(&other)
                        .map(|v| v.to_string())
                        .unwrap_or_default()
                )));
            }
        };
        // A declared outputSchema is a contract: a missing or invalid structuredContent fails
        // the call instead of handing the model half an answer (error results are exempt).
        if let Some(schema) = self
            .tools
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.definition.get("outputSchema"))
            && value.get("isError").and_then(Value::as_bool) != Some(true)
        {
            crate::output_schema::check(schema, value.get("structuredContent"))
                .map_err(|e| call_error(e.to_string()))?;
        }
        Ok(value)
    }

    /// After an OAuth server refused a request with `challenge`: a step-up login for the
    /// scopes it names (403 `insufficient_scope`), otherwise a new login (401). Fails at once
    /// where this run cannot log in.
    pub(crate) async fn reauthorize(&self, challenge: &str) -> Result<(), McpError> {
        let Some(authorizer) = &self.authorizer else {
            return Err(crate::oauth::needs_login(
                &self.spec,
                "the server refused the request",
            ));
        };
        if challenge
            .to_ascii_lowercase()
            .contains("insufficient_scope")
        {
            authorizer.step_up(&self.spec, challenge).await
        } else {
            authorizer.relogin(&self.spec, Some(challenge)).await
        }
    }
}

/// Whether the server refused a call: an error answer, or a result flagged `isError`.
fn refused(outcome: &Result<ServerResult, Failure>) -> bool {
    match outcome {
        Err(Failure::Failed(_)) => true,
        Ok(ServerResult::CallToolResult(result)) => result.is_error == Some(true),
        _ => false,
    }
}
