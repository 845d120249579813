//! The dispatcher: a reader task owns the inbound side and demultiplexes every message.
//! Time-sensitive messages (steering prompts, `approvalResponse`, `abort`) are handled inline,
//! so they arrive while a turn runs; everything else is queued and handled one at a time by
//! the main task, which owns the session. A second ordinary prompt while one is queued or
//! running is refused with `-32600`. EOF aborts a running prompt, lets it finish, closes every
//! MCP server and returns.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use rho_component::CancelSignal;
use rho_core::session::{
    ApprovalDecision, ApprovalFuture, Approver, Session, SessionEvent, SteeringQueue,
};
use tokio::sync::{mpsc, oneshot};

use crate::app::App;
use crate::jsonrpc::{ErrorCode, Request, error_line, notification_line, parse_line, result_line};
use crate::transport::{Inbound, Transport};
use crate::wire::{ApprovalResponseParams, Empty, PromptParams};

/// Every method rho answers.
pub const METHODS: &[&str] = &[
    "prompt",
    "abort",
    "clear",
    "getState",
    "getMessages",
    "setModel",
    "listModels",
    "listProviders",
    "getSessionStats",
    "listSessions",
    "listExtensions",
    "reloadExtensions",
    "compact",
    "resumeSession",
    "newSession",
    "listTools",
    "approvalResponse",
];

/// Every notification rho sends.
pub const NOTIFICATIONS: &[&str] = &[
    "ready",
    "agent/start",
    "agent/end",
    "agent/error",
    "state/change",
    "message/delta",
    "reasoning/delta",
    "tool/call",
    "tool/progress",
    "tool/result",
    "tool/denied",
    "approval/request",
    "usage",
];

/// How the session of an RPC run starts.
#[derive(Debug, Clone, Default)]
pub enum SessionStart {
    /// A new session (saved unless ephemeral).
    #[default]
    New,
    /// `--continue`: the most recent session of this project.
    Continue,
    /// `--session <path>`.
    Resume(PathBuf),
}

/// State the reader and the main task share.
pub(crate) struct Shared {
    out: mpsc::UnboundedSender<String>,
    /// A prompt is queued or running.
    busy: Mutex<bool>,
    cancel: Mutex<Option<CancelSignal>>,
    steering: Mutex<SteeringQueue>,
    approval_tx: Mutex<Option<oneshot::Sender<ApprovalDecision>>>,
    approval_rx: Mutex<Option<oneshot::Receiver<ApprovalDecision>>>,
    in_flight: Mutex<HashSet<String>>,
    /// Fires when the run must stop now: nobody reads stdout any more, or the process got
    /// SIGINT/SIGTERM. What runs is aborted and queued work is dropped.
    closed: CancelSignal,
    /// Fires at EOF on stdin: queued and running work finishes, but nobody can answer an
    /// approval any more, so every approval is denied.
    pub(crate) eof: CancelSignal,
    /// `abort` arrived while a prompt was queued but not yet running: it starts aborted.
    abort_pending: Mutex<bool>,
    /// A prompt is running (not just queued).
    prompt_running: Mutex<bool>,
    /// Queued jobs and their bytes, bounded so a flood cannot grow memory without limit.
    queued: Mutex<(usize, usize)>,
}

