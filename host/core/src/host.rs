//! The session host: the one owner of a running agent. It holds the tool set, the session,
//! the provider and model, the pending approval, steering, abort and the questions servers
//! ask. Front-ends hold no session state: they send [`Operation`]s through a [`HostHandle`]
//! and read [`HostEvent`]s from one bounded channel (`rho-rpc` turns JSON-RPC lines into
//! operations and events into lines; a terminal UI turns keys into operations and events into
//! frames).
//!
//! Operations are handled one at a time, in order, on the host's own task; steering,
//! approvals, answers and aborts are [immediate](Operation::is_immediate) and handled as they
//! arrive, even while a prompt runs. When the handle is dropped (input closed) work already
//! received still runs, every approval is denied and every question declined; when `stop`
//! fires (a signal) what runs is aborted and queued work is dropped. Either way every server is
//! closed before the event channel ends.

mod desk;
mod operation;
mod outbox;
mod server_prompts;
mod work;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use rho_component::CancelSignal;
use tokio::sync::mpsc;

use crate::session::SteeringQueue;
use crate::{MountOptions, ProviderFlags, Registry};

pub use operation::{
    Extensions, HostError, HostErrorKind, HostEvent, HostState, ModelEntry, Operation,
    PromptCommand, PromptReply, ProviderReport, RequestId, Response, SessionInfo,
};
pub use outbox::EVENT_QUEUE;
pub use server_prompts::{PROMPT_COMMAND_PREFIX, command_name, split_command};

use desk::Desk;
use outbox::Outbox;
use work::Work;

/// At most this many operations wait behind a running one; more are refused.
pub const MAX_QUEUED_OPERATIONS: usize = 64;
/// At most this many bytes of queued operations.
pub const MAX_QUEUED_BYTES: usize = 32 * 1024 * 1024;
/// At most this many steering messages wait for a seam.
pub const MAX_STEERING_MESSAGES: usize = 64;
/// Operations on their way from the front-end to the host, at most.
const OPERATION_CHANNEL: usize = 64;
/// Completion requests waiting for their servers at once, at most; more answer empty.
const MAX_PENDING_COMPLETIONS: usize = 64;

/// Looks an environment variable up (API keys).
pub type Ambient = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How the session of a run starts.
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

/// How a host starts.
pub struct HostOptions {
    /// Every component source, loaded.
    pub registry: Registry,
    /// Provider flags from the command line.
    pub flags: ProviderFlags,
    /// No session file.
    pub ephemeral: bool,
    /// New, `--continue` or `--session <path>`.
    pub start: SessionStart,
    /// How to mount the tool set.
    pub mount: MountOptions,
    /// Where API keys are looked up (the process environment in the binary).
    pub ambient: Ambient,
    /// Whether a person answers servers' questions through this front-end. Without, servers
    /// are told rho cannot ask, and any question they ask anyway is declined.
    pub accepts_questions: bool,
    /// A provider to use instead of choosing one from flags and configuration (embedding
    /// front-ends, and tests with a scripted model); the model id comes from `flags.model`.
    pub fixed_provider: Option<Arc<dyn crate::provider::Provider>>,
    /// The agent runtime chosen on the command line (`--runtime`); `None`: `[agent] runtime`.
    pub runtime: Option<crate::AgentRuntime>,
}

impl std::fmt::Debug for HostOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostOptions")
            .field("ephemeral", &self.ephemeral)
            .field("start", &self.start)
            .field("accepts_questions", &self.accepts_questions)
            .field("runtime", &self.runtime)
            .finish_non_exhaustive()
    }
}

/// Where a front-end sends operations. Dropping every handle closes the host's input.
#[derive(Debug, Clone)]
pub struct HostHandle {
    tx: mpsc::Sender<(RequestId, Operation)>,
}

impl HostHandle {
    /// Sends operation `id`; its [`HostEvent::Reply`] follows on the event channel. Fails only
    /// when the host has stopped.
    pub async fn submit(&self, id: RequestId, operation: Operation) -> Result<(), HostError> {
        self.tx
            .send((id, operation))
            .await
            .map_err(|_| HostError::internal("the session host has stopped"))
    }
}

