//! An upstream server's questions passed down to the client of `rho mcp serve`: a form
//! (`elicitation/create`) or a request for the model (`sampling/createMessage`) asked during
//! a served call goes to the client when it declared it can answer it, and is declined (a
//! form) or refused (sampling) otherwise. A 2025-11-25 client is asked with the same request;
//! a 2026-07-28 client, whose revision forbids a server's requests, gets it as an input
//! request in the call's result (`parked.rs`) and answers it when it retries the call.

// rmcp marks sampling deprecated (SEP-2577); 2025-11-25 clients still answer it.
#![allow(deprecated)]

use rho_component::{
    AskFuture, Asker, FieldKind, Form, LogLevel, QuestionAnswer, SamplingAnswer, SamplingRequest,
    SamplingRole, ServerLog,
};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, LoggingMessageNotificationParam, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

/// The method of an input request that asks for a form.
pub(super) const ELICITATION: &str = "elicitation/create";
/// The method of an input request that asks for the model.
pub(super) const SAMPLING: &str = "sampling/createMessage";
/// The method of an input request that asks for the client's roots.
pub(super) const ROOTS: &str = "roots/list";

/// A question of a served call put to a 2026-07-28 client: the input request (`method` and
/// `params`) and where its response goes.
pub(super) struct Asked {
    /// The upstream server's key for it, when it asked with an input request of its own.
    pub key: Option<String>,
    /// `{"method": ..., "params": ...}` as the client reads it in `inputRequests`.
    pub request: Value,
    /// Takes the client's response (checked by [`answers_request`] first).
    pub answer: oneshot::Sender<Value>,
}

/// Where a served call's questions go.
enum Route {
    /// As requests to a 2025-11-25 client.
    Requests(Peer<RoleServer>),
    /// As input requests to a 2026-07-28 client: to the call's [`super::parked::Call`].
    InputRequests(mpsc::Sender<Asked>),
}

/// Answers a served call's questions by asking the client, and passes it the log messages
/// its server sends while the call runs.
pub(super) struct Downstream {
    route: Route,
    forms: bool,
    sampling: bool,
    /// The client declared roots: a server's `roots/list` during the call gets the client's.
    roots: bool,
    /// Where the call's log messages go, in order, and the least severe one the client wants;
    /// `None` when it asked for none.
    logs: Option<(mpsc::Sender<LogItem>, LogLevel)>,
}

/// Log messages waiting to reach a client, at most: more are dropped rather than hold up
/// the server's connection.
const LOG_QUEUE: usize = 64;

