//! Turning a `tools/call` result into what the model reads (`docs/mcp.md`, "Calls and
//! results"): each content block rendered for what it is, binary never as base64, the first image that fits a
//! 4 MiB encoded budget kept as an asset for the tool card, `structuredContent` preferred over
//! its mirrored text, and the whole capped at `max_output_bytes`.

use serde_json::Value;

/// Encoded bytes of images kept as card assets per result.
pub const IMAGE_ASSET_BUDGET: usize = 4 * 1024 * 1024;

/// An image kept for the tool card (never shown to the model as bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageAsset {
    /// The MIME type the server gave.
    pub mime_type: String,
    /// The base64 data as the server encoded it.
    pub data: String,
}

/// A result as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedResult {
    /// The text the model reads.
    pub text: String,
    /// The server marked the result as an error: the call is a tool failure.
    pub is_error: bool,
    /// The first image within the budget.
    pub image: Option<ImageAsset>,
    /// The text was cut at `max_output_bytes`.
    pub truncated: bool,
    /// The structured content, when the server sent one.
    pub structured: Option<Value>,
}

/// Human-readable size of `bytes`.
pub fn human_size(bytes: usize) -> String {
    #[allow(clippy::cast_precision_loss)] // display only
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    }
}

/// Decoded size of base64 text (without decoding it).
pub(crate) fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Renders one content block.
fn render_block(block: &Value, image: &mut Option<ImageAsset>, image_budget: &mut usize) -> String {
    let kind = str_field(block, "type").unwrap_or("");
    match kind {
        "text" => str_field(block, "text").unwrap_or_default().to_owned(),
        "image" | "audio" => {
            let mime = str_field(block, "mimeType").unwrap_or("application/octet-stream");
            let data = str_field(block, "data").unwrap_or_default();
            if kind == "image" && image.is_none() && data.len() <= *image_budget {
                *image_budget -= data.len();
                *image = Some(ImageAsset {
                    mime_type: mime.to_owned(),
                    data: data.to_owned(),
                });
            }
            format!("[{kind} {mime}, {}]", human_size(decoded_len(data)))
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri").unwrap_or("?");
            if let Some(text) = str_field(resource, "text") {
                format!("[resource {uri}]\n{text}")
            } else {
                let mime = str_field(resource, "mimeType").unwrap_or("application/octet-stream");
                let size = decoded_len(str_field(resource, "blob").unwrap_or_default());
                format!("[resource {uri}] [resource {mime}, {}]", human_size(size))
            }
        }
        "resource_link" => {
            let uri = str_field(block, "uri").unwrap_or("?");
            let mut line = format!("[resource link {uri}]");
            if let Some(name) = str_field(block, "name") {
                line.push_str(&format!(" {name}"));
            }
            if let Some(description) = str_field(block, "description") {
                line.push_str(&format!(": {description}"));
            }
            line
        }
        other => format!("[unsupported content type {other:?}]"),
    }
}

/// One content block as text, by the same rules as a tool result, keeping no image (prompt
/// messages and other places that carry text only).
pub(crate) fn block_text(block: &Value) -> String {
    let mut budget = 0;
    render_block(block, &mut Some(ImageAsset::none()), &mut budget)
}

impl ImageAsset {
    /// A placeholder that makes [`render_block`] keep no image.
    fn none() -> Self {
        Self {
            mime_type: String::new(),
            data: String::new(),
        }
    }
}

/// The `content` of a prompt or sampling message (one block or an array of them) as text,
/// each block rendered by `render` on a line of its own.
pub(crate) fn message_text(message: &Value, render: fn(&Value) -> String) -> String {
    let blocks: Vec<&Value> = match message.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        Some(block) => vec![block],
        None => Vec::new(),
    };
    blocks
        .into_iter()
        .map(render)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cuts `text` to at most `max` bytes at a character boundary, with a marker.
pub(crate) fn cap(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = text[..end].to_owned();
    cut.push_str(&format!(
        "\n[output truncated: {} of {} bytes shown]",
        end,
        text.len()
    ));
    (cut, true)
}

/// Renders a `CallToolResult` (as JSON) for the model.
pub fn render_result(result: &Value, max_output_bytes: u64) -> RenderedResult {
    let max = usize::try_from(max_output_bytes).unwrap_or(usize::MAX);
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let structured = result
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .cloned();
    let mut image = None;
    let mut budget = IMAGE_ASSET_BUDGET;
    let blocks: Vec<&Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let text = match &structured {
        // The structured content is what the model reads; text blocks mirroring it are dropped,
        // other blocks (images, resources) still count.
        Some(value) => {
            let mut parts = vec![serde_json::to_string_pretty(value).unwrap_or_default()];
            for block in blocks
                .iter()
                .filter(|b| str_field(b, "type") != Some("text"))
            {
                parts.push(render_block(block, &mut image, &mut budget));
            }
            parts.join("\n")
        }
        None => blocks
            .iter()
            .map(|b| render_block(b, &mut image, &mut budget))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let (text, truncated) = cap(text, max);
    RenderedResult {
        text,
        is_error,
        image,
        truncated,
        structured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_render_as_the_table_says() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "A".repeat(56_256)},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "the c file"},
            {"type": "hologram"}
        ]});
        let r = render_result(&result, 1 << 20);
        assert_eq!(
            r.text,
            "hello\n[image image/png, 41.2 KB]\n[audio audio/wav, 3 B]\n[resource file:///a.txt]\nbody\n\
             [resource file:///b.bin] [resource application/zip, 3 B]\n[resource link file:///c] c: the c file\n\
             [unsupported content type \"hologram\"]"
        );
        assert_eq!(r.image.unwrap().mime_type, "image/png");
        assert!(!r.text.contains("AAAA"), "no base64 reaches the model");
    }

    #[test]
    fn structured_content_replaces_mirrored_text_and_errors_are_flagged() {
        let r = render_result(
            &json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}, "isError": true}),
            1000,
        );
        assert_eq!(r.text, "{\n  \"a\": 1\n}");
        assert!(r.is_error);
    }

    #[test]
    fn only_the_first_image_within_budget_is_kept_and_output_is_capped() {
        let big = "A".repeat(IMAGE_ASSET_BUDGET + 4);
        let r = render_result(
            &json!({"content": [
                {"type": "image", "mimeType": "image/png", "data": big},
                {"type": "image", "mimeType": "image/jpeg", "data": "AAAA"},
                {"type": "image", "mimeType": "image/gif", "data": "AAAA"}
            ]}),
            1 << 20,
        );
        assert_eq!(r.image.unwrap().mime_type, "image/jpeg");
        let r = render_result(
            &json!({"content": [{"type": "text", "text": "é".repeat(100)}]}),
            11,
        );
        assert!(r.truncated);
        assert!(
            r.text
                .starts_with("ééééé\n[output truncated: 10 of 200 bytes shown]"),
            "{}",
            r.text
        );
    }
}