/// A started host, ready to [`SessionHost::run`].
pub struct SessionHost {
    work: Work,
    outbox: Arc<Outbox>,
    desk: Arc<Desk>,
    operations: mpsc::Receiver<(RequestId, Operation)>,
}

impl SessionHost {
    /// Chooses the provider (no network call), mounts the tool set (servers start in
    /// parallel) and opens the session. Returns the host, the handle operations go to, and
    /// the bounded channel events come from.
    pub async fn start(
        options: HostOptions,
    ) -> Result<(Self, HostHandle, mpsc::Receiver<HostEvent>), crate::session::SessionError> {
        let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
        let (tx, operations) = mpsc::channel(OPERATION_CHANNEL);
        let outbox = Outbox::new(events_tx);
        let desk = Desk::new(outbox.clone(), options.accepts_questions);
        let work = Work::start(options, outbox.clone(), desk.clone()).await?;
        Ok((
            Self {
                work,
                outbox,
                desk,
                operations,
            },
            HostHandle { tx },
            events,
        ))
    }

    /// Serves operations until the input closes (and received work is done) or `stop` fires,
    /// then closes every server. The event channel ends when this returns. Returns the session
    /// file the conversation is saved in, when there is one on disk (`None` when ephemeral or
    /// nothing was said): what `--continue` would resume.
    pub async fn run(self, stop: CancelSignal) -> Option<PathBuf> {
        let Self {
            mut work,
            outbox,
            desk,
            mut operations,
        } = self;
        work.report_start().await;
        let mut queue = Queue::default();
        let mut completions = Completions::default();
        let mut input_open = true;
        // `abort` arrived while a prompt was queued but not yet running: it starts aborted.
        let mut abort_pending = false;
        loop {
            if stop.is_cancelled() || outbox.is_closed() {
                break;
            }
            let (id, operation) = match queue.pop() {
                Some(job) => job,
                None if !input_open => break,
                None => tokio::select! {
                    received = operations.recv() => match received {
                        Some(job) => job,
                        None => {
                            input_open = false;
                            desk.close();
                            continue;
                        }
                    },
                    () = stop.cancelled() => break,
                },
            };
            let steering = work.session.steering();
            let tools = work.tools.clone();
            if let Operation::Complete { .. } = operation {
                completions.spawn(id, operation, &tools, &outbox);
                continue;
            }
            if operation.is_immediate() {
                let result = immediate(
                    operation,
                    None,
                    &steering,
                    &desk,
                    &mut abort_pending,
                    &queue,
                );
                outbox.deliver(HostEvent::Reply { id, result }).await;
                continue;
            }
            // What a stop or `abort` can end: a turn, a compaction, and a resume waiting for
            // its file.
            let cancel = matches!(
                operation,
                Operation::Prompt { .. } | Operation::Compact | Operation::ResumeSession(_)
            )
            .then(CancelSignal::new);
            if let Some(cancel) = &cancel
                && (std::mem::take(&mut abort_pending)
                    && matches!(operation, Operation::Prompt { .. }))
            {
                tracing::debug!("a queued prompt starts aborted");
                cancel.cancel();
            }
            let running = work.handle(operation, cancel.clone());
            tokio::pin!(running);
            let mut stopping = false;
            let result = loop {
                tokio::select! {
                    result = &mut running => break result,
                    received = operations.recv(), if input_open => match received {
                        Some((other, op @ Operation::Complete { .. })) => {
                            completions.spawn(other, op, &tools, &outbox);
                        }
                        Some((other, op)) if op.is_immediate() => {
                            let result = immediate(
                                op,
                                cancel.as_ref(),
                                &steering,
                                &desk,
                                &mut abort_pending,
                                &queue,
                            );
                            outbox.deliver(HostEvent::Reply { id: other, result }).await;
                        }
                        Some((other, op)) => {
                            if let Err(error) = queue.push(other, op) {
                                outbox
                                    .deliver(HostEvent::Reply { id: other, result: Err(error) })
                                    .await;
                            }
                        }
                        None => {
                            // Input closed: what was received still runs, but nobody can
                            // answer an approval or a question any more.
                            input_open = false;
                            desk.close();
                        }
                    },
                    () = stop.cancelled(), if !stopping => {
                        tracing::info!("stopping on request");
                        stopping = true;
                        if let Some(cancel) = &cancel {
                            cancel.cancel();
                        }
                        desk.close();
                    }
                }
            };
            outbox.deliver(HostEvent::Reply { id, result }).await;
        }
        desk.close();
        completions.tasks.abort_all();
        let saved = work.saved_session();
        work.shutdown().await;
        saved
    }
}