/// A sender that delivers log messages to `peer` in order, for a client that asked for
/// messages of `level` and above.
fn log_forwarder(
    peer: &Peer<RoleServer>,
    level: Option<LogLevel>,
) -> Option<(mpsc::Sender<LogItem>, LogLevel)> {
    let level = level?;
    let (logs, mut to_send) = mpsc::channel::<LogItem>(LOG_QUEUE);
    let peer = peer.clone();
    tokio::spawn(async move {
        while let Some(item) = to_send.recv().await {
            match item {
                LogItem::Message(log) => {
                    if peer.notify_logging_message(log).await.is_err() {
                        return;
                    }
                }
                LogItem::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    });
    Some((logs, level))
}

/// One item of a call's log queue.
enum LogItem {
    /// A message to send.
    Message(LoggingMessageNotificationParam),
    /// Answered once every message before it was sent.
    Flush(oneshot::Sender<()>),
}

/// How long a call's result waits for its last log messages to be sent.
const LOG_FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the client of a request speaks 2026-07-28 (or later), and what it declared it can
/// answer: a 2026-07-28 request names both in its `_meta`, a 2025-11-25 client said them in
/// `initialize`.
pub(super) fn declared(context: &RequestContext<RoleServer>) -> (bool, Option<ClientCapabilities>) {
    let info = context.peer.peer_info();
    let version = context
        .meta
        .protocol_version()
        .or_else(|| info.as_ref().map(|i| i.protocol_version.clone()));
    let modern = version.is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let capabilities = context
        .meta
        .client_capabilities()
        .or_else(|| info.as_ref().map(|i| i.capabilities.clone()));
    (modern, capabilities)
}

impl Downstream {
    /// The asker for a call of a 2025-11-25 client (`peer`), which set `log_level` for its
    /// session (`logging/setLevel`); a 2026-07-28 client's calls are asked through
    /// [`Downstream::input_requests`], so here its questions are declined.
    pub(super) fn new(
        peer: Peer<RoleServer>,
        context: &RequestContext<RoleServer>,
        log_level: Option<LogLevel>,
    ) -> Self {
        let (modern, capabilities) = declared(context);
        let capabilities = capabilities.filter(|_| !modern);
        Self {
            forms: capabilities
                .as_ref()
                .is_some_and(|c| c.elicitation.is_some()),
            sampling: capabilities.as_ref().is_some_and(|c| c.sampling.is_some()),
            roots: capabilities.as_ref().is_some_and(|c| c.roots.is_some()),
            logs: log_forwarder(&peer, log_level),
            route: Route::Requests(peer),
        }
    }

    /// The asker for a call of a 2026-07-28 client that declared `capabilities` (and, in its
    /// request's `_meta`, the `log_level` it wants messages of; they go on that request's
    /// `peer`): each question goes to `asked` as an input request.
    pub(super) fn input_requests(
        asked: mpsc::Sender<Asked>,
        capabilities: Option<&ClientCapabilities>,
        peer: &Peer<RoleServer>,
        log_level: Option<LogLevel>,
    ) -> Self {
        Self {
            forms: capabilities.is_some_and(|c| c.elicitation.is_some()),
            sampling: capabilities.is_some_and(|c| c.sampling.is_some()),
            roots: capabilities.is_some_and(|c| c.roots.is_some()),
            logs: log_forwarder(peer, log_level),
            route: Route::InputRequests(asked),
        }
    }
}

impl Downstream {
    /// Waits until every log message passed so far was sent (at most [`LOG_FLUSH_WAIT`]): a
    /// client gets no log message of a call after its result.
    pub(super) async fn logs_flushed(&self) {
        let Some((logs, _)) = &self.logs else {
            return;
        };
        let (done, sent) = oneshot::channel();
        if logs.send(LogItem::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(LOG_FLUSH_WAIT, sent).await;
        }
    }
}

/// Puts one input request (`method`, `params`, the upstream's `key`) to the client of a
/// 2026-07-28 call through `asked`; its response, or `None` when the call is gone.
pub(super) async fn input_request(
    asked: &mpsc::Sender<Asked>,
    key: Option<String>,
    method: &str,
    params: Value,
) -> Option<Value> {
    let (answer, response) = oneshot::channel();
    let request = json!({ "method": method, "params": params });
    asked
        .send(Asked {
            key,
            request,
            answer,
        })
        .await
        .ok()?;
    response.await.ok()
}

/// Whether `response` is a well-formed answer to an input request of `method` (a response
/// that is not stays unanswered, and the client is asked again).
pub(super) fn answers_request(method: &str, response: &Value) -> bool {
    match method {
        ELICITATION => serde_json::from_value::<ElicitResult>(response.clone()).is_ok(),
        SAMPLING => serde_json::from_value::<CreateMessageResult>(response.clone()).is_ok(),
        ROOTS => serde_json::from_value::<rmcp::model::ListRootsResult>(response.clone()).is_ok(),
        _ => false,
    }
}

impl Asker for Downstream {
    /// Each served call's questions go to its own client.
    fn asks_one_person(&self) -> bool {
        false
    }

    fn list_roots<'a>(&'a self, _server: &'a str) -> AskFuture<'a, Option<Value>> {
        Box::pin(self.roots())
    }

    fn pass_log(&self, server: &str, log: &ServerLog) {
        let Some((logs, least)) = &self.logs else {
            return;
        };
        if log.level < *least {
            return;
        }
        let level = crate::connection::protocol_level(log.level);
        let mut param = LoggingMessageNotificationParam::new(level, log.data.clone());
        // The client learns which server wrote it.
        param.logger = Some(match &log.logger {
            Some(logger) => format!("{server}/{logger}"),
            None => server.to_owned(),
        });
        // A full queue drops the message rather than hold up the server's connection.
        let _ = logs.try_send(LogItem::Message(param));
    }

    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer> {
        Box::pin(self.form(server, form))
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(self.sampled(server, request))
    }
}

impl Downstream {
    /// The client's roots (`roots/list`), when it declared them.
    async fn roots(&self) -> Option<Value> {
        if !self.roots {
            return None;
        }
        match &self.route {
            Route::Requests(peer) => match peer.list_roots().await {
                Ok(roots) => serde_json::to_value(roots).ok(),
                Err(e) => {
                    tracing::debug!(target: "rho::serve", "the client could not list its roots: {e}");
                    None
                }
            },
            Route::InputRequests(asked) => input_request(asked, None, ROOTS, json!({})).await,
        }
    }

    /// `form` from `server`, asked of the client (an elicitation).
    async fn form(&self, server: &str, form: Form) -> QuestionAnswer {
        if !self.forms {
            return QuestionAnswer::Decline;
        }
        let request = form_request(server, &form);
        let key = form.key;
        let result = match &self.route {
            Route::Requests(peer) => {
                let Ok(params) = serde_json::from_value::<ElicitRequestParams>(request) else {
                    return QuestionAnswer::Decline;
                };
                match peer.create_elicitation(params).await {
                    Ok(result) => result,
                    Err(e) => {
                        tracing::debug!(target: "rho::serve", "the client could not answer a form: {e}");
                        return QuestionAnswer::Decline;
                    }
                }
            }
            Route::InputRequests(asked) => {
                let response = input_request(asked, key, ELICITATION, request).await;
                match response.map(serde_json::from_value::<ElicitResult>) {
                    Some(Ok(result)) => result,
                    _ => return QuestionAnswer::Decline,
                }
            }
        };
        match result.action {
            ElicitationAction::Accept => QuestionAnswer::Accept(answers(result.content.as_ref())),
            ElicitationAction::Cancel => QuestionAnswer::Cancel,
            // Decline, and any action a later revision adds.
            _ => QuestionAnswer::Decline,
        }
    }

    /// `server`'s sampling request, passed to the client.
    async fn sampled(&self, server: &str, request: SamplingRequest) -> SamplingAnswer {
        if !self.sampling {
            return SamplingAnswer::Refused("the client of rho mcp serve cannot sample".to_owned());
        }
        let key = request.key.clone();
        let request = sampling_request(&request);
        let result = match &self.route {
            Route::Requests(peer) => {
                let Ok(params) = serde_json::from_value::<CreateMessageRequestParams>(request)
                else {
                    return SamplingAnswer::Refused("the request cannot be passed on".to_owned());
                };
                peer.create_message(params)
                    .await
                    .map(|result| serde_json::to_value(result).unwrap_or_default())
                    .map_err(|e| e.to_string())
            }
            Route::InputRequests(asked) => input_request(asked, key, SAMPLING, request)
                .await
                .ok_or_else(|| "the call ended".to_owned()),
        };
        match result {
            Ok(result) => SamplingAnswer::Reply {
                model: text_at(&result, "/model"),
                text: text_at(&result, "/content/text"),
                stop_reason: text_at(&result, "/stopReason"),
            },
            Err(e) => {
                SamplingAnswer::Refused(format!("the client refused {server}'s request: {e}"))
            }
        }
    }
}

/// The `elicitation/create` params of `form`: the server's message, prefixed with who asks, and
/// its schema as it sent it (or, for a form rho built, the schema of its fields).
fn form_request(server: &str, form: &Form) -> Value {
    let message = format!("{server} asks: {}", form.message);
    if let Some(schema) = &form.schema {
        return json!({"mode": "form", "message": message, "requestedSchema": schema});
    }
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
        "message": message,
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
            key: None,
            schema: None,
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
    fn a_forms_own_schema_is_passed_on_as_the_server_sent_it() {
        let schema = json!({"type": "object", "properties": {"pick": {"type": "string",
            "oneOf": [{"const": "a", "title": "First"}]}}});
        let form = Form {
            message: "Pick".into(),
            fields: vec![field("pick", FieldKind::Choice)],
            key: None,
            schema: Some(schema.clone()),
        };
        let request = form_request("paint", &form);
        assert_eq!(request["requestedSchema"], schema);
        assert_eq!(request["message"], "paint asks: Pick");
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
            key: None,
        };
        let params = sampling_request(&request);
        assert_eq!(params["systemPrompt"], "Be brief");
        assert_eq!(params["messages"][0]["content"]["text"], "Hi");
        assert!(serde_json::from_value::<CreateMessageRequestParams>(params).is_ok());
    }
}
