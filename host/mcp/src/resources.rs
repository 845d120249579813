//! Reading a server's resource (`resources/read`) into what a message carries: text bodies, a
//! single `image/*` blob passed on exactly as the server encoded it, descriptors for other
//! blobs, all text capped at `max_output_bytes` (`docs/mcp.md`, "Resources").

use rho_component::{ResourceAttachment, ToolImage};
use rmcp::model::{ReadResourceRequestParams, ServerResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::McpError;
use crate::connection::Connection;
use crate::prompts::failure_text;
use crate::questions::InFlight;
use crate::render::{IMAGE_ASSET_BUDGET, cap, decoded_len, human_size};

impl Connection {
    /// Reads `uri` within the call budget. A 2026-07-28 server asking for input meanwhile is
    /// answered without the user (forms declined, sampling refused): a read is not a call
    /// anyone waits on with a question card.
    pub async fn read_resource(&self, uri: &str) -> Result<ResourceAttachment, McpError> {
        let fail = |message: String| McpError::Resource {
            server: self.spec.id.clone(),
            uri: uri.to_owned(),
            message,
        };
        if !self.summary.resources {
            return Err(fail("the server offers no resources".into()));
        }
        let flight = InFlight::new(None, self.spec.call_timeout, CancellationToken::new());
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let result = self
            .drive(params, &flight, None)
            .await
            .map_err(|failure| fail(failure_text(failure)))?;
        let ServerResult::ReadResourceResult(result) = result else {
            return Err(fail(
                "the server answered with something other than a resource".into(),
            ));
        };
        let value = serde_json::to_value(&result).map_err(|e| fail(e.to_string()))?;
        let max = usize::try_from(self.spec.max_output_bytes).unwrap_or(usize::MAX);
        attachment(uri, &value, max).map_err(fail)
    }
}

/// What a `ReadResourceResult` (as JSON) gives a message.
fn attachment(uri: &str, result: &Value, max: usize) -> Result<ResourceAttachment, String> {
    let contents: Vec<&Value> = result
        .get("contents")
        .and_then(Value::as_array)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut image = None;
    let text = match contents.as_slice() {
        [] => return Err("the server returned no contents".into()),
        [only] => {
            let mime = str_of(only, "mimeType");
            match (str_of(only, "text"), str_of(only, "blob")) {
                (Some(text), _) => text,
                (None, Some(blob)) => {
                    let mime = mime.unwrap_or_else(|| "application/octet-stream".into());
                    let descriptor =
                        format!("[resource {mime}, {}]", human_size(decoded_len(&blob)));
                    if mime.starts_with("image/") && blob.len() <= IMAGE_ASSET_BUDGET {
                        image = Some(ToolImage {
                            mime_type: mime,
                            data: blob,
                        });
                    }
                    descriptor
                }
                (None, None) => return Err("the contents hold neither text nor a blob".into()),
            }
        }
        several => several
            .iter()
            .map(|body| {
                let at = str_of(body, "uri").unwrap_or_else(|| uri.to_owned());
                let inner = match (str_of(body, "text"), str_of(body, "blob")) {
                    (Some(text), _) => text,
                    (None, Some(blob)) => {
                        let mime = str_of(body, "mimeType")
                            .unwrap_or_else(|| "application/octet-stream".into());
                        format!("[resource {mime}, {}]", human_size(decoded_len(&blob)))
                    }
                    (None, None) => "[empty]".into(),
                };
                format!("[resource {at}]\n{inner}")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let (text, truncated) = cap(text, max);
    Ok(ResourceAttachment {
        uri: uri.to_owned(),
        text,
        image,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn a_text_body_is_the_text() {
        let a = attachment(
            "x://a",
            &json!({"contents": [{"uri": "x://a", "text": "hello"}]}),
            100,
        )
        .unwrap();
        assert_eq!(a.text, "hello");
        assert!(a.image.is_none());
        assert!(!a.truncated);
    }

    #[test]
    fn a_single_image_blob_is_passed_as_encoded_with_a_descriptor() {
        let a = attachment(
            "x://i",
            &json!({"contents": [{"uri": "x://i", "mimeType": "image/png", "blob": "iVBORw0K"}]}),
            100,
        )
        .unwrap();
        assert_eq!(
            a.image,
            Some(ToolImage {
                mime_type: "image/png".into(),
                data: "iVBORw0K".into()
            })
        );
        assert_eq!(a.text, "[resource image/png, 6 B]");
    }

    #[test]
    fn other_blobs_are_described_and_several_bodies_are_headed() {
        let a = attachment(
            "x://z",
            &json!({"contents": [{"uri": "x://z", "mimeType": "application/zip", "blob": "AAAA"}]}),
            100,
        )
        .unwrap();
        assert_eq!(a.text, "[resource application/zip, 3 B]");
        assert!(a.image.is_none());
        let a = attachment(
            "x://d",
            &json!({"contents": [
                {"uri": "x://d/1", "text": "one"},
                {"uri": "x://d/2", "mimeType": "image/png", "blob": "AAAA"}
            ]}),
            1000,
        )
        .unwrap();
        assert_eq!(
            a.text,
            "[resource x://d/1]\none\n[resource x://d/2]\n[resource image/png, 3 B]"
        );
        assert!(
            a.image.is_none(),
            "an image among several bodies is described, not attached"
        );
    }

    #[test]
    fn text_is_capped_and_empty_contents_fail() {
        let a = attachment(
            "x://a",
            &json!({"contents": [{"uri": "x://a", "text": "abcdefgh"}]}),
            4,
        )
        .unwrap();
        assert!(a.truncated);
        assert!(a.text.starts_with("abcd\n[output truncated"));
        assert!(attachment("x://a", &json!({"contents": []}), 4).is_err());
        assert!(attachment("x://a", &json!({}), 4).is_err());
    }
}
