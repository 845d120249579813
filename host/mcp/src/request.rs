//! Sending one request that may take several rounds (`tools/call`, `prompts/get`,
//! `resources/read`) within its budget: progress routed while it runs, cancellation and budget
//! expiry told to the server, and 2026-07-28 multi round-trip requests (SEP-2322) driven by
//! answering every input request and retrying with the answers and the server's
//! `requestState` exactly as received.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, InputResponses, ReadResourceRequest, ReadResourceRequestParams,
    ServerResult,
};
use rmcp::service::ServiceError;
use tokio::sync::mpsc;

use crate::connection::Connection;
use crate::handler::{Progress, progress_key};
use crate::questions::InFlight;

/// At most this many rounds of one request (the first and its MRTR retries): a server asking
/// for input forever would otherwise keep the request alive until its budget.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// Why a request produced no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The budget ran out after this many seconds (the server was told).
    Timeout(f64),
    /// The caller cancelled (the server was told).
    Cancelled,
    /// The server answered with an error, or the answer could not be used.
    Failed(String),
    /// The session failed under the request (the process exited, the connection broke):
    /// an answer never came. `delivered` is false only when the request provably never
    /// reached the server (the session was already gone, the connection was refused), so
    /// sending it again cannot do anything twice.
    Lost {
        /// What failed.
        message: String,
        /// Whether the server may have received the request.
        delivered: bool,
    },
    /// The server refused the request's authorization (HTTP 401, or 403
    /// `insufficient_scope`), with its `WWW-Authenticate` challenge.
    Unauthorized {
        /// The challenge.
        challenge: String,
        /// What failed, for the person.
        message: String,
    },
}

impl Failure {
    /// A request that could not be sent or was answered with an error. A JSON-RPC error is
    /// the server's answer; a closed transport or a failed send is a lost session.
    fn of(error: &ServiceError) -> Self {
        if let Some(challenge) = error.auth_challenge() {
            return Self::Unauthorized {
                challenge: challenge.to_owned(),
                message: error.to_string(),
            };
        }
        match error {
            ServiceError::TransportClosed => Self::Lost {
                message: "the connection to the server closed".into(),
                delivered: true,
            },
            ServiceError::TransportSend(e) => Self::Lost {
                message: describe(error),
                delivered: !never_sent(e.error.as_ref()),
            },
            _ => Self::Failed(describe(error)),
        }
    }

    /// A request the session refused to take: it never left rho.
    fn not_sent(error: &ServiceError) -> Self {
        match Self::of(error) {
            Self::Lost { message, .. } => Self::Lost {
                message,
                delivered: false,
            },
            other => other,
        }
    }
}

/// What a request error says to a person: a transport error without rmcp's name for the
/// transport type (`Transport [rmcp::transport::worker::WorkerTransport<...>] error`).
pub(crate) fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(e) => format!("transport error: {}", e.error),
        other => other.to_string(),
    }
}

/// Whether a transport error proves the request never reached the server: the connection
/// was refused (nothing was sent), or a stdio server's end of the pipe was already closed.
fn never_sent(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut source = Some(error);
    while let Some(current) = source {
        // rho's HTTP client (with or without OAuth) fails with reqwest's errors, which rmcp
        // wraps without naming them as the source.
        let refused = match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(e)) => e.is_connect(),
            _ => current
                .downcast_ref::<reqwest::Error>()
                .is_some_and(reqwest::Error::is_connect),
        };
        if refused {
            return true;
        }
        if current
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// The parameters of a request that can be retried with input responses.
pub(crate) trait Retry: Clone {
    fn request(&self) -> ClientRequest;
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>);
}

impl Retry for CallToolRequestParams {
    fn request(&self) -> ClientRequest {
        ClientRequest::CallToolRequest(CallToolRequest::new(self.clone()))
    }
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
}

impl Retry for GetPromptRequestParams {
    fn request(&self) -> ClientRequest {
        ClientRequest::GetPromptRequest(GetPromptRequest::new(self.clone()))
    }
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
}

impl Retry for ReadResourceRequestParams {
    fn request(&self) -> ClientRequest {
        ClientRequest::ReadResourceRequest(ReadResourceRequest::new(self.clone()))
    }
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
}

enum Outcome {
    Done(Box<Result<Result<ServerResult, ServiceError>, tokio::sync::oneshot::error::RecvError>>),
    TimedOut,
    Cancelled,
}

