//! Questions a server asks during a request (elicitation, sampling), routed to the asker of the
//! call they belong to. The protocol names no call in a legacy `elicitation/create`, so rho
//! records each connection's in-flight calls and answers only when exactly one is running
//! (`docs/mcp.md`, "Questions from a server"); a 2026-07-28 input request arrives inside its
//! own call's result and goes to that call's asker directly. Either way the question passes the
//! server's [`QuestionGate`]: one open at a time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::{Asker, QuestionAnswer, SamplingAnswer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::options::Declared;
use crate::question_gate::{NotOpened, QuestionGate, Rejected};

/// One request that may ask questions: its asker (if the session gave one), its budget (paused
/// while a question is open), its cancellation, and whether it has ended.
pub(crate) struct InFlight {
    pub asker: Option<Arc<dyn Asker>>,
    pub budget: Arc<Budget>,
    pub cancel: CancellationToken,
    /// Turns of its questions outside the server's gate (an asker with a person per call):
    /// at most [`MAX_OPEN_ELSEWHERE`] open at once, the rest wait.
    open_elsewhere: tokio::sync::Semaphore,
    /// Cancelled when the request leaves the call table: its questions, open or waiting, get
    /// their answer at once instead of at the end of the budget.
    ended: CancellationToken,
}

impl InFlight {
    /// A request starting now with a budget of `limit`.
    pub(crate) fn new(
        asker: Option<Arc<dyn Asker>>,
        limit: Duration,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            asker,
            budget: Budget::start(limit),
            cancel,
            open_elsewhere: tokio::sync::Semaphore::new(MAX_OPEN_ELSEWHERE),
            ended: CancellationToken::new(),
        }
    }

    /// Resolves when a question of this request should stop waiting, with why.
    async fn stops(&self, request_cancel: &CancellationToken) -> &'static str {
        tokio::select! {
            () = self.cancel.cancelled() => "the call was cancelled",
            () = self.ended.cancelled() => "the call ended",
            () = self.budget.expired() => "the call ran out of budget",
            () = request_cancel.cancelled() => "the server cancelled the request",
        }
    }
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
        let left = match self.calls.0.lock() {
            Ok(mut table) => table.calls.remove(&self.id),
            Err(_) => None,
        };
        if let Some(flight) = left {
            flight.ended.cancel();
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

/// What a connection needs to answer questions: who asks, what it declared, and the gate
/// every question passes.
#[derive(Clone)]
pub(crate) struct Questions {
    pub server: String,
    pub declared: Declared,
    pub gate: Arc<QuestionGate>,
}

fn decline() -> Value {
    json!({ "action": "decline" })
}

/// Why a sampling request gets no result.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// rho will not run it, and why (error `-1`).
    Refused(String),
    /// The server already had a question open and the queue full.
    Rejected(Rejected),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Self::Refused(why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Self {
        Self::Refused(why.to_owned())
    }
}

impl Questions {
    /// The answer to an elicitation (`params` as JSON, `order` the schema's property order,
    /// `key` its input request key when it came as one): accept with typed content, decline,
    /// or cancel. Whatever rho cannot do is a decline, a first-class answer that lets the
    /// server carry on; it fails only when the server's gate rejects the question.
    pub(crate) async fn elicit(
        &self,
        flight: Result<&InFlight, &str>,
        params: &Value,
        order: Option<&[String]>,
        key: Option<&str>,
        request_cancel: &CancellationToken,
    ) -> Result<Value, Rejected> {
        let server = self.server.as_str();
        let why = match (self.declared.elicitation, flight) {
            (false, _) => Some("rho declared no elicitation"),
            (true, Err(why)) => Some(why),
            (true, Ok(flight)) if flight.asker.is_none() => Some("the call cannot ask the user"),
            _ => None,
        };
        if let Some(why) = why {
            tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
            return Ok(decline());
        }
        // URL mode: rho opens no browser, and accepting without opening one would tell the
        // server the user had answered.
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            tracing::info!(target: "rho::mcp", server, "URL elicitation declined");
            return Ok(decline());
        }
        let (Ok(flight), Some(asker)) = (flight, flight.ok().and_then(|f| f.asker.as_ref())) else {
            return Ok(decline());
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
                return Ok(decline());
            }
        };
        // A form rho cannot show is declined above without taking a place in the queue.
        let _turn = match self.turn(asker.as_ref(), flight, request_cancel).await {
            Ok(turn) => turn,
            Err(NotOpened::Rejected(rejected)) => return Err(rejected),
            Err(NotOpened::Ended(why)) => {
                tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
                return Ok(decline());
            }
        };
        let _open = flight.budget.question();
        let mut form = plan.form.clone();
        form.key = key.map(str::to_owned);
        form.schema = Some(schema.clone());
        let answer = tokio::select! {
            answer = tokio::time::timeout(flight.budget.limit(), asker.ask_form(server, form)) => answer.ok(),
            () = flight.cancel.cancelled() => None,
            () = flight.ended.cancelled() => None,
            () = request_cancel.cancelled() => None,
        };
        Ok(match answer {
            Some(QuestionAnswer::Accept(answers)) => match plan.content(&answers) {
                Ok(content) => json!({ "action": "accept", "content": content }),
                Err(why) => {
                    tracing::info!(target: "rho::mcp", server, "elicitation declined: {why}");
                    decline()
                }
            },
            Some(QuestionAnswer::Cancel) => json!({ "action": "cancel" }),
            Some(QuestionAnswer::Decline) => decline(),
            None => {
                tracing::info!(target: "rho::mcp", server, "elicitation declined: no answer within the call budget");
                decline()
            }
        })
    }

    /// The result of a sampling request (`params` as JSON, `key` its input request key when it
    /// came as one), or why it gets none.
    pub(crate) async fn sample(
        &self,
        flight: Result<&InFlight, &str>,
        params: &Value,
        key: Option<&str>,
        request_cancel: &CancellationToken,
    ) -> Result<Value, Refusal> {
        if !self.declared.sampling {
            return Err("rho did not offer sampling to this server".into());
        }
        let flight = flight?;
        let asker = flight
            .asker
            .as_ref()
            .ok_or("the call cannot ask the user")?;
        // A request rho would refuse anyway is refused without taking a place in the queue.
        let mut request = crate::sampling::request(params)?;
        request.key = key.map(str::to_owned);
        let _turn = match self.turn(asker.as_ref(), flight, request_cancel).await {
            Ok(turn) => turn,
            Err(NotOpened::Rejected(rejected)) => return Err(Refusal::Rejected(rejected)),
            Err(NotOpened::Ended(why)) => return Err(why.into()),
        };
        let _open = flight.budget.question();
        let answer = tokio::select! {
            answer = tokio::time::timeout(flight.budget.limit(), asker.sample(&self.server, request)) => {
                answer.map_err(|_| "no answer within the call budget")?
            }
            () = flight.cancel.cancelled() => return Err("the call was cancelled".into()),
            () = flight.ended.cancelled() => return Err("the call ended".into()),
            () = request_cancel.cancelled() => return Err("the server cancelled the request".into()),
        };
        match answer {
            SamplingAnswer::Reply {
                model,
                text,
                stop_reason,
            } => Ok(crate::sampling::result(&model, &text, &stop_reason)),
            SamplingAnswer::Refused(why) => Err(why.into()),
            SamplingAnswer::Cancel => Err("the user dismissed the request".into()),
        }
    }
}

