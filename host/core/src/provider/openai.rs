//! [`OpenAiCompatible`]: the chat-completions client for any OpenAI-compatible endpoint
//! (llama.cpp, Ollama, vLLM, OpenRouter, OpenAI).
//!
//! Requests stream (`stream: true`, usage requested in a final chunk); a server that ignores
//! that and answers with one JSON completion is understood too. Every await races the cancel
//! signal and a deadline: the first byte of the answer must arrive within the request timeout,
//! each later chunk within the idle timeout. Dropping the response on cancel closes the
//! connection, which is how the server learns to stop generating. The API key goes out only
//! as a sensitive `Authorization` header and never into an error, a log line or `Debug`.

use std::error::Error as _;
use std::future::Future;
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use rho_component::CancelSignal;
use rho_component::endpoint::check_remote_url;
use serde_json::Value;
use tokio::time::Instant;
use url::Url;

use super::ProviderError;
use super::chat::{ChatRequest, ChatResponse, Provider, ProviderFuture, StreamEvent};
use super::openai_wire::{Accumulator, ReportedError, error_message, request_body};
use super::sse::{SseEvent, SseParser};

/// The default budget for the first byte of an answer (prompt processing on a local model can
/// take minutes).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// The default budget between two chunks of a streamed answer.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

const MAX_EVENT_BYTES: usize = 8 << 20;
const MAX_STREAM_BYTES: usize = 256 << 20;
const MAX_JSON_BYTES: usize = 32 << 20;
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;
const MAX_MESSAGE_CHARS: usize = 1000;

/// How to reach one OpenAI-compatible endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The provider name used in messages and inventories.
    pub name: String,
    /// The chat-completions URL (`…/chat/completions`), or the base it hangs off (`…/v1`), to
    /// which `/chat/completions` is appended.
    pub endpoint: String,
    /// The API key, sent as `Authorization: Bearer …` (`None` or empty: no header).
    pub api_key: Option<String>,
    /// The model id used when a request names none.
    pub model: String,
    /// How long the first byte of an answer may take (connecting included).
    pub request_timeout: Duration,
    /// How long the stream may stay silent between two chunks.
    pub idle_timeout: Duration,
}

