//! [`Context`]: what a running tool may ask of the host (log, progress, cancellation,
//! workspace reads), behind the [`Host`] trait so that tests can stand in for rho.

use std::fmt;

use crate::{ReadError, ToolError};

/// Severity of a log message (the WIT `log-level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation worth noting.
    Info,
    /// Something looks wrong but the call goes on.
    Warn,
    /// Something failed.
    Error,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Trace => "trace",
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        })
    }
}

/// The host functions a tool can call: the WIT `host` interface.
///
/// Inside rho the SDK uses the component's imports. Tests use
/// [`MockHost`](crate::MockHost), or their own implementation, so tool code runs natively
/// (calling a real import outside a component would abort the test process).
pub trait Host {
    /// Writes `message` to rho's log (target `rho::wasm::guest`).
    fn log(&self, level: Level, message: &str);
    /// Reports progress of the running call.
    fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>);
    /// Whether the user aborted the running call.
    fn is_cancelled(&self) -> bool;
    /// Reads a workspace file by a path relative to the workspace, as far as the component's
    /// `workspace` capability allows; a failure is [`ReadError::Unreadable`] with the reason.
    fn read_file(&self, path: &str) -> Result<Vec<u8>, ReadError>;
}

/// What a tool receives besides its arguments: logging, progress, cancellation and
/// workspace reads.
///
/// ```
/// use rho_plugin_sdk::{Context, Level, MockHost};
///
/// let host = MockHost::new().with_file("notes.txt", "hello");
/// let cx = Context::new(&host, "demo");
/// cx.log(Level::Info, "starting");
/// assert_eq!(cx.read_to_string("notes.txt").unwrap(), "hello");
/// assert_eq!(host.logs(), [(Level::Info, "starting".to_owned())]);
/// ```
#[derive(Clone, Copy)]
pub struct Context<'a> {
    host: &'a dyn Host,
    tool: &'a str,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl<'a> Context<'a> {
    /// A context for a call of `tool` served by `host`. The SDK makes these; tests can too.
    pub fn new(host: &'a dyn Host, tool: &'a str) -> Self {
        Self { host, tool }
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        self.tool
    }

    /// Writes `message` to rho's log at `level`. The user sees it with `RHO_LOG`; the model
    /// does not.
    pub fn log(&self, level: Level, message: impl AsRef<str>) {
        self.host.log(level, message.as_ref());
    }

    /// [`log`](Self::log) at [`Level::Debug`].
    pub fn debug(&self, message: impl AsRef<str>) {
        self.log(Level::Debug, message);
    }

    /// [`log`](Self::log) at [`Level::Info`].
    pub fn info(&self, message: impl AsRef<str>) {
        self.log(Level::Info, message);
    }

    /// [`log`](Self::log) at [`Level::Warn`].
    pub fn warn(&self, message: impl AsRef<str>) {
        self.log(Level::Warn, message);
    }

    /// Reports progress: `done` units of `total` (when known), with an optional message.
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        self.host.report_progress(done, total, message);
    }

    /// Whether the user aborted the call. Long loops should check it now and then.
    pub fn is_cancelled(&self) -> bool {
        self.host.is_cancelled()
    }

    /// `Err(ToolError::Cancelled)` once the user aborted the call, for `?` in loops:
    ///
    /// ```
    /// # use rho_plugin_sdk::{Context, ToolError};
    /// fn work(cx: &Context, items: &[u32]) -> Result<u64, ToolError> {
    ///     let mut sum = 0;
    ///     for (i, item) in items.iter().enumerate() {
    ///         if i % 1024 == 0 {
    ///             cx.check_cancelled()?;
    ///         }
    ///         sum += u64::from(*item);
    ///     }
    ///     Ok(sum)
    /// }
    /// ```
    pub fn check_cancelled(&self) -> Result<(), ToolError> {
        if self.is_cancelled() {
            Err(ToolError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Reads a workspace file (`path` relative to the workspace). It fails when the plugin's
    /// manifest grants no `workspace` access to this component, when the path leads outside
    /// the workspace, or when the file cannot be read; the message says which.
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        self.host.read_file(path)
    }

    /// [`read_file`](Self::read_file), as UTF-8 text ([`ReadError::NotText`] when it is not).
    pub fn read_to_string(&self, path: &str) -> Result<String, ReadError> {
        let bytes = self.read_file(path)?;
        String::from_utf8(bytes).map_err(|e| ReadError::NotText {
            path: path.to_owned(),
            offset: e.utf8_error().valid_up_to(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::MockHost;

    #[test]
    fn a_read_failure_names_its_file_and_becomes_a_failed_call() {
        let host = MockHost::new().with_file("latin1.txt", b"caf\xe9".to_vec());
        let cx = Context::new(&host, "demo");
        let not_text = cx.read_to_string("latin1.txt").unwrap_err();
        assert_eq!(
            not_text,
            ReadError::NotText {
                path: "latin1.txt".into(),
                offset: 3
            }
        );
        assert_eq!(
            ToolError::from(not_text),
            ToolError::Failed("latin1.txt is not UTF-8 text (invalid byte at offset 3)".into())
        );
        let outside = cx.read_file("../secret").unwrap_err();
        assert_eq!(outside.path(), "../secret");
        assert_eq!(outside.to_string(), "`../secret` is outside the workspace");
        let missing = cx.read_to_string("nope.txt").unwrap_err();
        assert!(
            matches!(missing, ReadError::Unreadable { .. }),
            "{missing:?}"
        );
        assert!(missing.to_string().contains("no such file"), "{missing}");
    }
}
