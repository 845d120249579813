//! What an MCP server offers besides tools: prompts (slash commands), resources and resource
//! templates (attachments), and what reading or expanding them gives (`docs/mcp.md`, "Prompts"
//! and "Resources"). Plain descriptors; `rho-mcp` fills them in, sessions and front-ends use
//! them.

use serde::{Deserialize, Serialize};

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The name (the key in `prompts/get`).
    pub name: String,
    /// A display title, when the server gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt cannot be expanded without it.
    pub required: bool,
}

/// One prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerPrompt {
    /// The server's own name for it.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in the server's order.
    pub arguments: Vec<PromptArgument>,
}

/// Who a message of an expanded prompt is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant (labelled as prior context when it joins a turn).
    Assistant,
}

/// One message of an expanded prompt (`prompts/get`), its content rendered as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptMessage {
    /// Who it is from.
    pub role: PromptRole,
    /// The rendered content.
    pub text: String,
}

/// One resource or resource template a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerResource {
    /// The URI (an RFC 6570 template for templates).
    pub uri: String,
    /// The server's name for it.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A template: there is nothing to read until its placeholders are filled in.
    pub template: bool,
}

/// What reading a resource gives a message: text, and at most one image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceAttachment {
    /// The URI read.
    pub uri: String,
    /// The text the message carries (bodies, or `[resource <mime>, <size>]` descriptors),
    /// capped by the server's `max_output_bytes`.
    pub text: String,
    /// A single `image/*` blob, passed on exactly as the server encoded it.
    pub image: Option<crate::ToolImage>,
    /// Whether the text was cut at the cap.
    pub truncated: bool,
}
