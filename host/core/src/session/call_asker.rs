//! The asker of one tool call: a server's form or sampling request becomes a
//! [`QuestionRequest`] on the front-end's desk, naming the call; an allowed sampling request
//! runs on the session's current model, bounded and cancelled with the turn, and its spend is
//! recorded apart from the user's (`docs/mcp.md`, "Questions from a server" and "Completions
//! for a server").

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rho_component::{
    AskFuture, Asker, CancelSignal, Form, QuestionAnswer, SamplingAnswer, SamplingRequest,
    SamplingRole,
};

use super::events::{QuestionKind, QuestionRequest};
use crate::provider::{ChatMessage, ChatRequest, FinishReason, Provider, ProviderError, Usage};

/// How long one sampling request may use the model.
pub const SAMPLING_TIME_LIMIT: Duration = Duration::from_secs(180);

/// Where questions are put in front of a person: the session host implements it. The desk
/// assigns the question's id, shows it, and waits for the answer; dropping the future
/// withdraws the question. A desk that can no longer ask (input closed) answers
/// [`QuestionAnswer::Decline`] at once.
pub trait QuestionDesk: Send + Sync {
    /// Shows `question` (its `id` is assigned by the desk) and waits for the answer.
    fn ask(&self, question: QuestionRequest) -> AskFuture<'_, QuestionAnswer>;
}

/// The asker a session gives one tool call.
pub(super) struct CallAsker {
    pub(super) desk: Arc<dyn QuestionDesk>,
    pub(super) call_id: String,
    pub(super) provider: Arc<dyn Provider>,
    pub(super) model: String,
    /// Sampling spend not yet recorded by the session.
    pub(super) ledger: Arc<Mutex<Usage>>,
    /// The turn's signal: a dismissed question ends the turn, and cancelling the turn stops a
    /// sampling request.
    pub(super) turn: CancelSignal,
}

impl Asker for CallAsker {
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer> {
        Box::pin(async move {
            let question = QuestionRequest {
                id: 0,
                kind: QuestionKind::Elicitation,
                server: server.to_owned(),
                call_id: self.call_id.clone(),
                message: form.message,
                fields: form.fields,
                messages: Vec::new(),
                max_tokens: None,
            };
            let answer = self.desk.ask(question).await;
            if answer == QuestionAnswer::Cancel {
                self.turn.cancel();
            }
            answer
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(async move {
            let count = request.messages.len();
            let question = QuestionRequest {
                id: 0,
                kind: QuestionKind::Sampling,
                server: server.to_owned(),
                call_id: self.call_id.clone(),
                message: format!(
                    "{server} asks to use your model ({}) for a reply to {count} message{}, up \
                     to {} tokens",
                    self.model,
                    if count == 1 { "" } else { "s" },
                    request.max_tokens
                ),
                fields: Vec::new(),
                messages: request.messages.clone(),
                max_tokens: Some(request.max_tokens),
            };
            match self.desk.ask(question).await {
                QuestionAnswer::Accept(_) => {}
                QuestionAnswer::Decline => {
                    return SamplingAnswer::Refused("the user declined the request".into());
                }
                QuestionAnswer::Cancel => {
                    self.turn.cancel();
                    return SamplingAnswer::Cancel;
                }
            }
            self.run(server, &request).await
        })
    }
}

impl CallAsker {
    /// Runs an allowed request on the session's model: the conversation flattened into one
    /// labelled user message, bounded by [`SAMPLING_TIME_LIMIT`] and the turn.
    async fn run(&self, server: &str, request: &SamplingRequest) -> SamplingAnswer {
        let system = ChatMessage::system(request.system_prompt.clone().unwrap_or_else(|| {
            format!("You are writing a reply for the MCP server {server}, at the user's request.")
        }));
        let user = ChatMessage::user(flatten(request));
        let chat = ChatRequest {
            model: &self.model,
            messages: vec![&system, &user],
            tools: &[],
        };
        let outcome = tokio::time::timeout(
            SAMPLING_TIME_LIMIT,
            self.provider.complete(&chat, &|_| {}, &self.turn),
        )
        .await;
        let response = match outcome {
            Err(_) => {
                return SamplingAnswer::Refused(format!(
                    "the model did not answer within {} s",
                    SAMPLING_TIME_LIMIT.as_secs()
                ));
            }
            Ok(Err(ProviderError::Cancelled)) => return SamplingAnswer::Cancel,
            Ok(Err(e)) => return SamplingAnswer::Refused(format!("the model failed: {e}")),
            Ok(Ok(response)) => response,
        };
        let mut usage = response.usage;
        usage.request_count = usage.request_count.max(1);
        self.ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(&usage);
        SamplingAnswer::Reply {
            model: self.model.clone(),
            text: response.content,
            stop_reason: if response.finish_reason == FinishReason::Length {
                "maxTokens".into()
            } else {
                "endTurn".into()
            },
        }
    }
}

/// A multi-turn sampling conversation as one text, each message labelled with its side.
fn flatten(request: &SamplingRequest) -> String {
    if let [only] = request.messages.as_slice()
        && only.role == SamplingRole::User
    {
        return only.text.clone();
    }
    let mut text = String::new();
    for message in &request.messages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(match message.role {
            SamplingRole::User => "[user]\n",
            SamplingRole::Assistant => "[assistant]\n",
        });
        text.push_str(&message.text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_component::SamplingMessage;

    #[test]
    fn conversations_are_flattened_with_labels() {
        let one = SamplingRequest {
            system_prompt: None,
            messages: vec![SamplingMessage {
                role: SamplingRole::User,
                text: "hi".into(),
            }],
            max_tokens: 10,
            key: None,
        };
        assert_eq!(flatten(&one), "hi");
        let two = SamplingRequest {
            messages: vec![
                SamplingMessage {
                    role: SamplingRole::User,
                    text: "q".into(),
                },
                SamplingMessage {
                    role: SamplingRole::Assistant,
                    text: "a".into(),
                },
            ],
            ..one
        };
        assert_eq!(flatten(&two), "[user]\nq\n\n[assistant]\na");
    }
}