impl OpenAiConfig {
    /// A configuration without a key and with the default timeouts.
    pub fn new(
        name: impl Into<String>,
        endpoint: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            endpoint: endpoint.into(),
            api_key: None,
            model: model.into(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// The same configuration with `key` as the API key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
}

fn redacted(key: &Option<String>) -> &'static str {
    match key {
        Some(key) if !key.is_empty() => "Some([redacted])",
        _ => "None",
    }
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("api_key", &format_args!("{}", redacted(&self.api_key)))
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// A [`Provider`] speaking the OpenAI chat-completions protocol.
pub struct OpenAiCompatible {
    name: String,
    chat_url: Url,
    models_url: Url,
    /// The URLs as messages show them: origin and path, no query.
    chat_shown: String,
    models_shown: String,
    api_key: Option<String>,
    auth: Option<HeaderValue>,
    model: String,
    request_timeout: Duration,
    idle_timeout: Duration,
    /// Built on the first request: loading the system's certificate store costs ~1.5 ms,
    /// which a session that never talks (or starts `ready` first) should not pay up front.
    client: std::sync::OnceLock<reqwest::Client>,
}

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("name", &self.name)
            .field("endpoint", &self.chat_shown)
            .field("api_key", &format_args!("{}", redacted(&self.api_key)))
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// The chat and models URLs for a configured endpoint.
fn endpoint_urls(raw: &str) -> Result<(Url, Url), String> {
    check_remote_url(raw).map_err(|problem| problem.to_string())?;
    let mut chat = Url::parse(raw).map_err(|e| format!("url is not an absolute URL ({e})"))?;
    let path = chat.path().trim_end_matches('/').to_owned();
    let base = path
        .strip_suffix("/chat/completions")
        .unwrap_or(&path)
        .to_owned();
    chat.set_path(&format!("{base}/chat/completions"));
    let mut models = chat.clone();
    models.set_path(&format!("{base}/models"));
    Ok((chat, models))
}

fn shown(url: &Url) -> String {
    format!("{}{}", url.origin().ascii_serialization(), url.path())
}

fn ceil_secs(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

impl OpenAiCompatible {
    /// A client for `config`. Fails with [`ProviderError::Config`] when the endpoint is not an
    /// `http`/`https` URL, uses plain `http` to a host that is not loopback, carries user
    /// information, or when the key or a timeout is unusable.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let OpenAiConfig {
            name,
            endpoint,
            api_key,
            model,
            request_timeout,
            idle_timeout,
        } = config;
        let config_error = |message: String| ProviderError::Config {
            provider: name.clone(),
            message,
        };
        let (chat_url, models_url) = endpoint_urls(&endpoint).map_err(config_error)?;
        if request_timeout.is_zero() || idle_timeout.is_zero() {
            return Err(config_error("timeouts must be longer than zero".into()));
        }
        let api_key = api_key.filter(|key| !key.is_empty());
        let auth = match &api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    config_error(
                        "the api key contains characters not allowed in an HTTP header".into(),
                    )
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        Ok(Self {
            name,
            chat_shown: shown(&chat_url),
            models_shown: shown(&models_url),
            chat_url,
            models_url,
            api_key,
            auth,
            model,
            request_timeout,
            idle_timeout,
            client: std::sync::OnceLock::new(),
        })
    }

    /// The HTTP client, built on first use.
    fn client(&self) -> Result<&reqwest::Client, ProviderError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ProviderError::Config {
                provider: self.name.clone(),
                message: format!("cannot build the HTTP client: {}", chain(e)),
            })?;
        Ok(self.client.get_or_init(|| client))
    }

    /// The chat-completions URL as messages show it (no query).
    pub fn endpoint(&self) -> &str {
        &self.chat_shown
    }

    /// The model id used when a request names none.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Server text made safe for a message: the key scrubbed, one line, bounded.
    fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        if let Some(key) = &self.api_key {
            text = text.replace(key.as_str(), "[redacted]");
        }
        let mut out: String = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_MESSAGE_CHARS)
            .collect();
        if text.chars().count() > MAX_MESSAGE_CHARS {
            out.push('…');
        }
        out
    }

    fn protocol(&self, endpoint: &str, message: impl Into<String>) -> ProviderError {
        ProviderError::Protocol {
            provider: self.name.clone(),
            endpoint: endpoint.to_owned(),
            message: self.clean(&message.into()),
        }
    }

    fn timeout(&self, endpoint: &str, budget: Duration) -> ProviderError {
        ProviderError::Timeout {
            provider: self.name.clone(),
            endpoint: endpoint.to_owned(),
            seconds: ceil_secs(budget),
        }
    }

    fn reported(&self, endpoint: &str, error: ReportedError) -> ProviderError {
        match error.status {
            Some(status) => ProviderError::Http {
                provider: self.name.clone(),
                endpoint: endpoint.to_owned(),
                status,
                message: self.clean(&error.message),
            },
            None => self.protocol(endpoint, format!("error in the answer: {}", error.message)),
        }
    }

    fn send_error(&self, endpoint: &str, budget: Duration, error: reqwest::Error) -> ProviderError {
        if error.is_timeout() {
            return self.timeout(endpoint, budget);
        }
        ProviderError::Connect {
            provider: self.name.clone(),
            endpoint: endpoint.to_owned(),
            message: self.clean(&chain(error)),
        }
    }

    /// Sends `request` and waits for the response head.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        endpoint: &str,
        cancel: &CancelSignal,
    ) -> Result<Body<'_>, ProviderError> {
        let request = match &self.auth {
            Some(auth) => request.header(AUTHORIZATION, auth.clone()),
            None => request,
        };
        let deadline = Instant::now() + self.request_timeout;
        let response = race(cancel, deadline, request.send())
            .await
            .map_err(|e| e.into_error(self, endpoint, self.request_timeout))?
            .map_err(|e| self.send_error(endpoint, self.request_timeout, e))?;
        let body = Body {
            provider: self,
            endpoint: endpoint.to_owned(),
            response,
            deadline,
            budget: self.request_timeout,
        };
        let status = body.response.status();
        if !status.is_success() {
            return Err(body.into_http_error(cancel).await);
        }
        Ok(body)
    }

    async fn complete_inner(
        &self,
        request: &ChatRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
        cancel: &CancelSignal,
    ) -> Result<ChatResponse, ProviderError> {
        let endpoint = self.chat_shown.as_str();
        let model = if request.model.is_empty() {
            self.model.as_str()
        } else {
            request.model
        };
        let payload = request_body(model, request)
            .map_err(|e| self.protocol(endpoint, format!("cannot encode the request: {e}")))?;
        let builder = self
            .client()?
            .post(self.chat_url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream, application/json")
            .body(payload);
        let mut body = self.send(builder, endpoint, cancel).await?;
        let declared = body
            .response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let Some(first) = body.next(cancel).await? else {
            return Err(self.protocol(endpoint, "the answer is empty"));
        };
        let is_json = if declared.starts_with("text/event-stream") {
            false
        } else if declared.contains("json") {
            true
        } else {
            // No usable content type: a JSON completion is an object, a stream is not.
            first.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        };
        let mut accumulator = Accumulator::default();
        if is_json {
            let bytes = body
                .read_all(first.to_vec(), MAX_JSON_BYTES, cancel)
                .await?;
            let value: Value = serde_json::from_slice(&bytes)
                .map_err(|e| self.protocol(endpoint, format!("the answer is not JSON ({e})")))?;
            accumulator
                .completion(&value, on_event)
                .map_err(|e| self.reported(endpoint, e))?;
            return Ok(accumulator.finish());
        }
        let mut parser = SseParser::new(MAX_EVENT_BYTES, MAX_STREAM_BYTES);
        let mut events = Vec::new();
        let mut chunk = Some(first);
        loop {
            match &chunk {
                Some(bytes) => parser
                    .push(bytes, &mut events)
                    .map_err(|e| self.protocol(endpoint, e.to_string()))?,
                None => parser.finish(&mut events),
            }
            for event in events.drain(..) {
                if self.apply_event(endpoint, &event, &mut accumulator, on_event)? {
                    // `[DONE]`: whatever follows is ignored and the connection released.
                    return Ok(accumulator.finish());
                }
            }
            if chunk.is_none() {
                break;
            }
            chunk = body.next(cancel).await?;
        }
        if accumulator.finished() {
            Ok(accumulator.finish())
        } else {
            Err(self.protocol(
                endpoint,
                "the stream ended before a finish_reason or [DONE] arrived",
            ))
        }
    }

    /// Applies one SSE event; `true` at `[DONE]`.
    fn apply_event(
        &self,
        endpoint: &str,
        event: &SseEvent,
        accumulator: &mut Accumulator,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<bool, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let parsed = serde_json::from_str::<Value>(data);
        if event.event == "error" {
            let error = match &parsed {
                Ok(value) => ReportedError::from_body(value),
                Err(_) => ReportedError {
                    message: data.to_owned(),
                    status: None,
                },
            };
            return Err(self.reported(endpoint, error));
        }
        let value = parsed
            .map_err(|e| self.protocol(endpoint, format!("a stream event is not JSON ({e})")))?;
        accumulator
            .chunk(&value, on_event)
            .map_err(|e| self.reported(endpoint, e))?;
        Ok(false)
    }

    async fn list_models_inner(&self) -> Result<Vec<String>, ProviderError> {
        let endpoint = self.models_shown.as_str();
        // Listing has no cancel of its own; the timeouts bound it.
        let cancel = CancelSignal::new();
        let builder = self
            .client()?
            .get(self.models_url.clone())
            .header(ACCEPT, "application/json");
        let mut body = self.send(builder, endpoint, &cancel).await?;
        let bytes = body.read_all(Vec::new(), MAX_JSON_BYTES, &cancel).await?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| self.protocol(endpoint, format!("the model list is not JSON ({e})")))?;
        let Some(data) = value.get("data").and_then(Value::as_array) else {
            return Err(self.protocol(endpoint, "the model list has no `data` array"));
        };
        Ok(data
            .iter()
            .filter_map(|model| model.get("id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect())
    }
}

impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
        on_event: &'a (dyn Fn(StreamEvent) + Send + Sync),
        cancel: &'a CancelSignal,
    ) -> ProviderFuture<'a, ChatResponse> {
        Box::pin(self.complete_inner(request, on_event, cancel))
    }

    fn list_models(&self) -> ProviderFuture<'_, Vec<String>> {
        Box::pin(self.list_models_inner())
    }
}