impl Questions {
    /// The answer to `roots/list`: the roots of whoever made the call `flight` when it has its
    /// own (a gateway's client), within the call's budget; otherwise rho's workspace, as
    /// declared. Roots are no question to a person: no gate.
    pub(crate) async fn roots(&self, flight: Option<&InFlight>) -> Value {
        if let Some(flight) = flight
            && let Some(asker) = &flight.asker
        {
            let asked = tokio::select! {
                roots = asker.list_roots(&self.server) => roots,
                () = flight.cancel.cancelled() => None,
                () = flight.ended.cancelled() => None,
                () = flight.budget.expired() => None,
            };
            if let Some(roots) = asked {
                return roots;
            }
        }
        self.declared.roots_answer()
    }
}

impl Questions {
    /// A question's turn: through the server's gate when its asker puts questions to one
    /// person, at once (`None`) when every call has a person of its own.
    async fn turn<'a>(
        &self,
        asker: &dyn Asker,
        flight: &'a InFlight,
        request_cancel: &CancellationToken,
    ) -> Result<Turn<'a>, NotOpened> {
        if asker.asks_one_person() {
            return self
                .gate
                .open(flight.stops(request_cancel))
                .await
                .map(|open| Turn::Gate { _open: open });
        }
        // A client of its own per call, but still a bound: a server cannot open questions
        // without end; the rest wait their turn, as long as the call does.
        tokio::select! {
            permit = flight.open_elsewhere.acquire() => match permit {
                Ok(permit) => Ok(Turn::Elsewhere { _open: permit }),
                Err(_) => Err(NotOpened::Ended("the call ended")),
            },
            why = flight.stops(request_cancel) => Err(NotOpened::Ended(why)),
        }
    }
}

/// The most questions one call may have open at once when they skip the server's gate.
const MAX_OPEN_ELSEWHERE: usize = 16;

