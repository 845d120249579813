//! Model providers: the provider-neutral conversation types and the [`Provider`] trait
//! (`chat.rs`), why an answer ended ([`FinishReason`], `finish_reason.rs`), and the backends that implement it: [`OpenAiCompatible`] (`openai.rs`, with
//! its wire format in `openai_wire.rs` and the SSE parser in `sse.rs`).

mod chat;
mod finish_reason;
#[doc(hidden)]
pub mod fuzzing;
mod openai;
mod openai_wire;
mod sse;

pub use chat::{
    ChatMessage, ChatRequest, ChatResponse, ImagePart, Provider, ProviderFuture, Role, StreamEvent,
    ToolCall, ToolDefinition, Usage,
};
pub use finish_reason::FinishReason;
pub use openai::{DEFAULT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, OpenAiCompatible, OpenAiConfig};

/// Why a model request failed. Messages name the provider and endpoint, never a key.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The endpoint could not be reached (connection refused, DNS, TLS).
    #[error("{provider}: cannot reach {endpoint}: {message}")]
    Connect {
        /// The provider name.
        provider: String,
        /// The endpoint URL (without credentials).
        endpoint: String,
        /// What failed.
        message: String,
    },
    /// The endpoint answered with an HTTP error.
    #[error("{provider}: {endpoint} answered HTTP {status}: {message}")]
    Http {
        /// The provider name.
        provider: String,
        /// The endpoint URL.
        endpoint: String,
        /// The status code.
        status: u16,
        /// The error message from the body, bounded.
        message: String,
    },
    /// The answer did not follow the protocol (bad JSON, bad SSE, missing fields).
    #[error("{provider}: malformed answer from {endpoint}: {message}")]
    Protocol {
        /// The provider name.
        provider: String,
        /// The endpoint URL.
        endpoint: String,
        /// What was wrong.
        message: String,
    },
    /// No data arrived within the budget.
    #[error("{provider}: no answer from {endpoint} within {seconds} s")]
    Timeout {
        /// The provider name.
        provider: String,
        /// The endpoint URL.
        endpoint: String,
        /// The budget.
        seconds: u64,
    },
    /// The provider configuration is unusable (bad endpoint URL, plain http to a remote host,
    /// a key that cannot be sent).
    #[error("{provider}: {message}")]
    Config {
        /// The provider name.
        provider: String,
        /// What is wrong (never the key or the URL's user information).
        message: String,
    },
    /// The request was cancelled (user abort).
    #[error("the model request was cancelled")]
    Cancelled,
}
