//! What the host's events and answers do to the app: session events onto the transcript and
//! its cards, replies to the operations it sent, reports, resumed conversations.

use super::*;

impl App {
    /// Applies one event from the host.
    pub fn on_host_event(&mut self, event: HostEvent) {
        match event {
            HostEvent::Session(event) => self.on_session_event(event),
            HostEvent::Reply { id, result } => {
                let purpose = self.pending.remove(&id).unwrap_or(Purpose::Quiet);
                if matches!(purpose, Purpose::Completion(_)) {
                    self.completing = None;
                }
                if let (Purpose::Read(server, uri), Err(error)) = (&purpose, &result) {
                    // A resource that cannot be read leaves the message, with the reason.
                    self.attachments
                        .retain(|a| !(a.server == *server && a.uri == *uri));
                    self.error(format!("{uri} was not attached: {}", error.message));
                    // A message that waited for it comes back to the message box: sending
                    // it without the resource is the user's call.
                    if let Some(text) = self.waiting_message.take() {
                        self.composer.set_text(&text);
                    }
                    return;
                }
                match result {
                    Ok(response) => self.on_response(purpose, response),
                    Err(error) => {
                        if purpose == Purpose::Prompt {
                            self.end_turn(TurnEnd::Failed);
                            // The host reported it as the turn's error already.
                            if matches!(self.transcript.last(), Some(Cell::Error(shown)) if *shown == error.message)
                            {
                                return;
                            }
                        }
                        self.error(error.message);
                    }
                }
            }
        }
    }

