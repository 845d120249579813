//! Reading a server's resource (`resources/read`) into what a message carries: text bodies, a
//! single `image/*` blob passed on exactly as the server encoded it, descriptors for other
//! blobs, all text capped at `max_output_bytes` (`docs/mcp.md`, "Resources").

use rho_component::{ResourceAttachment, ResourceBody, ResourceContent, ToolImage};
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
        let value = self.read_result(uri).await?;
        let max = usize::try_from(self.spec.max_output_bytes).unwrap_or(usize::MAX);
        attachment(uri, &value, max).map_err(|message| self.resource_error(uri, message))
    }

    /// Reads `uri` as [`Connection::read_resource`] does, and returns its bodies as the server
    /// sent them (for `rho mcp serve` to pass on), all of them together at most
    /// 16 MiB on the wire.
    pub async fn read_resource_bodies(&self, uri: &str) -> Result<Vec<ResourceBody>, McpError> {
        let value = self.read_result(uri).await?;
        bodies(uri, &value, MAX_PASSED_RESOURCE_BYTES)
            .map_err(|message| self.resource_error(uri, message))
    }

    /// Asks the server for `notifications/resources/updated` about `uri`
    /// (`resources/subscribe`, within the call budget); they arrive on
    /// [`Connection::resource_updates`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), McpError> {
        self.subscription(uri, true).await
    }

    /// Withdraws [`Connection::subscribe_resource`] (`resources/unsubscribe`).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), McpError> {
        self.subscription(uri, false).await
    }

    /// The URIs the server says were updated, from now on, for as long as this connection
    /// lives.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.client.resource_updates.subscribe()
    }

    // rmcp deprecates resources/subscribe (2026-07-28 has none); 2025-11-25 servers take it.
    #[allow(deprecated)]
    async fn subscription(&self, uri: &str, on: bool) -> Result<(), McpError> {
        if !self.summary.resource_subscriptions {
            return Err(self.resource_error(
                uri,
                "the server does not offer resource subscriptions".into(),
            ));
        }
        let peer = self.service.peer();
        let sent = async {
            if on {
                peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri.to_owned()))
                    .await
            } else {
                peer.unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri.to_owned()))
                    .await
            }
        };
        match tokio::time::timeout(self.spec.call_timeout, sent).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.resource_error(uri, e.to_string())),
            Err(_) => Err(self.resource_error(
                uri,
                format!(
                    "no answer within {} s",
                    self.spec.call_timeout.as_secs_f64()
                ),
            )),
        }
    }

    fn resource_error(&self, uri: &str, message: String) -> McpError {
        McpError::Resource {
            server: self.spec.id.clone(),
            uri: uri.to_owned(),
            message,
        }
    }

    /// `resources/read` of `uri` within the call budget, its result as JSON.
    async fn read_result(&self, uri: &str) -> Result<Value, McpError> {
        let fail = |message: String| self.resource_error(uri, message);
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
        serde_json::to_value(&result).map_err(|e| fail(e.to_string()))
    }
}

/// The most a resource passed on by `rho mcp serve` may hold, its bodies together (text bytes
/// and base64 characters).
const MAX_PASSED_RESOURCE_BYTES: usize = 16 << 20;

/// The bodies of a `ReadResourceResult` (as JSON), at most `max` on the wire together.
fn bodies(uri: &str, result: &Value, max: usize) -> Result<Vec<ResourceBody>, String> {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .ok_or("the server returned no contents")?;
    let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut total = 0usize;
    let mut out = Vec::with_capacity(contents.len());
    for body in contents {
        let content = match (str_of(body, "text"), str_of(body, "blob")) {
            (Some(text), _) => ResourceContent::Text(text),
            (None, Some(blob)) => ResourceContent::Blob(blob),
            (None, None) => return Err("the contents hold neither text nor a blob".into()),
        };
        total = total.saturating_add(content.wire_len());
        if total > max {
            return Err(format!(
                "the resource is larger than {} (rho passes on at most that)",
                human_size(max)
            ));
        }
        out.push(ResourceBody {
            uri: str_of(body, "uri").unwrap_or_else(|| uri.to_owned()),
            mime_type: str_of(body, "mimeType"),
            content,
        });
    }
    Ok(out)
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
    fn bodies_pass_as_sent_within_the_cap() {
        let result = json!({"contents": [
            {"uri": "x://a", "mimeType": "text/plain", "text": "hello"},
            {"uri": "x://b", "mimeType": "image/png", "blob": "iVBORw0K"},
        ]});
        let passed = bodies("x://a", &result, 100).unwrap();
        assert_eq!(passed[0].content, ResourceContent::Text("hello".into()));
        assert_eq!(passed[1].uri, "x://b");
        assert_eq!(passed[1].mime_type.as_deref(), Some("image/png"));
        assert_eq!(passed[1].content, ResourceContent::Blob("iVBORw0K".into()));
        assert!(
            bodies("x://a", &result, 10)
                .unwrap_err()
                .contains("larger than")
        );
        assert!(bodies("x://a", &json!({"contents": []}), 10).is_err());
        assert!(bodies("x://a", &json!({"contents": [{"uri": "x://a"}]}), 10).is_err());
    }

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
