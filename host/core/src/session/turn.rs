//! One prompt, start to end: the turn boundary (restarts reported, tool lists reconciled),
//! the loop of model requests and tool batches, and how the turn ends.

use super::*;

impl Session {
    /// Records the sampling spend of the calls that just ran.
    fn record_sampling(&mut self) -> Result<(), SessionError> {
        let spent = std::mem::take(
            &mut *self
                .sampling_pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if spent.request_count == 0 {
            return Ok(());
        }
        self.sampling_usage.add(&spent);
        self.record(&Entry::Usage {
            usage: spent,
            purpose: UsagePurpose::McpSampling,
        })
    }

    /// Runs one prompt to the end. Events go to `emit`; calls the gate cannot decide go to
    /// `approver`; `cancel` aborts (the model request stops, running tools are cancelled and
    /// MCP servers are told). A failed model request ends the prompt with an error after
    /// [`SessionEvent::AgentError`]; everything up to it stays in the conversation.
    pub async fn prompt(
        &mut self,
        input: PromptInput,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<TurnResult, SessionError> {
        let started = Instant::now();
        sink.send(SessionEvent::AgentStart).await;
        // Restarts since the last turn (a prompt command or an attachment found its server
        // lost) are reported before anything else.
        self.report_restarts(sink).await;
        // A turn boundary: servers that announced new tool lists, or were started again, are
        // reconciled now.
        for (server, changes) in self.tools.reconcile().await {
            tracing::info!(target: "rho::mcp", server = server.as_str(), revised = changes.revised.len(), withdrawn = changes.withdrawn.len(), added = changes.added.len(), "tool list changed");
            sink.send(SessionEvent::ToolsChanged(ToolsChanged {
                server,
                revised: changes.revised,
                withdrawn: changes.withdrawn,
                added: changes.added,
            }))
            .await;
        }
        // A lazy server that started since the last turn has its live list in now.
        self.report_toolsets(sink).await;
        let mut turn = TurnResult {
            reply: String::new(),
            iterations: 0,
            usage: Usage::default(),
            tool_calls: Vec::new(),
            duration_ms: 0,
            finish_reason: FinishReason::Stop,
        };
        let outcome = match self.open_turn(input) {
            Ok(()) => self.run_loop(&mut turn, sink, approver, cancel).await,
            Err(e) => Err(e),
        };
        turn.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        sink.send(SessionEvent::StateChange(LoopState::Idle)).await;
        match outcome {
            Ok(()) => {
                sink.send(SessionEvent::AgentEnd(turn.clone())).await;
                Ok(turn)
            }
            Err(SessionError::Cancelled) => {
                turn.finish_reason = FinishReason::Aborted;
                sink.send(SessionEvent::AgentEnd(turn.clone())).await;
                Ok(turn)
            }
            Err(e) => {
                sink.send(SessionEvent::AgentError(e.to_string())).await;
                Err(e)
            }
        }
    }

    /// Steering sent while nothing ran comes first (it was written before this prompt), then
    /// the prompt itself.
    fn open_turn(&mut self, input: PromptInput) -> Result<(), SessionError> {
        for message in self.steering.drain() {
            self.push(ChatMessage::user(message))?;
        }
        let mut message = ChatMessage::user(input.text);
        message.images = input.images;
        self.push(message)
    }

    async fn run_loop(
        &mut self,
        turn: &mut TurnResult,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancelSignal,
    ) -> Result<(), SessionError> {
        loop {
            // The seam: steering queued since the last request joins before the next one.
            for message in self.steering.drain() {
                self.push(ChatMessage::user(message))?;
            }
            if cancel.is_cancelled() {
                return Err(SessionError::Cancelled);
            }
            if turn.iterations >= self.config.max_iterations {
                turn.finish_reason = FinishReason::MaxIterations;
                return Ok(());
            }
            turn.iterations += 1;
            sink.send(SessionEvent::StateChange(LoopState::Thinking))
                .await;
            let on_event = |event: StreamEvent| match event {
                StreamEvent::Text(delta) => sink.coalesce(SessionEvent::MessageDelta(delta)),
                StreamEvent::Reasoning(delta) => {
                    sink.coalesce(SessionEvent::ReasoningDelta(delta));
                }
            };
            let definitions = self.definitions();
            let response = {
                let history = repair_history(&self.messages);
                let request = self.request(&history, &definitions, None);
                self.provider.complete(&request, &on_event, cancel).await?
            };
            let mut usage = response.usage;
            usage.request_count = usage.request_count.max(1);
            turn.usage.add(&usage);
            self.usage.add(&usage);
            self.record(&Entry::Usage {
                usage,
                purpose: UsagePurpose::Turn,
            })?;
            let mut assistant =
                ChatMessage::assistant(response.content.clone(), response.tool_calls.clone());
            assistant.reasoning = response.reasoning;
            self.push(assistant)?;
            self.context = self.snapshot(&usage);
            sink.send(SessionEvent::Usage(UsageReport {
                iteration: turn.iterations,
                usage,
                context: self.context,
            }))
            .await;
            if !response.content.is_empty() {
                turn.reply = response.content;
            }
            if response.tool_calls.is_empty() {
                turn.finish_reason = response.finish_reason;
                return Ok(());
            }
            let batch = self
                .run_batch(response.tool_calls, turn, sink, approver, cancel)
                .await;
            self.record_sampling()?;
            let names = self.deferral.take_unrecorded();
            if !names.is_empty() {
                self.record(&Entry::ToolsLoaded { names })?;
            }
            batch?;
            turn.finish_reason = FinishReason::ToolCalls;
        }
    }

    /// Reports the MCP servers started again (or given up on) since the last report.
    pub(super) async fn report_restarts(&self, sink: &dyn EventSink) {
        for restart in self.tools.take_restarts() {
            sink.send(SessionEvent::ServerRestart(restart)).await;
        }
    }
}