/// At most this many requests wait in the queue; more get `-32600`.
pub const MAX_QUEUED_REQUESTS: usize = 64;
/// At most this many bytes of queued requests.
pub const MAX_QUEUED_BYTES: usize = 32 * 1024 * 1024;
/// At most this many steering messages wait for a seam.
pub const MAX_STEERING_MESSAGES: usize = 64;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn send(&self, line: String) {
        if self.out.send(line).is_err() && !self.closed.is_cancelled() {
            // The writer is gone (stdout closed by its reader): abort what runs and stop.
            tracing::warn!("stdout is closed; stopping");
            self.closed.cancel();
            if let Some(cancel) = lock(&self.cancel).as_ref() {
                cancel.cancel();
            }
        }
    }

    /// Sends a session event; an approval request first opens the slot its answer goes to,
    /// so an answer can never arrive before rho is ready for it.
    pub(crate) fn emit(&self, event: SessionEvent) {
        if matches!(event, SessionEvent::ApprovalRequest { .. }) {
            let (tx, rx) = oneshot::channel();
            *lock(&self.approval_tx) = Some(tx);
            *lock(&self.approval_rx) = Some(rx);
        }
        self.send(crate::convert::event_line(&event));
    }

    pub(crate) fn set_steering(&self, queue: SteeringQueue) {
        *lock(&self.steering) = queue;
    }

    /// Registers the cancel signal of an operation that starts now (a prompt, a compaction):
    /// `abort` and a stop cancel it. It starts cancelled after a stop, or (a prompt) after an
    /// abort that arrived while it was queued.
    pub(crate) fn begin(&self, prompt: bool) -> CancelSignal {
        let cancel = CancelSignal::new();
        // A pending abort was meant for the queued prompt, not for other work before it.
        let pending = prompt && std::mem::take(&mut *lock(&self.abort_pending));
        if pending || self.closed.is_cancelled() {
            tracing::debug!(pending, "an operation starts aborted");
            cancel.cancel();
        }
        *lock(&self.cancel) = Some(cancel.clone());
        tracing::debug!("operation begins");
        cancel
    }

    /// Clears what [`Shared::begin`] registered.
    pub(crate) fn end(&self) {
        tracing::debug!("operation ends");
        *lock(&self.cancel) = None;
        *lock(&self.approval_tx) = None;
        *lock(&self.approval_rx) = None;
    }
}

/// Waits for `approvalResponse` through the slot [`Shared::emit`] opened.
pub(crate) struct RpcApprover(pub(crate) Arc<Shared>);

impl Approver for RpcApprover {
    fn decide<'a>(
        &'a self,
        _tool: &'a str,
        _arguments: &'a str,
        _risk: rho_component::RiskLevel,
    ) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let rx = lock(&self.0.approval_rx).take();
            let decision = match rx {
                Some(rx) => tokio::select! {
                    answer = rx => answer.unwrap_or(ApprovalDecision::Deny),
                    () = self.0.eof.cancelled() => ApprovalDecision::Deny,
                },
                None => ApprovalDecision::Deny,
            };
            *lock(&self.0.approval_tx) = None;
            decision
        })
    }
}

enum Job {
    Request(Request),
    Shutdown,
}

/// Serves one connection until EOF. `app` owns the registry, tool set and session.
///
/// At EOF, work already received still runs to its end (so `echo '{"method":"prompt",...}' |
/// rho rpc` answers), approvals are denied because nobody can answer them, and then every
/// server is closed. [`serve_until`] also stops on a signal.
pub async fn serve(app: App, transport: Transport) {
    serve_until(app, transport, CancelSignal::new()).await;
}

/// [`serve`], stopping early when `stop` fires (SIGINT/SIGTERM in the binary): the running
/// operation is aborted, queued work is dropped, servers are closed.
pub async fn serve_until(mut app: App, transport: Transport, stop: CancelSignal) {
    let Transport {
        mut incoming,
        outgoing,
    } = transport;
    let shared = Arc::new(Shared {
        out: outgoing,
        busy: Mutex::new(false),
        cancel: Mutex::new(None),
        steering: Mutex::new(app.session.steering()),
        approval_tx: Mutex::new(None),
        approval_rx: Mutex::new(None),
        in_flight: Mutex::new(HashSet::new()),
        closed: CancelSignal::new(),
        eof: CancelSignal::new(),
        abort_pending: Mutex::new(false),
        prompt_running: Mutex::new(false),
        queued: Mutex::new((0, 0)),
    });
    app.shared = Some(shared.clone());
    // `ready` is the first line, before any answer to early input.
    shared.send(notification_line::<()>("ready", None));
    let (jobs_tx, mut jobs) = mpsc::unbounded_channel::<Job>();
    let reader_shared = shared.clone();
    let reader = tokio::spawn(async move {
        while let Some(inbound) = incoming.recv().await {
            route(&reader_shared, &jobs_tx, inbound);
        }
        // EOF: what was received still runs (approvals are denied); the main task stops
        // after the queue.
        reader_shared.eof.cancel();
        let _ = jobs_tx.send(Job::Shutdown);
    });
    let stop_shared = shared.clone();
    let stopper = tokio::spawn(async move {
        stop.cancelled().await;
        tracing::info!("stopping on request");
        stop_shared.closed.cancel();
        if let Some(cancel) = lock(&stop_shared.cancel).as_ref() {
            cancel.cancel();
        }
    });
    loop {
        let job = tokio::select! {
            job = jobs.recv() => job,
            () = shared.closed.cancelled() => None,
        };
        let Some(Job::Request(request)) = job else {
            break;
        };
        {
            let mut queued = lock(&shared.queued);
            queued.0 = queued.0.saturating_sub(1);
            queued.1 = queued.1.saturating_sub(request_bytes(&request));
        }
        let id_text = request.id_key();
        let response = app.handle(&request).await;
        if let Some(id) = &id_text {
            lock(&shared.in_flight).remove(id);
        }
        if let Some(line) = response {
            shared.send(line);
        }
    }
    reader.abort();
    stopper.abort();
    app.shutdown().await;
}