/// Completion requests answered as their servers reply, while other work goes on.
#[derive(Default)]
struct Completions {
    tasks: tokio::task::JoinSet<()>,
}

impl Completions {
    /// Starts answering `operation` (a [`Operation::Complete`]); the reply goes to `outbox`.
    fn spawn(
        &mut self,
        id: RequestId,
        operation: Operation,
        tools: &Arc<crate::ToolSet>,
        outbox: &Arc<Outbox>,
    ) {
        while self.tasks.try_join_next().is_some() {}
        let Operation::Complete {
            command,
            argument,
            value,
            arguments,
        } = operation
        else {
            return;
        };
        let outbox = outbox.clone();
        if self.tasks.len() >= MAX_PENDING_COMPLETIONS {
            self.tasks.spawn(async move {
                let result = Ok(Response::Completions(Vec::new()));
                outbox.deliver(HostEvent::Reply { id, result }).await;
            });
            return;
        }
        let tools = tools.clone();
        self.tasks.spawn(async move {
            let values = work::complete(&tools, &command, &argument, &value, arguments).await;
            let result = Ok(Response::Completions(values));
            outbox.deliver(HostEvent::Reply { id, result }).await;
        });
    }
}

/// Operations waiting behind a running one, bounded by count and bytes.
#[derive(Default)]
struct Queue {
    jobs: VecDeque<(RequestId, Operation)>,
    bytes: usize,
}

impl Queue {
    fn push(&mut self, id: RequestId, operation: Operation) -> Result<(), HostError> {
        let weight = operation.weight();
        if self.jobs.len() >= MAX_QUEUED_OPERATIONS || self.bytes + weight > MAX_QUEUED_BYTES {
            return Err(HostError::invalid_request(
                "too many requests are waiting: retry when earlier ones are answered",
            ));
        }
        self.bytes += weight;
        self.jobs.push_back((id, operation));
        Ok(())
    }

    fn pop(&mut self) -> Option<(RequestId, Operation)> {
        let job = self.jobs.pop_front()?;
        self.bytes = self.bytes.saturating_sub(job.1.weight());
        Some(job)
    }

    fn has_prompt(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, op)| matches!(op, Operation::Prompt { .. }))
    }
}

/// Handles an immediate operation. `running` is the cancel signal of what runs now, if it can
/// be aborted.
fn immediate(
    operation: Operation,
    running: Option<&CancelSignal>,
    steering: &SteeringQueue,
    desk: &Desk,
    abort_pending: &mut bool,
    queue: &Queue,
) -> Result<Response, HostError> {
    match operation {
        Operation::Steer(message) => {
            if steering.len() >= MAX_STEERING_MESSAGES {
                return Err(HostError::invalid_request(format!(
                    "{MAX_STEERING_MESSAGES} steering messages are already waiting"
                )));
            }
            steering.push(message);
            Ok(Response::Done)
        }
        Operation::Abort => {
            // What runs takes the abort; once it is cancelled (and still winding down), the
            // next abort is for the queued prompt, if there is one.
            if let Some(cancel) = running.filter(|c| !c.is_cancelled()) {
                tracing::debug!("abort: cancelling the running operation");
                cancel.cancel();
                desk.decline_all();
                return Ok(Response::Done);
            }
            if queue.has_prompt() {
                tracing::debug!("abort: the queued prompt will start aborted");
                *abort_pending = true;
                return Ok(Response::Done);
            }
            if running.is_some() {
                return Ok(Response::Done); // a second abort while the first winds down
            }
            Err(HostError::invalid_request("nothing is running"))
        }
        Operation::AnswerApproval(decision) => {
            desk.answer_approval(decision).map(|()| Response::Done)
        }
        Operation::AnswerQuestion { question, answer } => desk
            .answer_question(question, answer)
            .map(|()| Response::Done),
        _ => Err(HostError::internal(
            "a queued operation was handled as immediate",
        )),
    }
}
