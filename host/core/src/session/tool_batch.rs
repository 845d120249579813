//! One tool batch: every call announced, the gate and the approver deciding each before
//! anything runs, approved calls run (consecutive reads together) with their progress
//! forwarded, and each result recorded.

use super::*;

/// Longest progress message passed on, in bytes (cut at a character boundary).
const PROGRESS_MESSAGE_MAX: usize = 1024;

/// Progress reports one call may send to the front end; later ones are dropped.
pub const PROGRESS_REPORTS_PER_CALL: u32 = 1000;

/// The latest progress report of each running call, and a signal that one arrived. Reports
/// only go forward: one that arrives after a later one (the MCP runtime hands notifications
/// to tasks of their own, so neighbours can swap) is stale and dropped, as the protocol has
/// progress only increase.
struct ProgressSlots {
    latest: Mutex<Vec<ProgressSlot>>,
    arrived: tokio::sync::Notify,
}

#[derive(Clone, Default)]
struct ProgressSlot {
    /// Not yet delivered.
    waiting: Option<ToolProgress>,
    /// The furthest report accepted so far.
    furthest: Option<f64>,
}

impl ProgressSlots {
    fn new(calls: usize) -> Self {
        Self {
            latest: Mutex::new(vec![ProgressSlot::default(); calls]),
            arrived: tokio::sync::Notify::new(),
        }
    }

    /// Keeps `report` as call `i`'s latest (replacing an undelivered one), unless it is behind
    /// one already accepted.
    fn put(&self, i: usize, report: ToolProgress) {
        {
            let mut slots = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(slot) = slots.get_mut(i) else {
                return;
            };
            if slot.furthest.is_some_and(|f| report.progress <= f) {
                return;
            }
            slot.furthest = Some(report.progress);
            slot.waiting = Some(report);
        }
        self.arrived.notify_one();
    }

    /// Completes when a report arrived since the last [`ProgressSlots::take`].
    async fn ready(&self) {
        self.arrived.notified().await;
    }