/// Handles one inbound unit on the reader task.
fn route(shared: &Arc<Shared>, jobs: &mpsc::UnboundedSender<Job>, inbound: Inbound) {
    let line = match inbound {
        Inbound::Line(line) => line,
        Inbound::Oversized => {
            shared.send(error_line(
                None,
                ErrorCode::InvalidRequest,
                &format!(
                    "the line is longer than {} MiB",
                    crate::jsonrpc::MAX_LINE_BYTES >> 20
                ),
            ));
            return;
        }
    };
    let request = match parse_line(&line) {
        Ok(Some(request)) => request,
        Ok(None) => return,
        Err(response) => {
            shared.send(response);
            return;
        }
    };
    let reply = |result: Result<(), (ErrorCode, String)>| {
        let Some(id) = request.id.as_deref() else {
            return;
        };
        shared.send(match result {
            Ok(()) => result_line(id, &Empty {}),
            Err((code, message)) => error_line(Some(id), code, &message),
        });
    };
    let inline = match request.method.as_str() {
        "abort" | "approvalResponse" => true,
        "prompt" => request
            .required_params::<PromptParams>()
            .is_ok_and(|p| p.steer),
        _ => false,
    };
    if inline
        && let Some(id) = request.id_key()
        && lock(&shared.in_flight).contains(&id)
    {
        return reply(Err((
            ErrorCode::InvalidRequest,
            "a request with this id is still in flight".into(),
        )));
    }
    match request.method.as_str() {
        "prompt" => {
            let params: PromptParams = match request.required_params() {
                Ok(p) => p,
                Err(e) => return reply(Err((ErrorCode::InvalidParams, e))),
            };
            if params.steer {
                let steering = lock(&shared.steering);
                if steering.len() >= MAX_STEERING_MESSAGES {
                    return reply(Err((
                        ErrorCode::InvalidRequest,
                        format!("{MAX_STEERING_MESSAGES} steering messages are already waiting"),
                    )));
                }
                steering.push(params.message);
                return reply(Ok(()));
            }
            {
                let mut busy = lock(&shared.busy);
                if *busy {
                    return reply(Err((
                        ErrorCode::InvalidRequest,
                        "a prompt is already running: wait for its response, or send \
                         {\"steer\": true} to steer it"
                            .into(),
                    )));
                }
                *busy = true;
            }
            queue(shared, jobs, request);
        }
        "abort" => {
            let running = lock(&shared.cancel).clone();
            if let Some(cancel) = &running
                && !cancel.is_cancelled()
            {
                tracing::debug!("abort: cancelling the running operation");
                cancel.cancel();
                return reply(Ok(()));
            }
            if *lock(&shared.busy) && !*lock(&shared.prompt_running) {
                // A prompt is queued behind other work: it will start aborted.
                tracing::debug!("abort: the queued prompt will start aborted");
                *lock(&shared.abort_pending) = true;
                return reply(Ok(()));
            }
            if running.is_some() {
                // Already aborting: nothing more to do.
                return reply(Ok(()));
            }
            reply(Err((
                ErrorCode::InvalidRequest,
                "nothing is running".into(),
            )));
        }
        "approvalResponse" => {
            let params: ApprovalResponseParams = match request.required_params() {
                Ok(p) => p,
                Err(e) => return reply(Err((ErrorCode::InvalidParams, e))),
            };
            let Some(tx) = lock(&shared.approval_tx).take() else {
                return reply(Err((
                    ErrorCode::InvalidRequest,
                    "no approval is pending".into(),
                )));
            };
            let decision = match (params.approved, params.message) {
                (true, _) => ApprovalDecision::Approve,
                (false, Some(message)) if !message.trim().is_empty() => {
                    ApprovalDecision::Redirect(message)
                }
                (false, _) => ApprovalDecision::Deny,
            };
            let _ = tx.send(decision);
            reply(Ok(()));
        }
        method if METHODS.contains(&method) => queue(shared, jobs, request),
        _ => {
            if let Some(id) = request.id.as_deref() {
                shared.send(error_line(
                    Some(id),
                    ErrorCode::MethodNotFound,
                    &format!("no method {:?}", request.method),
                ));
            }
        }
    }
}

