//! An upstream server's questions passed down to the client of `rho mcp serve`: a form
//! (`elicitation/create`) or a request for the model (`sampling/createMessage`) asked during
//! a served call goes to the client as the same request when the client declared it can
//! answer it (in `initialize`, so a 2025-11-25 client: 2026-07-28 forbids a server's
//! requests), and is declined (a form) or refused (sampling) otherwise.

// rmcp marks sampling deprecated (SEP-2577); 2025-11-25 clients still answer it.
#![allow(deprecated)]

use rho_component::{
    AskFuture, Asker, FieldKind, Form, QuestionAnswer, SamplingAnswer, SamplingRequest,
    SamplingRole,
};
use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, ElicitationAction};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value, json};

/// Answers a served call's questions by asking the client.
pub(super) struct Downstream {
    peer: Peer<RoleServer>,
    forms: bool,
    sampling: bool,
}

impl Downstream {
    /// The asker for a call from `peer`: what it declared it can answer.
    pub(super) fn new(peer: Peer<RoleServer>) -> Self {
        let declared = peer.peer_info();
        let capabilities = declared.as_ref().map(|info| &info.capabilities);
        let legacy = declared
            .as_ref()
            .is_some_and(|info| info.protocol_version < rmcp::model::ProtocolVersion::V_2026_07_28);
        Self {
            forms: legacy && capabilities.is_some_and(|c| c.elicitation.is_some()),
            sampling: legacy && capabilities.is_some_and(|c| c.sampling.is_some()),
            peer,
        }
    }
}

impl Asker for Downstream {
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer> {
        Box::pin(async move {
            if !self.forms {
                return QuestionAnswer::Decline;
            }
            let Ok(params) =
                serde_json::from_value::<ElicitRequestParams>(form_request(server, &form))
            else {
                return QuestionAnswer::Decline;
            };
            match self.peer.create_elicitation(params).await {
                Ok(result) => match result.action {
                    ElicitationAction::Accept => {
                        QuestionAnswer::Accept(answers(result.content.as_ref()))
                    }
                    ElicitationAction::Cancel => QuestionAnswer::Cancel,
                    // Decline, and any action a later revision adds.
                    _ => QuestionAnswer::Decline,
                },
                Err(e) => {
                    tracing::debug!(target: "rho::serve", "the client could not answer a form: {e}");
                    QuestionAnswer::Decline
                }
            }
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(async move {
            if !self.sampling {
                return SamplingAnswer::Refused(
                    "the client of rho mcp serve cannot sample".to_owned(),
                );
            }
            let Ok(params) =
                serde_json::from_value::<CreateMessageRequestParams>(sampling_request(&request))
            else {
                return SamplingAnswer::Refused("the request cannot be passed on".to_owned());
            };
            let sent = self.peer.create_message(params).await;
            match sent.map(|result| serde_json::to_value(result).unwrap_or_default()) {
                Ok(result) => SamplingAnswer::Reply {
                    model: text_at(&result, "/model"),
                    text: text_at(&result, "/content/text"),
                    stop_reason: text_at(&result, "/stopReason"),
                },
                Err(e) => {
                    SamplingAnswer::Refused(format!("the client refused {server}'s request: {e}"))
                }
            }
        })
    }
}

/// The `elicitation/create` params of `form` (the server's message, prefixed with who asks).
fn form_request(server: &str, form: &Form) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &form.fields {
        let mut schema = match field.kind {
            FieldKind::Text => json!({"type": "string"}),
            FieldKind::Number => json!({"type": "number"}),
            FieldKind::Integer => json!({"type": "integer"}),
            FieldKind::Boolean => json!({"type": "boolean"}),
            FieldKind::Choice => json!({"type": "string", "enum": values(field)}),
            FieldKind::MultiChoice => {
                json!({"type": "array", "items": {"type": "string", "enum": values(field)}})
            }
        };
        if let Some(title) = &field.title {
            schema["title"] = json!(title);
        }
        if let Some(help) = &field.help {
            schema["description"] = json!(help);
        }
        if let Some(default) = &field.default {
            schema["default"] = typed(field.kind, default);
        }
        if field.required {
            required.push(json!(field.name));
        }
        properties.insert(field.name.clone(), schema);
    }
    json!({
        "mode": "form",
        "message": format!("{server} asks: {}", form.message),
        "requestedSchema": {"type": "object", "properties": properties, "required": required},
    })
}

/// A choice field's values.
fn values(field: &rho_component::FormField) -> Vec<&str> {
    field.choices.iter().map(|c| c.value.as_str()).collect()
}

/// A default given as text, as the JSON value its field holds.
fn typed(kind: FieldKind, text: &str) -> Value {
    let parsed = match kind {
        FieldKind::Number | FieldKind::Integer | FieldKind::Boolean => {
            serde_json::from_str(text).ok()
        }
        FieldKind::MultiChoice => Some(json!(text.split(',').map(str::trim).collect::<Vec<_>>())),
        FieldKind::Text | FieldKind::Choice => None,
    };
    parsed.unwrap_or_else(|| json!(text))
}

/// The client's answers as text by field name (rho types them back for the server): strings as
/// they are, arrays comma-joined, other values as JSON.
fn answers(content: Option<&Value>) -> std::collections::BTreeMap<String, String> {
    let Some(Value::Object(content)) = content else {
        return std::collections::BTreeMap::new();
    };
    content
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map_or_else(|| item.to_string(), str::to_owned)
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            (name.clone(), text)
        })
        .collect()
}

