//! The codec between JSON-RPC lines and the session host: a reader turns each request into a
//! host [`Operation`] (through the method table), a writer turns each [`HostEvent`] into a
//! notification or the response to its request. The host decides everything else (what runs
//! at once, what queues, what a state allows); the codec owns only what is JSON-RPC's: ids,
//! framing errors, unknown methods and params.
//!
//! Output is bounded end to end: the writer waits for the transport, the host waits for the
//! writer, so a client that reads slowly slows rho down instead of growing a queue.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rho_component::CancelSignal;
use rho_core::host::{HostErrorKind, HostEvent, HostHandle, Operation, RequestId, SessionHost};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::jsonrpc::{ErrorCode, Request, error_line, notification_line, parse_line, result_line};
use crate::methods::{Method, Notification};
use crate::openrpc::DISCOVER;
use crate::transport::{Inbound, Transport};
use crate::wire::NoParams;

/// One request the host has not answered yet.
struct Unanswered {
    /// The JSON-RPC id as sent (none for a notification, which gets no response).
    id: Option<Box<RawValue>>,
    /// The id's duplicate key (see [`Request::id_key`]).
    key: Option<String>,
    /// The method, whose table entry encodes the answer.
    method: Method,
}

/// Requests the host has not answered yet.
#[derive(Default)]
struct InFlight {
    /// By the host's number.
    by_request: HashMap<RequestId, Unanswered>,
    /// The ids, as text, of requests not answered yet (an id cannot be reused until then).
    ids: HashSet<String>,
}