fn request_bytes(request: &Request) -> usize {
    request.method.len()
        + request.id_text().map_or(0, str::len)
        + request.params.as_deref().map_or(0, |p| p.get().len())
}

fn queue(shared: &Arc<Shared>, jobs: &mpsc::UnboundedSender<Job>, request: Request) {
    let bytes = request_bytes(&request);
    {
        let mut queued = lock(&shared.queued);
        if queued.0 >= MAX_QUEUED_REQUESTS || queued.1 + bytes > MAX_QUEUED_BYTES {
            drop(queued);
            if request.method == "prompt" {
                *lock(&shared.busy) = false;
            }
            if request.id.is_some() {
                shared.send(error_line(
                    request.id.as_deref(),
                    ErrorCode::InvalidRequest,
                    "too many requests are waiting: retry when earlier ones are answered",
                ));
            }
            return;
        }
        queued.0 += 1;
        queued.1 += bytes;
    }
    if let Some(id) = request.id_key()
        && !lock(&shared.in_flight).insert(id)
    {
        if request.method == "prompt" {
            *lock(&shared.busy) = false;
        }
        let mut queued = lock(&shared.queued);
        queued.0 = queued.0.saturating_sub(1);
        queued.1 = queued.1.saturating_sub(bytes);
        drop(queued);
        shared.send(error_line(
            request.id.as_deref(),
            ErrorCode::InvalidRequest,
            "a request with this id is still in flight",
        ));
        return;
    }
    let _ = jobs.send(Job::Request(request));
}

impl App {
    /// Runs one prompt with the session; the reader may abort it, steer it or answer its
    /// approval requests meanwhile.
    pub(crate) async fn run_prompt(
        &mut self,
        params: PromptParams,
    ) -> Result<crate::wire::PromptResult, (ErrorCode, String)> {
        let Some(shared) = self.shared.clone() else {
            return Err((ErrorCode::Internal, "not serving".into()));
        };
        let cancel = shared.begin(true);
        *lock(&shared.prompt_running) = true;
        let emit_shared = shared.clone();
        let emit = move |event: SessionEvent| emit_shared.emit(event);
        let approver = RpcApprover(shared.clone());
        let outcome = match self.provider_error.clone() {
            Some(error) => {
                shared.emit(SessionEvent::AgentError(error.clone()));
                Err((ErrorCode::Internal, error))
            }
            None => self
                .session
                .prompt(&params.message, &emit, &approver, &cancel)
                .await
                .map(|turn| crate::wire::PromptResult {
                    reply: turn.reply,
                    finish_reason: turn.finish_reason,
                })
                .map_err(|e| (ErrorCode::Internal, e.to_string())),
        };
        shared.end();
        *lock(&shared.prompt_running) = false;
        *lock(&shared.busy) = false;
        outcome
    }

    /// Points steering at the current session after it was replaced.
    pub(crate) fn session_replaced(&mut self, session: Session) {
        self.session = session;
        if let Some(shared) = &self.shared {
            shared.set_steering(self.session.steering());
        }
    }
}