    fn on_session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::AgentStart => self.running = true,
            SessionEvent::StateChange(state) => self.loop_state = state,
            SessionEvent::MessageDelta(text) | SessionEvent::ReasoningDelta(text)
                if text.is_empty() => {}
            SessionEvent::MessageDelta(text) => {
                if let Some(Cell::Assistant(message)) = self.transcript.last_mut() {
                    message.push_str(&text);
                } else {
                    self.transcript.push(Cell::Assistant(text));
                }
            }
            SessionEvent::ReasoningDelta(text) => {
                if let Some(Cell::Reasoning { text: so_far, .. }) = self.transcript.last_mut() {
                    so_far.push_str(&text);
                } else {
                    self.transcript.push(Cell::Reasoning {
                        text,
                        expanded: false,
                    });
                }
            }
            SessionEvent::ToolCall(CallStarted {
                call_id,
                name,
                display_name,
                arguments,
            }) => {
                let spec = self.tools.get(&name);
                let mut card = ToolCard::new(&call_id, &name, &arguments, spec);
                // A tool outside the session's set is named as the session names it (the
                // Claude CLI runtime's own tools: `claude › Read`).
                if spec.is_none() {
                    card.label = display_name;
                }
                self.transcript.push(Cell::Tool(Box::new(card)));
            }
            SessionEvent::ApprovalRequest(ApprovalAsked {
                call_id,
                tool,
                display_name,
                arguments,
                risk,
            }) => {
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.state = CardState::AwaitingApproval { risk };
                    self.approval = Some(card.call_id.clone());
                } else {
                    // A call with no card yet (a Claude subagent's, whose own calls are not
                    // relayed): the question gets a card of its own, under the call's id.
                    let spec = self.tools.get(&tool);
                    let mut card = ToolCard::new(&call_id, &tool, &arguments, spec);
                    if spec.is_none() {
                        card.label = display_name;
                    }
                    card.state = CardState::AwaitingApproval { risk };
                    card.unshown = true;
                    self.approval = Some(call_id);
                    self.transcript.push(Cell::Tool(Box::new(card)));
                }
                self.transcript.scroll_to_bottom();
            }
            SessionEvent::ToolDenied(CallDenied { call_id, .. }) => {
                // The call's own card (a denial the user just gave is on it already).
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.state = CardState::Denied;
                }
            }
            SessionEvent::ToolProgress(CallProgress {
                call_id,
                progress,
                total,
                message,
                ..
            }) => {
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.state = CardState::Running {
                        progress: Some((progress, total, message)),
                    };
                }
            }
            SessionEvent::ToolResult(CallFinished {
                call_id,
                outcome,
                output,
                image,
                ..
            }) => {
                let columns = self.transcript.width().saturating_sub(2 * IMAGE_INDENT);
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.question = None;
                    if card.state != CardState::Denied {
                        card.state = CardState::ended(&outcome, output);
                        if let (Some(image), Some(graphics)) = (image, &self.graphics) {
                            card.image = Some(ImageState::Drawing);
                            self.image_jobs.push(ImageJob {
                                call_id,
                                graphics: graphics.clone(),
                                image,
                                columns,
                            });
                        }
                    }
                }
            }
            SessionEvent::Usage(UsageReport { usage, context, .. }) => {
                self.tokens += usage.total_tokens;
                self.cost += usage.total_cost;
                self.context = Some(context);
            }
            SessionEvent::AgentEnd(result) => {
                let end = match result.finish_reason {
                    FinishReason::Aborted => TurnEnd::Aborted,
                    _ => TurnEnd::Finished,
                };
                self.end_turn(end);
                match &result.finish_reason {
                    FinishReason::Stop => {}
                    FinishReason::Aborted => self.notice("stopped"),
                    FinishReason::ToolCalls | FinishReason::MaxIterations => self.notice(
                        "the turn ended: its budget of model requests ([agent] max_iterations) \
                         ran out",
                    ),
                    other => self.notice(format!("the turn ended: {other}")),
                }
            }
            SessionEvent::AgentError(message) => {
                self.end_turn(TurnEnd::Failed);
                self.error(message);
            }
            SessionEvent::ToolsChanged(changed) => {
                let mut parts = Vec::new();
                for (what, names) in [
                    ("added", &changed.added),
                    ("withdrawn", &changed.withdrawn),
                    ("revised", &changed.revised),
                ] {
                    if !names.is_empty() {
                        parts.push(format!("{what}: {}", names.join(", ")));
                    }
                }
                self.notice(format!(
                    "MCP server {} changed its tools; {}",
                    changed.server,
                    parts.join("; ")
                ));
            }
            // `/mcp` shows each server's state; the evidence is for logs and session files.
            SessionEvent::ToolsetInitialized(_) | SessionEvent::ToolsetClosed(_) => {}
            SessionEvent::ToolsetChanged(changed) => self.notice(format!(
                "MCP server {} offers other tools than when this session last ran (digest {} → {})",
                changed.server, changed.previous, changed.current
            )),
            SessionEvent::Notice(notice) => self.notice(notice.message),
            SessionEvent::ServerRestart(restart) => match restart.gave_up {
                Some(gave_up) => self.error(gave_up),
                None => self.notice(format!(
                    "MCP server {} started again ({}): {}",
                    restart.server, restart.restarts, restart.reason
                )),
            },
            SessionEvent::Question(request) => {
                let id = request.id;
                let call_id = request.call_id.clone();
                if let Some(card) = self.transcript.card_mut(|c| c.call_id == call_id) {
                    card.question = Some(FormView::new(request));
                } else {
                    // Not on a card we know: decline rather than guess.
                    self.send(
                        Operation::AnswerQuestion {
                            question: id,
                            answer: QuestionAnswer::Decline,
                        },
                        Purpose::Quiet,
                    );
                }
                self.transcript.scroll_to_bottom();
            }
        }
        // A tool that started running: the card says so.
        if self.loop_state == LoopState::ExecutingTool {
            self.transcript.update_cards(|card| {
                let start = card.state == CardState::Requested;
                if start {
                    card.state = CardState::Running { progress: None };
                }
                start
            });
        }
    }

    fn on_response(&mut self, purpose: Purpose, response: Response) {
        match (purpose, response) {
            (Purpose::Prompt, Response::Prompt(_)) => self.running = false,
            (_, Response::State(state)) => {
                if let Some(welcome) = self.transcript.welcome_mut() {
                    welcome.set_state(&state);
                }
                self.state = Some(state);
            }
            (Purpose::Extensions(report), Response::Extensions(extensions)) => {
                self.on_extensions(report, &extensions);
            }
            (_, Response::Tools(tools)) => {
                if let Some(welcome) = self.transcript.welcome_mut() {
                    welcome.set_tools(tools.len());
                }
                self.tools = tools.into_iter().map(|t| (t.name.clone(), t)).collect();
            }
            (_, Response::Prompts(prompts)) => self.prompts = prompts,
            (_, Response::Resources(resources)) => self.resources = resources,
            (_, Response::Sessions(sessions)) => {
                if sessions.is_empty() {
                    self.notice("no saved session of this project yet");
                } else {
                    self.picker = Some(Picker {
                        sessions,
                        selected: 0,
                    });
                }
            }
            (_, Response::Messages(messages)) => self.show_messages(&messages),
            (_, Response::Model { model, provider }) => {
                self.notice(format!("model: {model} ({provider})"));
                self.send(Operation::GetState, Purpose::State);
            }
            (_, Response::Models { models, errors }) => {
                let mut text = String::from("models (switch with /model <id>):");
                for model in &models {
                    text.push_str(&format!("\n  {} · {}", model.id, model.provider));
                }
                for (provider, error) in &errors {
                    text.push_str(&format!("\n  {provider}: {error}"));
                }
                self.notice(text);
            }
            (Purpose::Read(server, uri), Response::ResourceRead { .. }) => {
                for attachment in &mut self.attachments {
                    if attachment.server == server && attachment.uri == uri {
                        attachment.reading = false;
                    }
                }
                self.send_waiting_message();
            }
            (Purpose::Completion(key), Response::Completions(values)) => {
                self.completing = None;
                if self.completions.len() >= COMPLETION_CACHE {
                    self.completions.drain(..COMPLETION_CACHE / 2);
                }
                self.completions.push((key, values));
                self.update_palette();
            }
            (_, Response::Doctor(checks)) => self.notice(crate::reports::doctor(&checks)),
            (_, Response::Compacted(_)) => self.notice("the history was replaced by a summary"),
            (_, Response::Session(info)) => {
                self.transcript.clear();
                self.context = None;
                self.send(Operation::GetState, Purpose::State);
                if info.messages > 0 {
                    self.send(Operation::GetMessages, Purpose::Messages);
                } else {
                    self.notice("a new session");
                }
            }
            _ => {}
        }
    }

    fn on_extensions(&mut self, report: Report, extensions: &Extensions) {
        let up = extensions
            .servers
            .iter()
            .filter(|s| s.status().offers_tools())
            .count();
        let failed = extensions
            .servers
            .iter()
            .filter(|s| s.status().as_str() == "failed")
            .count();
        self.servers = (up, failed);
        self.skills = extensions.skills.clone();
        if let Some(welcome) = self.transcript.welcome_mut() {
            welcome.set_extensions(extensions);
        }
        let text = match report {
            Report::Silent => {
                if failed > 0 {
                    self.notice(format!(
                        "{failed} MCP server{} failed to start; /mcp says why",
                        if failed == 1 { "" } else { "s" }
                    ));
                }
                return;
            }
            Report::Mcp => crate::reports::mcp(extensions, &self.prompts, &self.resources),
            Report::Plugins => crate::reports::plugins(extensions),
            Report::Skills => crate::reports::skills(extensions),
            Report::Context => crate::reports::context(&extensions.context),
        };
        self.notice(text);
    }

    /// Whether a resumed conversation arrived since the last call (for the timing log).
    pub fn take_conversation_loaded(&mut self) -> bool {
        std::mem::take(&mut self.conversation_loaded)
    }

    /// Rebuilds the conversation from the host's messages (a resumed session).
    fn show_messages(&mut self, messages: &[ChatMessage]) {
        self.conversation_loaded = true;
        self.transcript.clear();
        for message in messages {
            match message.role {
                ChatRole::System => {}
                ChatRole::User => self.transcript.push(Cell::User(message.content.clone())),
                ChatRole::Assistant => {
                    if !message.content.trim().is_empty() {
                        self.transcript
                            .push(Cell::Assistant(message.content.clone()));
                    }
                    for call in &message.tool_calls {
                        let card = ToolCard::new(
                            &call.id,
                            &call.name,
                            &call.arguments,
                            self.tools.get(&call.name),
                        );
                        self.transcript.push(Cell::Tool(Box::new(card)));
                    }
                }
                ChatRole::Tool => {
                    let Some(id) = &message.tool_call_id else {
                        continue;
                    };
                    if let Some(card) = self.transcript.card_mut(|c| &c.call_id == id) {
                        // A session file written before rho kept outcomes says nothing: the
                        // call is shown as finished.
                        let outcome = message.outcome.as_ref().unwrap_or(&CallOutcome::Success);
                        card.state = CardState::ended(outcome, message.content.clone());
                    }
                }
            }
        }
        self.transcript.update_cards(|card| {
            let open = !card.is_finished();
            if open {
                card.state = CardState::Cancelled { output: None };
            }
            open
        });
    }

    /// A turn is over: nothing is asked any more, and every card still open says why it
    /// did not run.
    fn end_turn(&mut self, end: TurnEnd) {
        self.running = false;
        self.approval = None;
        self.viewing = None;
        self.redirecting = false;
        let redirected = std::mem::take(&mut self.redirected);
        self.transcript.update_cards(|card| {
            let open = !card.is_finished() || card.question.is_some();
            card.question = None;
            if !card.is_finished() {
                card.state = match end {
                    TurnEnd::Finished if redirected => CardState::Redirected,
                    // Approved, and its result went where the call came from.
                    TurnEnd::Finished
                        if card.unshown && matches!(card.state, CardState::Running { .. }) =>
                    {
                        CardState::Done {
                            is_error: false,
                            output: "approved; its result went to Claude's subagent".to_owned(),
                        }
                    }
                    _ => CardState::Cancelled { output: None },
                };
            }
            open
        });
    }
}
