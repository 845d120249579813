//! Sending what was typed: a message (with its attachments), a skill's `/<skill>`, a server's
//! prompt command, or one of the built-in `/` commands.

use super::*;

impl App {
    /// Sends the message that waited for its attachments, once none is being read.
    pub(super) fn send_waiting_message(&mut self) {
        if self.attachments.iter().any(|a| a.reading) {
            return;
        }
        if let Some(text) = self.waiting_message.take() {
            self.submit(text);
        }
    }

    /// What Enter sends: a redirect, a steer, a command, or a prompt.
    pub(super) fn submit(&mut self, text: String) {
        self.palette = None;
        if self.redirecting {
            if let Some(call_id) = self.approval.clone() {
                self.decide(&call_id, ApprovalDecision::Redirect(text));
            }
            return;
        }
        // rho's own commands run whatever the model is doing (the host queues those that
        // change the session behind the running turn).
        let trimmed = text.trim();
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        if palette::COMMANDS.iter().any(|(name, _)| *name == word) {
            let rest = trimmed[word.len()..].trim().to_owned();
            self.command(word, &rest);
            return;
        }
        if self.running {
            self.transcript.push(Cell::User(text.clone()));
            self.send(Operation::Steer(text), Purpose::Quiet);
            return;
        }
        if self.attachments.iter().any(|a| a.reading) {
            // Sent once every attachment is read (or dropped for failing).
            self.waiting_message = Some(text);
            return;
        }
        let mut shown = text.trim_end().to_owned();
        for attachment in &self.attachments {
            shown.push_str(&format!(" [resource: {}]", attachment.uri));
        }
        self.transcript.push(Cell::User(shown));
        self.transcript.scroll_to_bottom();
        let text = self.skill_message(text.trim_end().to_owned());
        let attachments = std::mem::take(&mut self.attachments)
            .into_iter()
            .map(|a| (a.server, a.uri))
            .collect();
        self.running = true;
        self.send(
            Operation::Prompt {
                message: text,
                attachments,
            },
            Purpose::Prompt,
        );
    }

    /// `/<skill> rest` asks the model to use that skill (it reads the skill's instructions
    /// through its skill tool); any other text is sent as typed.
    fn skill_message(&self, text: String) -> String {
        let trimmed = text.trim_start();
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        let Some(name) = word.strip_prefix('/') else {
            return text;
        };
        if !self.skills.iter().any(|s| s.name == name) {
            return text;
        }
        let rest = trimmed[word.len()..].trim();
        if rest.is_empty() {
            format!("Use the `{name}` skill.")
        } else {
            format!("Use the `{name}` skill. {rest}")
        }
    }

    fn command(&mut self, name: &str, rest: &str) {
        match name {
            "/help" => self.notice(crate::reports::help()),
            "/mcp" => self.send(Operation::ListExtensions, Purpose::Extensions(Report::Mcp)),
            "/doctor" => self.send(Operation::Doctor, Purpose::Quiet),
            "/context" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Context),
            ),
            "/plugins" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Plugins),
            ),
            "/skills" => self.send(
                Operation::ListExtensions,
                Purpose::Extensions(Report::Skills),
            ),
            "/tools" => {
                let text = crate::reports::tools(self.tools.values());
                self.notice(text);
            }
            "/model" if rest.is_empty() => self.send(Operation::ListModels, Purpose::Models),
            "/model" => self.send(Operation::SetModel(rest.to_owned()), Purpose::Model),
            "/new" => self.send(Operation::NewSession, Purpose::Session),
            "/resume" => self.send(Operation::ListSessions, Purpose::Sessions),
            "/compact" => self.send(Operation::Compact, Purpose::Compact),
            "/clear" => {
                self.transcript.clear();
                self.context = None;
                self.send(Operation::Clear, Purpose::Quiet);
            }
            "/quit" => self.quit = true,
            _ => {}
        }
    }
}