/// A question's turn, held while it is open.
enum Turn<'a> {
    /// Through the server's gate.
    Gate {
        _open: crate::question_gate::OpenQuestion,
    },
    /// One of its call's own turns, for an asker with a person per call.
    Elsewhere {
        _open: tokio::sync::SemaphorePermit<'a>,
    },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rho_component::{AskFuture, Form, SamplingRequest};

    use super::*;

    /// A person who never answers.
    struct Away;

    impl Asker for Away {
        fn ask_form<'a>(&'a self, _: &'a str, _: Form) -> AskFuture<'a, QuestionAnswer> {
            Box::pin(std::future::pending())
        }

        fn sample<'a>(&'a self, _: &'a str, _: SamplingRequest) -> AskFuture<'a, SamplingAnswer> {
            Box::pin(std::future::pending())
        }
    }

    /// A client of its own per call that never answers, counting what it was asked.
    #[derive(Default)]
    struct OwnClient(std::sync::atomic::AtomicUsize);

    impl Asker for OwnClient {
        fn ask_form<'a>(&'a self, _: &'a str, _: Form) -> AskFuture<'a, QuestionAnswer> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(std::future::pending())
        }

        fn sample<'a>(&'a self, _: &'a str, _: SamplingRequest) -> AskFuture<'a, SamplingAnswer> {
            Box::pin(std::future::pending())
        }

        fn asks_one_person(&self) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn a_calls_questions_past_the_cap_wait_their_turn_outside_the_gate() {
        let questions = questions();
        let calls = Calls::default();
        let asker = Arc::new(OwnClient::default());
        let flight = Arc::new(InFlight::new(
            Some(asker.clone()),
            Duration::from_secs(3600),
            CancellationToken::new(),
        ));
        let entered = calls.enter(Arc::clone(&flight));
        let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let asked: Vec<_> = (0..=MAX_OPEN_ELSEWHERE)
            .map(|_| ask_form(&questions, &calls, &form))
            .collect();
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        // The gate is not used, and one question waits rather than being declined.
        assert_eq!(
            asker.0.load(std::sync::atomic::Ordering::SeqCst),
            MAX_OPEN_ELSEWHERE
        );
        assert!(asked.iter().all(|q| !q.is_finished()));
        drop(entered);
        for question in asked {
            let answer = tokio::time::timeout(Duration::from_secs(5), question)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(answer.unwrap(), decline());
        }
    }

    /// Puts `form` (elicitation params) to the one call in flight in `calls`, in a task of its
    /// own.
    fn ask_form(
        questions: &Questions,
        calls: &Calls,
        form: &Value,
    ) -> tokio::task::JoinHandle<Result<Value, Rejected>> {
        let (questions, calls, form) = (questions.clone(), calls.clone(), form.clone());
        tokio::spawn(async move {
            let flight = calls.single();
            questions
                .elicit(
                    flight.as_deref().map_err(|w| *w),
                    &form,
                    None,
                    None,
                    &CancellationToken::new(),
                )
                .await
        })
    }

    fn questions() -> Questions {
        Questions {
            server: "s".into(),
            declared: Declared {
                root: None,
                elicitation: true,
                sampling: true,
            },
            gate: QuestionGate::new("s"),
        }
    }

    #[tokio::test]
    async fn the_open_and_the_waiting_questions_of_a_call_that_ends_are_answered_at_once() {
        let questions = questions();
        let calls = Calls::default();
        let flight = Arc::new(InFlight::new(
            Some(Arc::new(Away)),
            Duration::from_secs(3600),
            CancellationToken::new(),
        ));
        let entered = calls.enter(Arc::clone(&flight));
        let sampling = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5});
        let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let mut samples = Vec::new();
        for _ in 0..3 {
            let (questions, calls, params) = (questions.clone(), calls.clone(), sampling.clone());
            samples.push(tokio::spawn(async move {
                let flight = calls.single();
                questions
                    .sample(
                        flight.as_deref().map_err(|w| *w),
                        &params,
                        None,
                        &CancellationToken::new(),
                    )
                    .await
            }));
            tokio::task::yield_now().await;
        }
        let elicitation = ask_form(&questions, &calls, &form);
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        drop(entered);
        let wait = Duration::from_secs(5);
        for sample in samples {
            let refusal = tokio::time::timeout(wait, sample).await.unwrap().unwrap();
            assert!(
                matches!(&refusal, Err(Refusal::Refused(why)) if why == "the call ended"),
                "{refusal:?}"
            );
        }
        let answer = tokio::time::timeout(wait, elicitation)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(answer.unwrap(), decline());
        assert!(
            questions.gate.open(std::future::pending()).await.is_ok(),
            "the gate is free again"
        );
        assert_eq!(questions.gate.rejected().count(), 0);
    }
}
