//! What an MCP server offers besides tools: prompts (slash commands), resources and resource
//! templates (attachments), and what reading or expanding them gives (`docs/mcp.md`, "Prompts"
//! and "Resources"). Plain descriptors; `rho-mcp` fills them in, sessions and front-ends use
//! them. Prompts and resources serialize as the RPC mode sends them (`docs/rpc.md`), and their
//! derived schemas are the OpenRPC document's.

use serde::{Deserialize, Serialize};

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PromptArgument {
    /// Its name (the key in `key=value`).
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// One prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerPrompt {
    /// The server's name for the prompt.
    pub name: String,
    /// A display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments: one argument takes everything after the command; several take
    /// `key=value` pairs.
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

/// One resource or resource template a server offers. `mimeType` is camelCase, as on the wire;
/// `mime_type`, as tool caches written before it hold it, is read too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerResource {
    /// Its URI (an RFC 6570 template when `template`).
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
    #[serde(skip_serializing_if = "Option::is_none", alias = "mime_type")]
    pub mime_type: Option<String>,
    /// A template: fill in its placeholders before attaching it.
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

/// One body of a resource as its server sent it, for passing on to another client (`rho mcp
/// serve`) rather than to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceBody {
    /// The URI the body is of.
    pub uri: String,
    /// Its MIME type, when given.
    pub mime_type: Option<String>,
    /// Text, or a blob as base64.
    pub content: ResourceContent,
}

/// What a [`ResourceBody`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceContent {
    /// Text.
    Text(String),
    /// Bytes, base64-encoded as on the wire.
    Blob(String),
}

impl ResourceContent {
    /// Its size on the wire (the text's bytes, the blob's base64 characters).
    #[must_use]
    pub fn wire_len(&self) -> usize {
        match self {
            Self::Text(text) | Self::Blob(text) => text.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The wire's spelling is written; the spelling of tool caches written before is read.
    #[test]
    fn a_resource_writes_mime_type_camel_case_and_reads_both_spellings() {
        let resource = ServerResource {
            uri: "x://r".to_owned(),
            name: "r".to_owned(),
            title: None,
            description: None,
            mime_type: Some("text/plain".to_owned()),
            template: false,
        };
        let written = serde_json::to_string(&resource).unwrap();
        assert_eq!(
            written,
            r#"{"uri":"x://r","name":"r","mimeType":"text/plain","template":false}"#
        );
        let old = r#"{"uri":"x://r","name":"r","mime_type":"text/plain","template":false}"#;
        for text in [written.as_str(), old] {
            assert_eq!(
                serde_json::from_str::<ServerResource>(text).unwrap(),
                resource
            );
        }
    }
}