impl Connection {
    /// The answers to one round's input requests: one at a time when they go to one person,
    /// all at once when the call's asker has a person of its own for it (a gateway's client,
    /// which then gets them together).
    async fn answer_round(
        &self,
        flight: &InFlight,
        requests: rmcp::model::InputRequests,
    ) -> Result<InputResponses, Failure> {
        let questions = &self.client.questions;
        let mut responses = InputResponses::new();
        if flight
            .asker
            .as_ref()
            .is_none_or(|asker| asker.asks_one_person())
        {
            for (key, request) in requests {
                let answer = crate::input::answer(questions, flight, &key, &request)
                    .await
                    .map_err(Failure::Failed)?;
                responses.insert(key, answer);
            }
            return Ok(responses);
        }
        let answers =
            futures_util::future::join_all(requests.into_iter().map(|(key, request)| async move {
                let answer = crate::input::answer(questions, flight, &key, &request).await;
                (key, answer)
            }))
            .await;
        for (key, answer) in answers {
            responses.insert(key, answer.map_err(Failure::Failed)?);
        }
        Ok(responses)
    }

    /// Sends `params` until the server gives a result other than "input required", answering
    /// input requests through `flight`'s asker, within `flight`'s budget.
    pub(crate) async fn drive<P: Retry>(
        &self,
        mut params: P,
        flight: &InFlight,
        progress: Option<&mpsc::Sender<Progress>>,
    ) -> Result<ServerResult, Failure> {
        let mut state_only_rounds: u32 = 0;
        for _ in 0..MAX_INPUT_ROUNDS {
            let mut handle = self
                .service
                .send_cancellable_request(params.request(), self.request_options())
                .await
                .map_err(|e| Failure::not_sent(&e))?;
            let key = progress_key(&handle.progress_token);
            if let Some(sender) = progress
                && let Ok(mut routes) = self.client.progress.lock()
            {
                routes.insert(key.clone(), sender.clone());
            }
            let outcome = tokio::select! {
                received = &mut handle.rx => Outcome::Done(Box::new(received)),
                () = flight.budget.expired() => Outcome::TimedOut,
                () = flight.cancel.cancelled() => Outcome::Cancelled,
            };
            // rmcp hands each notification to a spawned task, so a report or log message the
            // server sent just before its result may still be on its way: let queued tasks run
            // once before the route closes (and the call leaves the table log messages are
            // routed by). What arrives after that is late and not passed on.
            if matches!(outcome, Outcome::Done(_)) && (progress.is_some() || flight.asker.is_some())
            {
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
            }
            if let Ok(mut routes) = self.client.progress.lock() {
                routes.remove(&key);
            }
            let result = match outcome {
                Outcome::Done(received) => match *received {
                    Ok(result) => result,
                    Err(_) => Err(ServiceError::TransportClosed),
                },
                Outcome::TimedOut => {
                    // Tell the server to stop working on an abandoned request.
                    let _ = handle.cancel(Some("call budget exceeded".into())).await;
                    return Err(Failure::Timeout(flight.budget.elapsed().as_secs_f64()));
                }
                Outcome::Cancelled => {
                    let _ = handle.cancel(Some("cancelled by the user".into())).await;
                    return Err(Failure::Cancelled);
                }
            };
            let input = match result {
                Ok(ServerResult::InputRequiredResult(input)) => input,
                Ok(other) => return Ok(other),
                Err(e) => return Err(Failure::of(&e)),
            };
            let requests = input.input_requests.unwrap_or_default();
            if requests.is_empty() && input.request_state.is_none() {
                return Err(Failure::Failed(
                    "the server asked for input without saying what".into(),
                ));
            }
            if requests.is_empty() {
                // A state-only round: back off a little so a server polling through
                // requestState cannot spin the request.
                let pause = 50u64.saturating_mul(1 << state_only_rounds.min(3)).min(250);
                tokio::time::sleep(Duration::from_millis(pause)).await;
                state_only_rounds += 1;
            } else {
                state_only_rounds = 0;
            }
            let responses = self.answer_round(flight, requests).await?;
            // Absent when the server sent none: a retry never invents state.
            params.answered(
                (!responses.is_empty()).then_some(responses),
                input.request_state,
            );
        }
        Err(Failure::Failed(format!(
            "the server asked for input more than {MAX_INPUT_ROUNDS} times"
        )))
    }
}
