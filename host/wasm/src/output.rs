//! A guest's `tool-result` or `tool-error` turned into what the model reads: text blocks joined
//! by blank lines, images as a descriptor (the first one within a 4 MiB budget kept for the
//! client), the whole capped at the component's `max_output_bytes`. Structured content rides
//! along for clients (and its JSON text is what the model reads only when the tool gave no
//! text block); the registry checks it against the tool's output schema and caps it
//! (`rho_core`'s `output_contract.rs`).

use base64::Engine as _;
use rho_component::{ToolImage, ToolOutput};
use serde_json::Value;

use crate::bindings::rho::tool::types::{ContentBlock, ToolError, ToolResult};

/// Encoded bytes of the image kept for the client, per result.
pub const IMAGE_BUDGET_BYTES: usize = 4 * 1024 * 1024;

/// Largest structured content parsed, in bytes of JSON text.
const MAX_STRUCTURED_BYTES: usize = 8 * 1024 * 1024;

/// Longest MIME type shown.
const MAX_MIME_BYTES: usize = 128;

/// Renders a successful result for the model.
pub(crate) fn render(result: ToolResult, max_output_bytes: u64) -> ToolOutput {
    let structured = match result.structured_content {
        None => None,
        Some(text) if text.len() > MAX_STRUCTURED_BYTES => {
            return ToolOutput::error(format!(
                "the tool returned {} bytes of structured content; at most {MAX_STRUCTURED_BYTES} are accepted",
                text.len()
            ));
        }
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(value) => Some(value),
            Err(e) => {
                return ToolOutput::error(format!(
                    "the tool returned structured content that is not valid JSON: {e}"
                ));
            }
        },
    };
    let mut text = CappedText::new(max_output_bytes);
    // The tool's own text is what the model reads: a WASM tool writes it for the model (the SDK
    // adds the JSON as text itself when a tool gives structured content alone). Only a result
    // without any text block shows its structured content as JSON.
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(_)));
    if let (false, Some(value)) = (has_text, &structured) {
        text.push(&serde_json::to_string_pretty(value).unwrap_or_default());
    }
    let mut image = None;
    for block in result.content {
        match block {
            ContentBlock::Text(t) => text.push(&t),
            ContentBlock::Image(img) => {
                let mime = shown_mime(&img.mime_type);
                text.push(&format!("[image: {mime}, {} bytes]", img.data.len()));
                let encoded_len = img.data.len().div_ceil(3).saturating_mul(4);
                if image.is_none() && encoded_len <= IMAGE_BUDGET_BYTES {
                    image = Some(ToolImage {
                        mime_type: mime,
                        data: base64::engine::general_purpose::STANDARD.encode(&img.data),
                    });
                }
            }
        }
    }
    let (text, truncated) = text.finish();
    ToolOutput {
        text,
        is_error: false,
        structured,
        image,
        truncated,
    }
}

/// Renders a `tool-error` for the model.
pub(crate) fn render_error(tool: &str, error: ToolError, max_output_bytes: u64) -> ToolOutput {
    let message = match error {
        ToolError::InvalidArguments(m) => format!("invalid arguments for `{tool}`: {m}"),
        ToolError::UnknownTool(m) if m.is_empty() || m == tool => format!("unknown tool `{tool}`"),
        ToolError::UnknownTool(m) => format!("unknown tool `{tool}`: {m}"),
        ToolError::Failed(m) => m,
        ToolError::Cancelled => format!("`{tool}` was cancelled"),
    };
    let mut text = CappedText::new(max_output_bytes);
    text.push(&message);
    let (text, truncated) = text.finish();
    ToolOutput {
        text,
        is_error: true,
        truncated,
        ..ToolOutput::default()
    }
}

fn shown_mime(mime: &str) -> String {
    let mime = mime.trim();
    if mime.is_empty() {
        return "application/octet-stream".to_owned();
    }
    let mut end = mime.len().min(MAX_MIME_BYTES);
    while !mime.is_char_boundary(end) {
        end -= 1;
    }
    mime[..end].chars().filter(|c| !c.is_control()).collect()
}

/// Text joined by blank lines and kept up to a byte cap; only the total of the rest is
/// counted, so a huge result is never copied whole.
struct CappedText {
    text: String,
    max: usize,
    total: usize,
    parts: usize,
}

impl CappedText {
    fn new(max_output_bytes: u64) -> Self {
        Self {
            text: String::new(),
            max: usize::try_from(max_output_bytes).unwrap_or(usize::MAX),
            total: 0,
            parts: 0,
        }
    }

    fn push(&mut self, part: &str) {
        let sep = if self.parts == 0 { "" } else { "\n\n" };
        self.parts += 1;
        for piece in [sep, part] {
            self.total = self.total.saturating_add(piece.len());
            let room = self.max.saturating_sub(self.text.len());
            if room == 0 {
                continue;
            }
            let mut end = piece.len().min(room);
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&piece[..end]);
        }
    }

    fn finish(mut self) -> (String, bool) {
        if self.total <= self.max {
            return (self.text, false);
        }
        self.text.push_str(&format!(
            "\n[output truncated: {} of {} bytes shown]",
            self.text.len(),
            self.total
        ));
        (self.text, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::rho::tool::types::Image;
    use serde_json::json;

    fn result(content: Vec<ContentBlock>, structured: Option<&str>) -> ToolResult {
        ToolResult {
            content,
            structured_content: structured.map(str::to_owned),
        }
    }

    #[test]
    fn text_blocks_are_joined_and_images_described() {
        let out = render(
            result(
                vec![
                    ContentBlock::Text("one".into()),
                    ContentBlock::Image(Image {
                        mime_type: "image/png".into(),
                        data: vec![1, 2, 3, 4],
                    }),
                    ContentBlock::Text("two".into()),
                ],
                None,
            ),
            1000,
        );
        assert_eq!(out.text, "one\n\n[image: image/png, 4 bytes]\n\ntwo");
        assert!(!out.is_error && !out.truncated);
        let image = out.image.unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.data, "AQIDBA==");
    }

    #[test]
    fn the_tools_text_is_what_the_model_reads_and_structured_content_rides_along() {
        let out = render(
            result(
                vec![ContentBlock::Text("demo".into())],
                Some("{\"value\":\"demo\"}"),
            ),
            1000,
        );
        assert_eq!(out.text, "demo");
        assert_eq!(out.structured, Some(json!({"value": "demo"})));
        // Structured content alone is shown as JSON.
        let out = render(result(vec![], Some("{\"a\":1}")), 1000);
        assert_eq!(out.text, "{\n  \"a\": 1\n}");
        assert_eq!(out.structured, Some(json!({"a": 1})));
        let bad = render(result(vec![], Some("{nope")), 1000);
        assert!(bad.is_error);
        assert!(bad.text.contains("not valid JSON"), "{}", bad.text);
    }

    #[test]
    fn output_is_capped_at_a_character_boundary() {
        let out = render(result(vec![ContentBlock::Text("é".repeat(10))], None), 5);
        assert!(out.truncated);
        assert_eq!(out.text, "éé\n[output truncated: 4 of 20 bytes shown]");
        let err = render_error("t", ToolError::Failed("x".repeat(100)), 10);
        assert!(err.is_error && err.truncated);
        assert!(err.text.starts_with("xxxxxxxxxx\n[output truncated"));
    }
}
