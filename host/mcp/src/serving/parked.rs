//! Served calls and prompt expansions of 2026-07-28 clients that stopped to ask (SEP-2322,
//! multi round-trip requests). Such a client cannot be sent a request, so when an upstream
//! server asks a question during its call, the call keeps running while rho answers the
//! client with an `InputRequiredResult`: the question as an input request, and a
//! `requestState` that names the waiting call. The client retries with its answers and that
//! state; rho hands the answers to the waiting questions and carries on until the call
//! finishes or asks again.
//!
//! The state is a random token, new each round, valid for one retry of the same tool or prompt, for
//! [`PARKED_FOR`] at most; at most [`MAX_PARKED`] calls wait at once (the oldest is cancelled
//! first). A call that is dropped, expired or pushed out is cancelled, upstream included.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use std::sync::Arc;

use rho_component::{Asker, CancelSignal, PassedOutput};
use rmcp::model::{ClientCapabilities, InputRequiredResult};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::downstream::{self, Asked, answers_request};
use super::{ServedPrompt, ServedRefusal};

/// How long a call waits for its client to retry with answers.
pub(super) const PARKED_FOR: Duration = Duration::from_secs(600);

/// The most calls waiting for answers at once.
pub(super) const MAX_PARKED: usize = 64;

/// The most questions one call may have open at once (the rest wait their turn).
const MAX_OPEN: usize = 16;

/// What a client asked for that may stop to ask it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Asking {
    /// A call of the tool served under this name.
    Tool(String),
    /// An expansion of the prompt served under this name.
    Prompt(String),
}

/// How it ended.
pub(super) enum Outcome {
    /// The call's result (`None`: the set has no such tool).
    Tool(Option<PassedOutput>),
    /// The prompt's messages, or why there are none.
    Prompt(Result<ServedPrompt, ServedRefusal>),
}

/// A served call or prompt expansion that may stop to ask its client: its task, and its
/// questions.
pub(super) struct Call {
    /// What it does (a retry must ask for the same).
    asking: Asking,
    /// `None` once it has been awaited to its end.
    task: Option<JoinHandle<Outcome>>,
    cancel: CancelSignal,
    asked: mpsc::Receiver<Asked>,
    /// Questions put to the client and not yet answered, by their input request key.
    open: BTreeMap<String, Asked>,
    /// Responses the client sent for keys not asked yet (a client may answer what it expects
    /// to be asked in its first request): used when a question of that key comes.
    early: Map<String, Value>,
    /// Questions asked so far (each key is `input-<n>`).
    count: u64,
}

/// What a call did next.
pub(super) enum Step {
    /// It finished (`None`: its task failed).
    Done(Option<Outcome>),
    /// It asks: the `inputRequests` of the result.
    Asks(Map<String, Value>),
}

impl Call {
    /// A call running as `task` (cancelled by `cancel`), whose questions come on `asked`.
    pub(super) fn new(
        asking: Asking,
        task: JoinHandle<Outcome>,
        cancel: CancelSignal,
        asked: mpsc::Receiver<Asked>,
    ) -> Self {
        Self {
            asking,
            task: Some(task),
            cancel,
            asked,
            open: BTreeMap::new(),
            early: Map::new(),
            count: 0,
        }
    }

    /// Hands the client's `responses` to the open questions they answer. A response of the
    /// wrong shape leaves its question open (asked again); one for a key not open is kept
    /// for a question of that key that comes later (at most [`MAX_OPEN`]).
    pub(super) fn answer(&mut self, responses: Map<String, Value>) {
        for (key, response) in responses {
            match self.open.remove(&key) {
                Some(asked) => {
                    if let Err(asked) = settle(asked, response) {
                        self.open.insert(key, asked);
                    }
                }
                None if self.early.len() < MAX_OPEN => {
                    self.early.insert(key, response);
                }
                None => {}
            }
        }
    }