    /// Every undelivered report, by call.
    fn take(&self) -> Vec<(usize, ToolProgress)> {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter_mut()
            .enumerate()
            .filter_map(|(i, slot)| Some((i, slot.waiting.take()?)))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Run(RiskLevel),
    Deny(String),
    Fail(String),
}

/// The model's argument text as JSON: empty means `{}`; anything invalid is a failure the
/// model reads.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|e| format!("the arguments are not valid JSON: {e}"))
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_message(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

impl Session {
    /// One tool batch: every call is announced, then the gate decides each (asking the user
    /// when needed) before anything runs, so a redirect abandons the whole batch.
    pub(super) async fn run_batch(
        &mut self,
        calls: Vec<ToolCall>,
        turn: &mut TurnResult,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<(), SessionError> {
        for call in &calls {
            sink.send(SessionEvent::ToolCall(CallStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
                display_name: self.display_name(&call.name),
                arguments: call.arguments.clone(),
            }))
            .await;
        }
        let mut verdicts: Vec<Verdict> = Vec::with_capacity(calls.len());
        let mut redirect = None;
        for call in &calls {
            if cancel.is_cancelled() {
                // Aborted: nothing more is asked or run.
                break;
            }
            self.deferral.called(&call.name);
            let Some(tool) = self.tool(&call.name) else {
                verdicts.push(Verdict::Fail(format!(
                    "there is no tool named {:?}; use one of the tools offered",
                    call.name
                )));
                continue;
            };
            let risk = tool.spec().risk;
            let gate = match self.config.permission_mode.gate(risk) {
                Gate::Ask if self.approved_for_session.contains(&call.name) => Gate::Allow,
                gate => gate,
            };
            let verdict = match gate {
                Gate::Allow => Verdict::Run(risk),
                Gate::Deny => Verdict::Deny(format!(
                    "the permission mode {} does not allow {} tools",
                    self.config.permission_mode.as_str(),
                    risk
                )),
                Gate::Ask => {
                    sink.send(SessionEvent::StateChange(LoopState::AwaitingApproval))
                        .await;
                    // The approver opens the slot its answer goes to before the request is
                    // shown, so an answer can never arrive before rho is ready for it.
                    let decision = approver.decide(&call.name, &call.arguments, risk);
                    sink.send(SessionEvent::ApprovalRequest(ApprovalAsked {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        display_name: tool.spec().display_name(),
                        arguments: call.arguments.clone(),
                        risk,
                    }))
                    .await;
                    let decision = tokio::select! {
                        decision = decision => decision,
                        () = cancel.cancelled() => ApprovalDecision::Deny,
                    };
                    match decision {
                        ApprovalDecision::Approve => Verdict::Run(risk),
                        ApprovalDecision::ApproveForSession => {
                            self.approved_for_session.insert(call.name.clone());
                            Verdict::Run(risk)
                        }
                        ApprovalDecision::Deny => {
                            Verdict::Deny("the user denied this tool call".into())
                        }
                        ApprovalDecision::Redirect(message) => {
                            redirect = Some(message);
                            break;
                        }
                    }
                }
            };
            verdicts.push(verdict);
        }
        if let Some(message) = redirect {
            self.record_not_run(
                &calls,
                turn,
                &CallOutcome::Redirected,
                "Not run: the user redirected with new instructions.",
            )?;
            self.push(ChatMessage::user(message))?;
            return Ok(());
        }
        if cancel.is_cancelled() {
            self.record_not_run(
                &calls,
                turn,
                &CallOutcome::Cancelled,
                "Not run: the user aborted.",
            )?;
            return Err(SessionError::Cancelled);
        }
        let outputs = self.execute(&calls, &verdicts, sink, cancel).await;
        self.report_restarts(sink).await;
        for ((call, verdict), (output, duration_ms)) in calls.iter().zip(&verdicts).zip(outputs) {
            let outcome = match verdict {
                Verdict::Deny(_) => {
                    sink.send(SessionEvent::ToolDenied(CallDenied {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        display_name: self.display_name(&call.name),
                    }))
                    .await;
                    CallOutcome::Denied
                }
                _ if output.is_error && cancel.is_cancelled() => CallOutcome::Cancelled,
                _ if output.is_error => CallOutcome::Error {
                    message: output.text.lines().next().unwrap_or_default().to_owned(),
                },
                _ => CallOutcome::Success,
            };
            if !matches!(verdict, Verdict::Deny(_)) {
                sink.send(SessionEvent::ToolResult(CallFinished {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    is_error: output.is_error,
                    outcome: outcome.clone(),
                    output: output.text.clone(),
                    image: output.image.clone(),
                }))
                .await;
            }
            turn.tool_calls.push(CallRecord {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                outcome: outcome.clone(),
                duration_ms,
            });
            let content = if output.is_error {
                format!("Error: {}", output.text)
            } else {
                output.text
            };
            self.push(
                ChatMessage::tool_result(&call.id, &call.name, content).with_outcome(outcome),
            )?;
        }
        Ok(())
    }

    /// Records every call of the batch as not run, with `outcome` and `text` as its result:
    /// every call still needs a result for the conversation to stay well-formed.
    fn record_not_run(
        &mut self,
        calls: &[ToolCall],
        turn: &mut TurnResult,
        outcome: &CallOutcome,
        text: &str,
    ) -> Result<(), SessionError> {
        for call in calls {
            turn.tool_calls.push(CallRecord {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                outcome: outcome.clone(),
                duration_ms: 0,
            });
            self.push(
                ChatMessage::tool_result(&call.id, &call.name, text).with_outcome(outcome.clone()),
            )?;
        }
        Ok(())
    }

    /// Runs the approved calls: consecutive read-only calls together, anything that may
    /// change state alone and in order. Returns one output per call, in call order.
    async fn execute(
        &self,
        calls: &[ToolCall],
        verdicts: &[Verdict],
        sink: &dyn EventSink,
        cancel: &CancelSignal,
    ) -> Vec<(ToolOutput, u64)> {
        let mut outputs: Vec<Option<(ToolOutput, u64)>> = vec![None; calls.len()];
        let context = ToolContext {
            workspace: self.config.workspace.clone(),
            extra_roots: self.config.extra_roots.clone(),
            hidden_env: self.config.hidden_env.clone(),
            cancel: cancel.clone(),
            progress: None,
            asker: None,
        };
        // Progress from running tools waits in one slot per call (the latest report wins), so
        // a tool that reports faster than the front end reads costs neither memory nor the
        // newest figure.
        let progress = Arc::new(ProgressSlots::new(calls.len()));
        let delivered: Vec<AtomicU32> = calls.iter().map(|_| AtomicU32::new(0)).collect();
        let deliver = |slots: &ProgressSlots| {
            for (i, report) in slots.take() {
                let (Some(count), Some(call)) = (delivered.get(i), calls.get(i)) else {
                    continue;
                };
                if count.fetch_add(1, Ordering::Relaxed) >= PROGRESS_REPORTS_PER_CALL {
                    continue;
                }
                sink.coalesce(SessionEvent::ToolProgress(CallProgress {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    progress: report.progress,
                    total: report.total,
                    message: report.message.map(|m| cut_message(m, PROGRESS_MESSAGE_MAX)),
                }));
            }
        };
        let mut index = 0;
        let mut announced = false;
        while index < calls.len() {
            let group_end = match verdicts[index] {
                Verdict::Run(RiskLevel::Read) => {
                    let mut end = index + 1;
                    while end < calls.len() && verdicts[end] == Verdict::Run(RiskLevel::Read) {
                        end += 1;
                    }
                    end
                }
                _ => index + 1,
            };
            let mut running = tokio::task::JoinSet::new();
            for (i, call) in calls.iter().enumerate().take(group_end).skip(index) {
                match &verdicts[i] {
                    Verdict::Fail(message) | Verdict::Deny(message) => {
                        outputs[i] = Some((ToolOutput::error(message.clone()), 0));
                    }
                    Verdict::Run(_) => {
                        let Some(tool) = self.tool(&call.name) else {
                            continue;
                        };
                        if !announced {
                            sink.send(SessionEvent::StateChange(LoopState::ExecutingTool))
                                .await;
                            announced = true;
                        }
                        let arguments = parse_arguments(&call.arguments);
                        let mut context = context.clone();
                        let slots = progress.clone();
                        context.progress = Some(Arc::new(move |report| slots.put(i, report)));
                        context.asker = self.call_asker(&call.id, cancel);
                        running.spawn(async move {
                            let started = Instant::now();
                            let output = match arguments {
                                Ok(arguments) => tool.call(arguments, &context).await,
                                Err(message) => ToolOutput::error(message),
                            };
                            let ms =
                                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                            (i, output, ms)
                        });
                    }
                }
            }
            loop {
                tokio::select! {
                    joined = running.join_next() => match joined {
                        Some(Ok((i, output, ms))) => outputs[i] = Some((output, ms)),
                        Some(Err(e)) => tracing::error!("a tool task failed: {e}"),
                        None => break,
                    },
                    () = progress.ready() => deliver(&progress),
                }
            }
            // Reports left just before their tool finished still precede its result.
            deliver(&progress);
            index = group_end;
        }
        outputs
            .into_iter()
            .map(|o| o.unwrap_or_else(|| (ToolOutput::error("the tool stopped unexpectedly"), 0)))
            .collect()
    }

    /// The asker of one call: questions go to the desk (when someone can answer), sampling
    /// spends the session's model and is recorded under `mcp_sampling`.
    fn call_asker(
        &self,
        call_id: &str,
        cancel: &CancelSignal,
    ) -> Option<Arc<dyn rho_component::Asker>> {
        let desk = self.questions.clone()?;
        Some(Arc::new(call_asker::CallAsker {
            desk,
            call_id: call_id.to_owned(),
            provider: self.provider.clone(),
            model: self.config.model.clone(),
            ledger: self.sampling_pending.clone(),
            turn: cancel.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_only_goes_forward_and_the_latest_waiting_report_wins() {
        let slots = ProgressSlots::new(1);
        let report = |progress: f64| ToolProgress {
            progress,
            total: Some(10.0),
            message: None,
        };
        slots.put(0, report(1.0));
        slots.put(0, report(3.0));
        // Arrived late, behind 3: dropped.
        slots.put(0, report(2.0));
        assert_eq!(slots.take(), vec![(0, report(3.0))]);
        slots.put(0, report(3.0));
        assert!(slots.take().is_empty(), "no repeat of an accepted figure");
        slots.put(0, report(4.0));
        assert_eq!(slots.take(), vec![(0, report(4.0))]);
        slots.put(5, report(1.0));
        assert!(slots.take().is_empty(), "an unknown call is ignored");
    }
}
