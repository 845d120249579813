//! [`Output`]: what a successful tool call returns (text, images, structured JSON).

use serde_json::Value;

/// One piece of an [`Output`], in the order the model reads it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Text the model reads.
    Text(String),
    /// An image: the model gets a descriptor, a client may show it.
    Image {
        /// Its MIME type (`image/png`, ...).
        mime_type: String,
        /// The encoded bytes.
        data: Vec<u8>,
    },
}

/// A successful result: content blocks and, optionally, structured JSON.
///
/// Build it with [`Output::text`], [`Output::json`] or [`Output::new`] and the `with_*`
/// methods:
///
/// ```
/// use rho_plugin_sdk::Output;
/// use serde_json::json;
///
/// let out = Output::text("3 matches")
///     .with_text("src/a.rs:10")
///     .with_structured(json!({"matches": 3}));
/// assert_eq!(out.text_content(), "3 matches\nsrc/a.rs:10");
/// ```
///
/// If a result has structured content and no content block at all, the SDK adds the JSON
/// text as one text block, so the model always has something to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    content: Vec<Content>,
    structured: Option<Value>,
}

impl Output {
    /// An empty result (add blocks with the `with_*` methods).
    pub fn new() -> Self {
        Self::default()
    }

    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().with_text(text)
    }

    /// A structured result: `value` as structured content, and its pretty-printed JSON as the
    /// text block the model reads. Declare the shape with
    /// [`Tool::output_schema`](crate::Tool::output_schema).
    pub fn json(value: Value) -> Self {
        let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
        Self::text(text).with_structured(value)
    }

    /// Adds a text block.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(Content::Text(text.into()));
        self
    }

    /// Adds an image block (`mime_type` such as `image/png`, `data` the encoded bytes).
    #[must_use]
    pub fn with_image(mut self, mime_type: impl Into<String>, data: Vec<u8>) -> Self {
        self.content.push(Content::Image {
            mime_type: mime_type.into(),
            data,
        });
        self
    }

    /// Sets the structured content (replacing any earlier value).
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// The content blocks, in order.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// The structured content, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// Every text block joined with newlines (handy in tests).
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                Content::Text(text) => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect();
        texts.join("\n")
    }

    /// Splits the output into its content blocks and structured content.
    pub fn into_parts(self) -> (Vec<Content>, Option<Value>) {
        (self.content, self.structured)
    }
}

impl From<String> for Output {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Output {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