    /// Runs the call until it finishes or has questions for the client. Open questions the
    /// client left unanswered are asked again at once.
    pub(super) async fn step(&mut self) -> Step {
        // A question no longer waits once its call's budget ran out (it was declined): it is
        // not asked again.
        self.open.retain(|_, asked| !asked.answer.is_closed());
        while self.open.is_empty() {
            let Some(task) = self.task.as_mut() else {
                return Step::Done(None);
            };
            let done = tokio::select! {
                biased;
                asked = self.asked.recv() => match asked {
                    Some(asked) => {
                        self.add(asked);
                        None
                    }
                    // Its asker is gone, so the call has ended.
                    None => Some(None),
                },
                done = &mut *task => Some(Some(done.ok())),
            };
            let done = match done {
                Some(None) => match self.task.as_mut() {
                    Some(task) => Some(task.await.ok()),
                    None => Some(None),
                },
                Some(Some(done)) => Some(done),
                None => None,
            };
            if let Some(done) = done {
                self.task = None;
                return Step::Done(done);
            }
            // Questions asked together go out together.
            tokio::task::yield_now().await;
            while self.open.len() < MAX_OPEN {
                let Ok(asked) = self.asked.try_recv() else {
                    break;
                };
                self.add(asked);
            }
        }
        Step::Asks(
            self.open
                .iter()
                .map(|(key, asked)| (key.clone(), asked.request.clone()))
                .collect(),
        )
    }

    /// Opens `asked` under the upstream server's key (or `input-<n>` when it gave none or that
    /// key is open already), unless the client answered that key early.
    fn add(&mut self, asked: Asked) {
        // Its call's budget ran out while it waited to be passed on: it was declined.
        if asked.answer.is_closed() {
            return;
        }
        let key = match &asked.key {
            Some(key) if !self.open.contains_key(key) => key.clone(),
            _ => loop {
                self.count += 1;
                let key = format!("input-{}", self.count);
                if !self.open.contains_key(&key) {
                    break key;
                }
            },
        };
        let asked = match self.early.remove(&key) {
            Some(response) => match settle(asked, response) {
                Ok(()) => return,
                Err(asked) => asked,
            },
            None => asked,
        };
        self.open.insert(key, asked);
    }
}

/// Gives `asked` the client's `response` when it is of the right shape; otherwise hands the
/// question back.
fn settle(asked: Asked, response: Value) -> Result<(), Asked> {
    let method = asked.request["method"].as_str().unwrap_or_default();
    if !answers_request(method, &response) {
        return Err(asked);
    }
    // The question's asker may have gone (the call ended); nothing to do then.
    let _ = asked.answer.send(response);
    Ok(())
}

/// How long a dropped call may take to end after its cancellation (telling its server so)
/// before it is aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

impl Drop for Call {
    fn drop(&mut self) {
        // The cancellation makes the call tell its upstream server (`notifications/cancelled`)
        // and end; it is aborted only if it has not ended a moment later.
        self.cancel.cancel();
        let Some(task) = self.task.take() else {
            return;
        };
        if task.is_finished() {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let abort = task.abort_handle();
                    if tokio::time::timeout(CANCEL_GRACE, task).await.is_err() {
                        abort.abort();
                    }
                });
            }
            Err(_) => task.abort(),
        }
    }
}

/// The calls waiting for their clients' answers, by `requestState` token.
#[derive(Default)]
pub(super) struct Parked(Mutex<HashMap<String, (Instant, Call)>>);

/// Why a retry found no waiting call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotParked {
    /// No call waits under that state: never issued, already used, expired or pushed out.
    Unknown,
    /// The state belongs to a call of another tool or prompt.
    OtherRequest,
}

impl NotParked {
    /// The message of the `-32602` error the client gets.
    pub(super) fn message(self) -> &'static str {
        match self {
            Self::Unknown => {
                "requestState is not one rho issued, or its call has ended (used, expired after 10 minutes, or cancelled)"
            }
            Self::OtherRequest => "requestState belongs to a request for another tool or prompt",
        }
    }
}

impl Parked {
    /// Keeps `call` until its client retries; returns the `requestState` that names it, or
    /// `None` (the call dropped, so cancelled) when the system has no randomness to make one.
    pub(super) fn park(&self, call: Call) -> Option<String> {
        let token = token()?;
        let mut calls = self.calls();
        let now = Instant::now();
        calls.retain(|_, (since, _)| now.duration_since(*since) < PARKED_FOR);
        while calls.len() >= MAX_PARKED {
            let oldest = calls
                .iter()
                .min_by_key(|(_, (since, _))| *since)
                .map(|(token, _)| token.clone());
            let Some(oldest) = oldest else { break };
            calls.remove(&oldest);
        }
        calls.insert(token.clone(), (now, call));
        Some(token)
    }

