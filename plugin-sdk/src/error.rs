//! [`ToolError`]: how a tool call fails, as the model will read it; [`ReadError`]: why a
//! workspace file could not be read.

use std::fmt;

/// Why a tool call failed. The host turns it into the WIT `tool-error` and the model reads
/// the message, so write it for the model: say what was wrong and what would work.
///
/// `?` works on `Result<_, String>`, `Result<_, &str>` and `Result<_, ReadError>` (what
/// [`Context::read_file`](crate::Context::read_file) returns): those become
/// [`ToolError::Failed`].
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

impl From<ReadError> for ToolError {
    fn from(error: ReadError) -> Self {
        Self::Failed(error.to_string())
    }
}

/// Why [`Context::read_file`](crate::Context::read_file) or
/// [`Context::read_to_string`](crate::Context::read_to_string) gave no content.
/// [`path`](Self::path) is the file asked for; `?` in a tool's `call` makes it a
/// [`ToolError::Failed`] whose message (the host's words, for `Unreadable`) the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// The host did not read `path`: the component has no `workspace` access, the path leads
    /// outside the workspace, or the file is missing, too large or unreadable. `message` is
    /// the host's, and says which.
    Unreadable {
        /// The path as the tool gave it.
        path: String,
        /// The host's reason.
        message: String,
    },
    /// `path` was read, but it is not UTF-8 text (`read_to_string`).
    NotText {
        /// The path as the tool gave it.
        path: String,
        /// Where its first byte that is not UTF-8 is.
        offset: usize,
    },
}

impl ReadError {
    /// The path the read was asked for.
    pub fn path(&self) -> &str {
        match self {
            Self::Unreadable { path, .. } | Self::NotText { path, .. } => path,
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable { message, .. } => f.write_str(message),
            Self::NotText { path, offset } => {
                write!(
                    f,
                    "{path} is not UTF-8 text (invalid byte at offset {offset})"
                )
            }
        }
    }
}

impl std::error::Error for ReadError {}
