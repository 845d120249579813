//! [`ToolError`]: how a tool call fails, as the model will read it.

use std::fmt;

/// Why a tool call failed. The host turns it into the WIT `tool-error` and the model reads
/// the message, so write it for the model: say what was wrong and what would work.
///
/// `?` works on `Result<_, String>` and `Result<_, &str>` (for example
/// [`Context::read_file`](crate::Context::read_file)): those become [`ToolError::Failed`].
///
/// ```
/// use rho_plugin_sdk::ToolError;
///
/// fn parse_limit(limit: u32) -> Result<u32, ToolError> {
///     if limit == 0 {
///         return Err(ToolError::invalid_arguments("`limit` must be at least 1"));
///     }
///     Ok(limit)
/// }
/// assert!(parse_limit(0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema or its rules (`tool-error::invalid-arguments`).
    /// The SDK returns it for arguments that do not deserialize into [`Tool::Args`](crate::Tool::Args),
    /// naming the field.
    InvalidArguments(String),
    /// The tool ran and failed (`tool-error::failed`).
    Failed(String),
    /// The tool noticed the host's cancellation and stopped (`tool-error::cancelled`); see
    /// [`Context::check_cancelled`](crate::Context::check_cancelled).
    Cancelled,
}

impl ToolError {
    /// An [`InvalidArguments`](ToolError::InvalidArguments) error.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::InvalidArguments(message.into())
    }

    /// A [`Failed`](ToolError::Failed) error.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArguments(message) => write!(f, "invalid arguments: {message}"),
            Self::Failed(message) => f.write_str(message),
            Self::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::Failed(message.to_owned())
    }
}