/// Why a raced await did not complete.
enum Interrupted {
    Cancelled,
    TimedOut,
}

impl Interrupted {
    fn into_error(
        self,
        provider: &OpenAiCompatible,
        endpoint: &str,
        budget: Duration,
    ) -> ProviderError {
        match self {
            Self::Cancelled => ProviderError::Cancelled,
            Self::TimedOut => provider.timeout(endpoint, budget),
        }
    }
}

/// Awaits `future` unless `cancel` fires or `deadline` passes first.
async fn race<F: Future>(
    cancel: &CancelSignal,
    deadline: Instant,
    future: F,
) -> Result<F::Output, Interrupted> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Interrupted::Cancelled),
        out = tokio::time::timeout_at(deadline, future) => out.map_err(|_| Interrupted::TimedOut),
    }
}

/// A response body read chunk by chunk under the deadlines.
struct Body<'a> {
    provider: &'a OpenAiCompatible,
    endpoint: String,
    response: reqwest::Response,
    /// Until the first chunk: the request deadline; afterwards the idle deadline.
    deadline: Instant,
    budget: Duration,
}

impl Body<'_> {
    async fn next(&mut self, cancel: &CancelSignal) -> Result<Option<Vec<u8>>, ProviderError> {
        loop {
            let chunk = race(cancel, self.deadline, self.response.chunk())
                .await
                .map_err(|e| e.into_error(self.provider, &self.endpoint, self.budget))?
                .map_err(|e| {
                    if e.is_timeout() {
                        self.provider.timeout(&self.endpoint, self.budget)
                    } else {
                        self.provider.protocol(
                            &self.endpoint,
                            format!("the answer broke off: {}", chain(e)),
                        )
                    }
                })?;
            self.budget = self.provider.idle_timeout;
            self.deadline = Instant::now() + self.budget;
            match chunk {
                Some(bytes) if bytes.is_empty() => continue,
                Some(bytes) => return Ok(Some(bytes.to_vec())),
                None => return Ok(None),
            }
        }
    }

    /// The rest of the body after `start`; longer than `limit` is an error.
    async fn read_all(
        &mut self,
        mut start: Vec<u8>,
        limit: usize,
        cancel: &CancelSignal,
    ) -> Result<Vec<u8>, ProviderError> {
        while let Some(bytes) = self.next(cancel).await? {
            if start.len() + bytes.len() > limit {
                return Err(self
                    .provider
                    .protocol(&self.endpoint, format!("the answer exceeds {limit} bytes")));
            }
            start.extend_from_slice(&bytes);
        }
        Ok(start)
    }

    /// The error for a non-success status, with the message from a bounded read of the body.
    async fn into_http_error(mut self, cancel: &CancelSignal) -> ProviderError {
        let status = self.response.status();
        let mut bytes = Vec::new();
        loop {
            match self.next(cancel).await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() >= MAX_ERROR_BODY_BYTES {
                        bytes.truncate(MAX_ERROR_BODY_BYTES);
                        break;
                    }
                }
                Ok(None) => break,
                Err(ProviderError::Cancelled) => return ProviderError::Cancelled,
                // A body that cannot be read still leaves the status to report.
                Err(_) => break,
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let html = self
            .response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("html"));
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|value| error_message(&value))
            .unwrap_or_else(|| plain_error_text(&text, html).to_owned());
        let mut message = self.provider.clean(&message);
        if message.is_empty() {
            message = status.canonical_reason().unwrap_or("no message").to_owned();
        }
        ProviderError::Http {
            provider: self.provider.name.clone(),
            endpoint: self.endpoint,
            status: status.as_u16(),
            message,
        }
    }
}

