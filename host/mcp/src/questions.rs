//! Questions a server asks during a request (elicitation, sampling), routed to the asker of the
//! call they belong to. The protocol names no call in a legacy `elicitation/create`, so rho
//! records each connection's in-flight calls and answers only when exactly one is running
//! (`docs/mcp.md`, "Questions from a server"); a 2026-07-28 input request arrives inside its
//! own call's result and goes to that call's asker directly.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rho_component::{Asker, FormAnswer, SamplingAnswer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::options::Declared;

/// One request that may ask questions: its asker (if the session gave one), its budget (paused
/// while a question is open) and its cancellation.
pub(crate) struct InFlight {
    pub asker: Option<Arc<dyn Asker>>,
    pub budget: Arc<Budget>,
    pub cancel: CancellationToken,
}

/// The in-flight calls of one connection.
#[derive(Clone, Default)]
pub(crate) struct Calls(Arc<Mutex<CallTable>>);

#[derive(Default)]
struct CallTable {
    next: u64,
    calls: BTreeMap<u64, Arc<InFlight>>,
}

/// Keeps a call recorded as in flight until dropped.
pub(crate) struct Entered {
    calls: Calls,
    id: u64,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Ok(mut table) = self.calls.0.lock() {
            table.calls.remove(&self.id);
        }
    }
}

impl Calls {
    /// Records `flight` as in flight until the returned guard drops.
    pub(crate) fn enter(&self, flight: Arc<InFlight>) -> Entered {
        let id = match self.0.lock() {
            Ok(mut table) => {
                table.next += 1;
                let id = table.next;
                table.calls.insert(id, flight);
                id
            }
            Err(_) => 0,
        };
        Entered {
            calls: self.clone(),
            id,
        }
    }

    /// The one call in flight, or why a question cannot be routed.
    pub(crate) fn single(&self) -> Result<Arc<InFlight>, &'static str> {
        let table = self.0.lock().map_err(|_| "the call table is unusable")?;
        let mut calls = table.calls.values();
        match (calls.next(), calls.next()) {
            (Some(call), None) => Ok(Arc::clone(call)),
            (None, _) => Err("no call is running on this server"),
            (Some(_), Some(_)) => Err("several calls are running on this server"),
        }
    }
}

/// What a connection needs to answer questions: who asks, and what it declared.
#[derive(Clone)]
pub(crate) struct Questions {
    pub server: String,
    pub declared: Declared,
}

fn decline() -> Value {
    json!({ "action": "decline" })
}

impl Questions {
    /// The answer to an elicitation (`params` as JSON, `order` the schema's property order):
    /// accept with typed content, decline, or cancel. Never fails: whatever rho cannot do is a
    /// decline, a first-class answer that lets the server carry on.
    pub(crate) async fn elicit(
        &self,
        flight: Result<&InFlight, &str>,
        params: &Value,
        order: Option<&[String]>,
        request_cancel: &CancellationToken,
    ) -> Value {
        let server = self.server.as_str();
        let why = match (self.declared.elicitation, flight) {
            (false, _) => Some("rho declared no elicitation"),
            (true, Err(why)) => Some(why),
            (true, Ok(flight)) if flight.asker.is_none() => Some("the call cannot ask the user"),
            _ => None,
        };
        if let Some(why) = why {
            tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
            return decline();
        }
        // URL mode: rho opens no browser, and accepting without opening one would tell the
        // server the user had answered.
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            tracing::info!(target: "rho::mcp", server, "URL elicitation declined");
            return decline();
        }
        let (Ok(flight), Some(asker)) = (flight, flight.ok().and_then(|f| f.asker.as_ref())) else {
            return decline();
        };
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
        let plan = match crate::elicitation::plan(message, schema, order) {
            Ok(plan) => plan,
            Err(why) => {
                tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
                return decline();
            }
        };
        let _open = flight.budget.question();
        let answer = tokio::select! {
            answer = tokio::time::timeout(flight.budget.limit(), asker.ask_form(server, plan.form.clone())) => answer.ok(),
            () = flight.cancel.cancelled() => None,
            () = request_cancel.cancelled() => None,
        };
        match answer {
            Some(FormAnswer::Accept(answers)) => match plan.content(&answers) {
                Ok(content) => json!({ "action": "accept", "content": content }),
                Err(why) => {
                    tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
                    decline()
                }
            },
            Some(FormAnswer::Cancel) => json!({ "action": "cancel" }),
            Some(FormAnswer::Decline) => decline(),
            None => {
                tracing::info!(target: "rho::mcp", server, "elicitation declined: no answer within the call budget");
                decline()
            }
        }
    }

    /// The result of a sampling request (`params` as JSON), or why it is rejected.
    pub(crate) async fn sample(
        &self,
        flight: Result<&InFlight, &str>,
        params: &Value,
        request_cancel: &CancellationToken,
    ) -> Result<Value, String> {
        if !self.declared.sampling {
            return Err("rho did not offer sampling to this server".into());
        }
        let flight = flight.map_err(str::to_owned)?;
        let asker = flight
            .asker
            .as_ref()
            .ok_or("the call cannot ask the user")?;
        let request = crate::sampling::request(params)?;
        let _open = flight.budget.question();
        let answer = tokio::select! {
            answer = tokio::time::timeout(flight.budget.limit(), asker.sample(&self.server, request)) => {
                answer.map_err(|_| "no answer within the call budget".to_owned())?
            }
            () = flight.cancel.cancelled() => return Err("the call was cancelled".into()),
            () = request_cancel.cancelled() => return Err("the server cancelled the request".into()),
        };
        match answer {
            SamplingAnswer::Reply {
                model,
                text,
                stop_reason,
            } => Ok(crate::sampling::result(&model, &text, &stop_reason)),
            SamplingAnswer::Refused(why) => Err(why),
            SamplingAnswer::Cancel => Err("the user dismissed the request".into()),
        }
    }
}