type Shared = Arc<Mutex<InFlight>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, InFlight> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves one connection: `ready`, then requests until EOF on the transport (work already
/// received still finishes, approvals are denied and questions declined), or until `stop`
/// fires (what runs is aborted). Every server is closed before this returns.
pub async fn serve(
    host: SessionHost,
    handle: HostHandle,
    mut events: mpsc::Receiver<HostEvent>,
    transport: Transport,
    stop: CancelSignal,
) {
    let Transport {
        mut incoming,
        outgoing,
    } = transport;
    // The host stops on a signal, and also when nobody reads stdout any more.
    let halt = CancelSignal::new();
    let on_stop = halt.clone();
    let stop_watch = tokio::spawn(async move {
        stop.cancelled().await;
        on_stop.cancel();
    });
    // `ready` is the first line, before any answer to early input.
    if outgoing
        .send(notification_line::<()>(Notification::Ready.name(), None))
        .await
        .is_err()
    {
        halt.cancel();
    }
    let host = tokio::spawn(host.run(halt.clone()));
    let shared = Shared::default();
    let reader_shared = shared.clone();
    let reader_out = outgoing.clone();
    let reader = tokio::spawn(async move {
        let mut next: RequestId = 0;
        while let Some(inbound) = incoming.recv().await {
            next += 1;
            if !read(inbound, next, &reader_shared, &handle, &reader_out).await {
                break;
            }
        }
        // EOF: dropping the handle closes the host's input.
        drop(handle);
    });
    while let Some(event) = events.recv().await {
        let line = match event {
            HostEvent::Session(event) => Some(crate::convert::event_line(&event)),
            HostEvent::Reply { id, result } => reply_line(&shared, id, result),
        };
        if let Some(line) = line
            && outgoing.send(line).await.is_err()
            && !halt.is_cancelled()
        {
            tracing::warn!("stdout is closed; stopping");
            halt.cancel();
        }
    }
    reader.abort();
    stop_watch.abort();
    let _ = host.await;
}

/// The response line for the host's answer to request `id` (none for a notification).
fn reply_line(
    shared: &Shared,
    id: RequestId,
    result: Result<rho_core::host::Response, rho_core::host::HostError>,
) -> Option<String> {
    let (json_id, method) = {
        let mut in_flight = lock(shared);
        let unanswered = in_flight.by_request.remove(&id)?;
        if let Some(key) = &unanswered.key {
            in_flight.ids.remove(key);
        }
        (unanswered.id, unanswered.method)
    };
    let json_id = json_id?;
    Some(match result {
        Ok(response) => match method.encode(response) {
            Ok(json) => match RawValue::from_string(json) {
                Ok(raw) => result_line(&json_id, &raw),
                Err(e) => error_line(Some(&json_id), ErrorCode::Internal, &e.to_string()),
            },
            Err(e) => error_line(Some(&json_id), ErrorCode::Internal, &e.to_string()),
        },
        Err(error) => {
            let code = match error.kind {
                HostErrorKind::InvalidRequest => ErrorCode::InvalidRequest,
                HostErrorKind::InvalidParams => ErrorCode::InvalidParams,
                HostErrorKind::Internal => ErrorCode::Internal,
            };
            error_line(Some(&json_id), code, &error.message)
        }
    })
}

/// Handles one inbound unit: a framing or params error is answered here; a request becomes an
/// operation. Returns `false` when the host stopped.
async fn read(
    inbound: Inbound,
    number: RequestId,
    shared: &Shared,
    handle: &HostHandle,
    out: &mpsc::Sender<String>,
) -> bool {
    let line = match inbound {
        Inbound::Line(line) => line,
        Inbound::Oversized => {
            let message = format!(
                "the line is longer than {} MiB",
                crate::jsonrpc::MAX_LINE_BYTES >> 20
            );
            return out
                .send(error_line(None, ErrorCode::InvalidRequest, &message))
                .await
                .is_ok();
        }
    };
    let (request, method, operation) = match decode_line(&line) {
        Decoded::Blank | Decoded::Refused(None) | Decoded::Answered(None) => return true,
        Decoded::Refused(Some(response)) | Decoded::Answered(Some(response)) => {
            return out.send(response).await.is_ok();
        }
        Decoded::Accepted {
            request,
            method,
            operation,
        } => (request, method, operation),
    };
    let key = request.id_key();
    let duplicate = {
        let mut in_flight = lock(shared);
        match &key {
            Some(key) if !in_flight.ids.insert(key.clone()) => true,
            _ => {
                let unanswered = Unanswered {
                    id: request.id.clone(),
                    key,
                    method,
                };
                in_flight.by_request.insert(number, unanswered);
                false
            }
        }
    };
    if duplicate {
        let message = "a request with this id is still in flight";
        return match request.id.as_deref() {
            Some(id) => {
                let line = error_line(Some(id), ErrorCode::InvalidRequest, message);
                out.send(line).await.is_ok()
            }
            None => true,
        };
    }
    handle.submit(number, operation).await.is_ok()
}

/// What one inbound line becomes before the host sees it.
pub(crate) enum Decoded {
    /// A blank line: nothing to do.
    Blank,
    /// Refused by the codec: the error response to send (`None` for a notification, which
    /// gets no response).
    Refused(Option<String>),
    /// Answered by the codec itself (`rpc.discover`, which needs no host): the result to
    /// send (`None` for a notification).
    Answered(Option<String>),
    /// A request for the host.
    Accepted {
        /// The request as parsed (its id answers it).
        request: Request,
        /// Its method's table entry.
        method: Method,
        /// The host operation its params decode into.
        operation: Operation,
    },
}

/// Parses one line and decodes its params through the method table (framing errors, unknown
/// methods and params that do not fit are answered here; nothing reaches the host).
pub(crate) fn decode_line(line: &[u8]) -> Decoded {
    let request = match parse_line(line) {
        Ok(Some(request)) => request,
        Ok(None) => return Decoded::Blank,
        Err(error) => return Decoded::Refused(Some(error.response_line())),
    };
    let refuse = |code: ErrorCode, message: &str| refused(&request, code, message);
    if request.method == DISCOVER {
        return discover(&request);
    }
    let Some(method) = Method::from_name(&request.method) else {
        return refuse(
            ErrorCode::MethodNotFound,
            &format!("no method {:?}", request.method),
        );
    };
    match method.decode(&request) {
        Ok(operation) => Decoded::Accepted {
            request,
            method,
            operation,
        },
        Err(error) => refuse(error.code(), &error.to_string()),
    }
}

/// The refusal of `request`: an error response when it has an id, nothing for a notification.
fn refused(request: &Request, code: ErrorCode, message: &str) -> Decoded {
    Decoded::Refused(
        request
            .id
            .as_deref()
            .map(|id| error_line(Some(id), code, message)),
    )
}

/// Answers `rpc.discover` (no params) with the OpenRPC document, at once: it asks nothing of
/// the session, so it is answered even while a turn runs.
fn discover(request: &Request) -> Decoded {
    let refuse = |code: ErrorCode, message: &str| refused(request, code, message);
    if let Err(error) = request.params::<NoParams>() {
        return refuse(error.code(), &error.to_string());
    }
    let Some(id) = request.id.as_deref() else {
        return Decoded::Answered(None);
    };
    match crate::openrpc::discover_result() {
        Some(document) => Decoded::Answered(Some(result_line(id, &document))),
        None => refuse(
            ErrorCode::Internal,
            "the OpenRPC document could not be written",
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::*;

    fn line(method: &str, params: Value) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            .to_string()
            .into_bytes()
    }

    fn operation(method: &str, params: Value) -> Operation {
        match decode_line(&line(method, params.clone())) {
            Decoded::Accepted { operation, .. } => operation,
            Decoded::Refused(response) => panic!("{method} {params} refused: {response:?}"),
            _ => panic!("{method} {params} not accepted"),
        }
    }

    fn refusal(method: &str, params: Value) -> Value {
        match decode_line(&line(method, params.clone())) {
            Decoded::Refused(Some(response)) => serde_json::from_str(&response).unwrap(),
            _ => panic!("{method} {params} was not refused"),
        }
    }

    fn complete(arguments: &[(&str, &str)]) -> Operation {
        Operation::Complete {
            command: "/mcp:s:p".to_owned(),
            argument: "city".to_owned(),
            value: "Pa".to_owned(),
            arguments: arguments
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    /// By-position params follow the document's order: required ones first, as declared, then
    /// optional ones by name; a `null` in an optional slot is an argument left out.
    #[test]
    fn params_by_position_are_named_in_the_documents_order() {
        let by_name = json!({"command": "/mcp:s:p", "argument": "city", "value": "Pa",
                             "filledArguments": {"state": "TX"}});
        let by_position = json!(["/mcp:s:p", "city", "Pa", {"state": "TX"}]);
        assert_eq!(operation("complete", by_name), complete(&[("state", "TX")]));
        assert_eq!(
            operation("complete", by_position),
            complete(&[("state", "TX")])
        );
        assert_eq!(
            operation("complete", json!(["/mcp:s:p", "city", "Pa"])),
            complete(&[])
        );
        assert_eq!(
            operation("prompt", json!(["go", null, true])),
            Operation::Steer("go".to_owned())
        );
        assert_eq!(
            operation("prompt", json!(["go", [{"server": "s", "uri": "u"}]])),
            Operation::Prompt {
                message: "go".to_owned(),
                attachments: vec![("s".to_owned(), "u".to_owned())],
            }
        );
        assert_eq!(
            operation("setModel", json!(["m"])),
            Operation::SetModel("m".to_owned())
        );
        assert_eq!(operation("getState", json!([])), Operation::GetState);
        assert_eq!(
            operation("questionResponse", json!([7, "decline"])),
            Operation::AnswerQuestion {
                question: 7,
                answer: rho_core::session::QuestionAnswer::Decline,
            }
        );
    }

    #[test]
    fn params_by_position_beyond_the_methods_params_are_refused() {
        for (method, params) in [
            ("getState", json!([1])),
            ("setModel", json!(["m", "extra"])),
            ("complete", json!(["/mcp:s:p", "city", "Pa", {}, 5])),
        ] {
            let error = refusal(method, params);
            assert_eq!(error["error"]["code"], -32602, "{error}");
            assert!(
                error["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("by position"),
                "{error}"
            );
        }
        // A required param left null stays null, and is refused by its type.
        let error = refusal("setModel", json!([null]));
        assert_eq!(error["error"]["code"], -32602, "{error}");
    }

    /// `complete`'s former `arguments` param is still read; both names at once are refused.
    #[test]
    fn the_former_name_of_filled_arguments_is_still_accepted() {
        let old = json!({"command": "/mcp:s:p", "argument": "city", "value": "Pa",
                         "arguments": {"state": "TX"}});
        assert_eq!(operation("complete", old), complete(&[("state", "TX")]));
        let both = json!({"command": "/mcp:s:p", "argument": "city", "value": "Pa",
                          "arguments": {}, "filledArguments": {}});
        assert_eq!(refusal("complete", both)["error"]["code"], -32602);
    }

    fn answered(line: &[u8]) -> Option<Value> {
        match decode_line(line) {
            Decoded::Answered(response) => response.map(|r| serde_json::from_str(&r).unwrap()),
            _ => panic!(
                "{} was not answered by the codec",
                String::from_utf8_lossy(line)
            ),
        }
    }

    /// `rpc.discover` answers the document itself, with or without empty params; other
    /// params are refused and a notification gets nothing.
    #[test]
    fn rpc_discover_answers_the_openrpc_document() {
        let document = crate::openrpc::document();
        for request in [
            json!({"jsonrpc": "2.0", "id": "d", "method": "rpc.discover"}),
            json!({"jsonrpc": "2.0", "id": "d", "method": "rpc.discover", "params": []}),
            json!({"jsonrpc": "2.0", "id": "d", "method": "rpc.discover", "params": {}}),
        ] {
            let response = answered(request.to_string().as_bytes()).unwrap();
            assert_eq!(response["id"], "d");
            assert_eq!(response["result"], document, "{request}");
        }
        for params in [json!({"x": 1}), json!([1])] {
            let error = refusal("rpc.discover", params);
            assert_eq!(error["error"]["code"], -32602, "{error}");
        }
        let notification = json!({"jsonrpc": "2.0", "method": "rpc.discover"});
        assert_eq!(answered(notification.to_string().as_bytes()), None);
    }

    /// Every shape of a question's answer, accepted or refused: what each becomes.
    #[test]
    fn question_responses_decode_into_the_hosts_answer() {
        let cases = [
            json!({"questionId": 1, "action": "accept", "answers": {"name": "Ann", "n": "2"}}),
            json!({"questionId": 1, "action": "accept"}),
            json!({"questionId": 1, "action": "accept", "answers": null}),
            json!({"questionId": 1, "action": "decline"}),
            json!({"questionId": 1, "action": "decline", "answers": {"a": "b"}}),
            json!({"questionId": 1, "action": "cancel"}),
            json!([2, "accept", {"x": "y"}]),
            json!([2, "cancel"]),
            json!({"questionId": 1, "action": "maybe"}),
            json!({"questionId": 1, "action": "Accept"}),
            json!({"questionId": 1}),
            json!({"action": "accept"}),
            json!({"questionId": 1, "action": "accept", "extra": 1}),
            json!({"questionId": 1, "action": "accept", "answers": {"n": 1}}),
            json!({"questionId": 1, "action": "accept", "answers": []}),
            json!({"questionId": -1, "action": "accept"}),
        ];
        let lines: Vec<String> = cases
            .into_iter()
            .map(|params| {
                let outcome = match decode_line(&line("questionResponse", params.clone())) {
                    Decoded::Accepted { operation, .. } => format!("{operation:?}"),
                    Decoded::Refused(Some(response)) => response,
                    _ => "no answer".to_owned(),
                };
                format!("{params} => {outcome}")
            })
            .collect();
        insta::assert_snapshot!("question_responses", lines.join("\n"));
    }
}