/// The `sampling/createMessage` params of `request`.
fn sampling_request(request: &SamplingRequest) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                SamplingRole::User => "user",
                SamplingRole::Assistant => "assistant",
            };
            json!({"role": role, "content": {"type": "text", "text": m.text}})
        })
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = &request.system_prompt {
        params["systemPrompt"] = json!(system);
    }
    params
}

/// The string at `pointer` in `value` (empty when absent).
fn text_at(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_component::{Choice, FormField};

    fn field(name: &str, kind: FieldKind) -> FormField {
        FormField {
            name: name.to_owned(),
            title: None,
            kind,
            choices: Vec::new(),
            default: None,
            required: true,
            help: None,
        }
    }

    #[test]
    fn a_form_becomes_an_elicitation_and_its_answers_text() {
        let mut color = field("color", FieldKind::Choice);
        color.choices = vec![Choice {
            value: "red".into(),
            title: None,
        }];
        let mut count = field("count", FieldKind::Integer);
        count.default = Some("3".into());
        count.required = false;
        let form = Form {
            message: "Pick".into(),
            fields: vec![color, count],
        };
        let request = form_request("paint", &form);
        assert_eq!(request["message"], "paint asks: Pick");
        let schema = &request["requestedSchema"];
        assert_eq!(schema["properties"]["color"]["enum"], json!(["red"]));
        assert_eq!(schema["properties"]["count"]["default"], json!(3));
        assert_eq!(schema["required"], json!(["color"]));
        assert!(serde_json::from_value::<ElicitRequestParams>(request).is_ok());
        let answered = answers(Some(
            &json!({"color": "red", "count": 4, "tags": ["a", "b"]}),
        ));
        assert_eq!(answered["color"], "red");
        assert_eq!(answered["count"], "4");
        assert_eq!(answered["tags"], "a,b");
        assert!(answers(None).is_empty());
    }

    #[test]
    fn a_sampling_request_keeps_its_messages() {
        let request = SamplingRequest {
            system_prompt: Some("Be brief".into()),
            messages: vec![rho_component::SamplingMessage {
                role: SamplingRole::User,
                text: "Hi".into(),
            }],
            max_tokens: 50,
        };
        let params = sampling_request(&request);
        assert_eq!(params["systemPrompt"], "Be brief");
        assert_eq!(params["messages"][0]["content"]["text"], "Hi");
        assert!(serde_json::from_value::<CreateMessageRequestParams>(params).is_ok());
    }
}