/// What a non-JSON error body says, as one line: nothing for a page of markup (a proxy's or
/// a web server's HTML error page would fill the report; the status says it), else the body's
/// first non-empty line.
fn plain_error_text(text: &str, html: bool) -> &str {
    let text = text.trim_start();
    if html || text.starts_with('<') {
        return "";
    }
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// An error and its sources on one line, without the URL reqwest would add.
fn chain(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(raw: &str) -> (String, String) {
        let (chat, models) = endpoint_urls(raw).unwrap();
        (chat.to_string(), models.to_string())
    }

    #[test]
    fn endpoints_are_normalized() {
        for raw in [
            "http://localhost:8080/v1",
            "http://localhost:8080/v1/",
            "http://localhost:8080/v1/chat/completions",
        ] {
            assert_eq!(
                urls(raw),
                (
                    "http://localhost:8080/v1/chat/completions".into(),
                    "http://localhost:8080/v1/models".into()
                ),
                "{raw}"
            );
        }
        assert_eq!(
            urls("https://example.com/openai/v1?api-version=1").1,
            "https://example.com/openai/v1/models?api-version=1"
        );
    }

    #[test]
    fn plain_http_only_to_loopback() {
        for ok in [
            "http://127.0.0.1:1/v1",
            "http://[::1]:1/v1",
            "http://localhost/v1",
            "https://api.example.com/v1",
        ] {
            assert!(endpoint_urls(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://api.example.com/v1",
            "http://10.0.0.1/v1",
            "ftp://localhost/v1",
            "https://user:pw@example.com/v1",
            "not a url",
        ] {
            assert!(endpoint_urls(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn debug_and_errors_redact_the_key() {
        let key = "sk-canary-0123456789";
        let config = OpenAiConfig::new("p", "http://127.0.0.1:9/v1", "m").with_api_key(key);
        assert!(!format!("{config:?}").contains(key));
        let provider = OpenAiCompatible::new(config).unwrap();
        assert!(!format!("{provider:?}").contains(key));
        assert!(format!("{provider:?}").contains("[redacted]"));
        assert_eq!(
            provider.clean(&format!("bad key {key}\n\tsee docs")),
            "bad key [redacted] see docs"
        );
        let err = OpenAiCompatible::new(
            OpenAiConfig::new("p", "http://127.0.0.1:9/v1", "m").with_api_key("bad\nkey"),
        )
        .unwrap_err();
        assert!(!err.to_string().contains("bad\nkey"));
    }
}