    /// Takes the call `state` names, for a retry asking for `asking`.
    pub(super) fn take(&self, state: &str, asking: &Asking) -> Result<Call, NotParked> {
        let mut calls = self.calls();
        let now = Instant::now();
        calls.retain(|_, (since, _)| now.duration_since(*since) < PARKED_FOR);
        match calls.get(state) {
            None => return Err(NotParked::Unknown),
            Some((since, _)) if since.elapsed() >= PARKED_FOR => {
                calls.remove(state);
                return Err(NotParked::Unknown);
            }
            Some((_, call)) if call.asking != *asking => return Err(NotParked::OtherRequest),
            Some(_) => {}
        }
        calls
            .remove(state)
            .map(|(_, call)| call)
            .ok_or(NotParked::Unknown)
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Call)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// 128 random bits as hex: an unguessable name for a waiting call. `None` when the system
/// has no randomness to give (a guessable name would let another client take the call).
fn token() -> Option<String> {
    let mut bytes = [0u8; 16];
    let filled = rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty());
    filled
        .is_ok_and(|n| n == bytes.len())
        .then(|| bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a 2026-07-28 client's retry of a call carries.
pub(super) struct Retry {
    /// The `requestState` of the result it answers.
    pub state: Option<String>,
    /// Its `inputResponses`.
    pub responses: Option<serde_json::Map<String, Value>>,
}

/// What a 2026-07-28 request that may ask led to.
pub(super) enum Reply {
    /// It finished.
    Done(Outcome),
    /// It asks: the result for the client.
    Asks(InputRequiredResult),
}

impl super::Gateway {
    /// A request of a 2026-07-28 client that may ask it: a first request starts `asking` with
    /// `start` (given the asker that turns questions into input requests, and the cancel
    /// signal), a retry (`requestState`) takes the waiting one and hands it the client's
    /// answers; either way it runs until it finishes or asks (an `InputRequiredResult` naming
    /// the waiting call).
    pub(super) async fn asking(
        &self,
        asking: Asking,
        retry: Retry,
        capabilities: Option<ClientCapabilities>,
        context: &RequestContext<RoleServer>,
        start: impl FnOnce(Arc<dyn Asker>, CancelSignal) -> JoinHandle<Outcome>,
    ) -> Result<Reply, rmcp::ErrorData> {
        let mut call = match &retry.state {
            Some(state) => self
                .parked
                .take(state, &asking)
                .map_err(|why| rmcp::ErrorData::invalid_params(why.message(), None))?,
            None => {
                let cancel = CancelSignal::new();
                let (to_call, asked) = tokio::sync::mpsc::channel(8);
                let log_level = context.meta.log_level().map(crate::connection::rho_level);
                let asker = Arc::new(downstream::Downstream::input_requests(
                    to_call,
                    capabilities.as_ref(),
                    &context.peer,
                    log_level,
                ));
                let task = start(asker, cancel.clone());
                Call::new(asking.clone(), task, cancel, asked)
            }
        };
        if let Some(responses) = retry.responses {
            call.answer(responses);
        }
        // A request the client cancels (or abandons) drops the call, which cancels it.
        let step = tokio::select! {
            step = call.step() => step,
            () = context.ct.cancelled() => {
                return Err(rmcp::ErrorData::internal_error("the request was cancelled", None));
            }
        };
        match step {
            Step::Done(Some(outcome)) => Ok(Reply::Done(outcome)),
            Step::Done(None) => Err(rmcp::ErrorData::internal_error(
                format!("{asking:?} ended without a result"),
                None,
            )),
            Step::Asks(asks) => {
                let requests = serde_json::from_value(Value::Object(asks)).map_err(|e| {
                    rmcp::ErrorData::internal_error(
                        format!("{asking:?}: a question cannot be passed on: {e}"),
                        None,
                    )
                })?;
                let state = self.parked.park(call).ok_or_else(|| {
                    rmcp::ErrorData::internal_error(
                        "the system gave no randomness to name the waiting call",
                        None,
                    )
                })?;
                Ok(Reply::Asks(InputRequiredResult::new(
                    Some(requests),
                    Some(state),
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rho_component::ToolOutput;
    use serde_json::json;

    /// A call whose task asks one form, then finishes with the answer's action as its text.
    fn asking_call(tool: &str) -> Call {
        let (to_call, asked) = mpsc::channel(4);
        let cancel = CancelSignal::new();
        let task = tokio::spawn(async move {
            let key = Some("name".to_owned());
            let params = json!({"message": "name?"});
            let response =
                downstream::input_request(&to_call, key, "elicitation/create", params).await;
            let action = response
                .as_ref()
                .and_then(|r| r["action"].as_str())
                .unwrap_or_default()
                .to_owned();
            Outcome::Tool(Some(PassedOutput::Rendered(ToolOutput::text(action))))
        });
        Call::new(Asking::Tool(tool.to_owned()), task, cancel, asked)
    }

    fn text(step: Step) -> String {
        match step {
            Step::Done(Some(Outcome::Tool(Some(PassedOutput::Rendered(output))))) => output.text,
            Step::Done(_) => panic!("no text"),
            Step::Asks(asks) => panic!("asks: {asks:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_asks_is_parked_and_finishes_with_the_answer() {
        let parked = Parked::default();
        let mut call = asking_call("t");
        let Step::Asks(asks) = call.step().await else {
            panic!("it should ask")
        };
        assert_eq!(asks["name"]["method"], "elicitation/create");
        let state = parked.park(call).unwrap();
        assert_eq!(state.len(), 32);
        let t = Asking::Tool("t".to_owned());
        assert_eq!(
            parked.take(&state, &Asking::Prompt("t".to_owned())).err(),
            Some(NotParked::OtherRequest)
        );
        assert_eq!(
            parked.take(&format!("{state}-TAMPERED"), &t).err(),
            Some(NotParked::Unknown)
        );
        let mut call = parked.take(&state, &t).unwrap();
        assert_eq!(parked.take(&state, &t).err(), Some(NotParked::Unknown));
        // A key rho did not ask and a malformed answer leave the question open.
        call.answer(
            [
                ("nope".to_owned(), json!({"action": "accept"})),
                ("name".to_owned(), json!(12345)),
            ]
            .into_iter()
            .collect(),
        );
        let Step::Asks(again) = call.step().await else {
            panic!("asked again")
        };
        assert_eq!(again, asks);
        call.answer(
            [("name".to_owned(), json!({"action": "decline"}))]
                .into_iter()
                .collect(),
        );
        assert_eq!(text(call.step().await), "decline");
    }

    #[tokio::test]
    async fn a_dropped_call_is_cancelled_and_left_to_end_rather_than_aborted() {
        let (_to_call, asked) = mpsc::channel(1);
        let cancel = CancelSignal::new();
        let (signal, ended) = (
            cancel.clone(),
            Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let seen = Arc::clone(&ended);
        let task = tokio::spawn(async move {
            // What a call does on cancellation: tell its server, then end.
            signal.cancelled().await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
            Outcome::Tool(None)
        });
        drop(Call::new(Asking::Tool("t".to_owned()), task, cancel, asked));
        for _ in 0..100 {
            if ended.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the call was aborted before it could end");
    }

    #[tokio::test]
    async fn a_response_sent_before_the_question_answers_it() {
        let mut call = asking_call("t");
        call.answer(
            [("name".to_owned(), json!({"action": "cancel"}))]
                .into_iter()
                .collect(),
        );
        assert_eq!(text(call.step().await), "cancel");
    }

    #[tokio::test]
    async fn a_dropped_call_is_cancelled_and_the_oldest_goes_first() {
        let parked = Parked::default();
        let mut first = None;
        let mut signals = Vec::new();
        for _ in 0..=MAX_PARKED {
            let mut call = asking_call("t");
            signals.push(call.cancel.clone());
            let Step::Asks(_) = call.step().await else {
                panic!("it should ask")
            };
            let state = parked.park(call).unwrap();
            first.get_or_insert(state);
        }
        assert!(signals[0].is_cancelled(), "the oldest was pushed out");
        assert!(!signals[1].is_cancelled());
        assert_eq!(
            parked
                .take(first.as_deref().unwrap(), &Asking::Tool("t".to_owned()))
                .err(),
            Some(NotParked::Unknown)
        );
    }
}
