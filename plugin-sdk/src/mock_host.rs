//! [`MockHost`]: a stand-in for rho in a guest crate's native unit tests.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use crate::{Context, Host, Level, Output, ReadError, Tool, ToolError};

/// A [`Host`] for tests: serves files from memory, records logs and progress, and can
/// pretend the user cancelled.
///
/// Tool code cannot call rho's imports in a native test (there is no component), so test
/// the tools through this:
///
/// ```
/// use rho_plugin_sdk::{Context, MockHost, Output, Tool, ToolError};
/// use serde::Deserialize;
/// use serde_json::{Value, json};
///
/// struct LineCount;
/// #[derive(Deserialize)]
/// struct Args { path: String }
///
/// impl Tool for LineCount {
///     const NAME: &'static str = "line_count";
///     const DESCRIPTION: &'static str = "Counts the lines of a workspace file.";
///     type Args = Args;
///     fn input_schema() -> Value {
///         json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
///     }
///     fn call(args: Args, cx: &Context) -> Result<Output, ToolError> {
///         let text = cx.read_to_string(&args.path)?;
///         Ok(Output::text(text.lines().count().to_string()))
///     }
/// }
///
/// let host = MockHost::new().with_file("a.txt", "one\ntwo\n");
/// assert_eq!(host.call::<LineCount>(r#"{"path": "a.txt"}"#).unwrap().text_content(), "2");
/// assert!(host.call::<LineCount>(r#"{"path": "missing.txt"}"#).is_err());
/// ```
#[derive(Debug, Default)]
pub struct MockHost {
    files: BTreeMap<String, Vec<u8>>,
    cancelled: Cell<bool>,
    logs: RefCell<Vec<(Level, String)>>,
    progress: RefCell<Vec<Progress>>,
}

/// One progress report recorded by [`MockHost`].
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Units done.
    pub done: f64,
    /// Units in all, when known.
    pub total: Option<f64>,
    /// The message, if any.
    pub message: Option<String>,
}

impl MockHost {
    /// A host with no files that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a workspace file at `path` (relative, `/`-separated, as a tool would ask for it).
    #[must_use]
    pub fn with_file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path.into(), contents.into());
        self
    }

    /// From now on [`Host::is_cancelled`] answers `true`.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }

    /// The messages logged so far.
    pub fn logs(&self) -> Vec<(Level, String)> {
        self.logs.borrow().clone()
    }

    /// The progress reported so far.
    pub fn progress(&self) -> Vec<Progress> {
        self.progress.borrow().clone()
    }

    /// Calls tool `T` with `arguments` (JSON text) as rho would: decodes the arguments,
    /// then runs [`Tool::call`] with a [`Context`] on this host.
    pub fn call<T: Tool>(&self, arguments: &str) -> Result<Output, ToolError> {
        let cx = Context::new(self, T::NAME);
        crate::invoke::<T>(arguments, &cx)
    }
}

impl Host for MockHost {
    fn log(&self, level: Level, message: &str) {
        self.logs.borrow_mut().push((level, message.to_owned()));
    }

    fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress.borrow_mut().push(Progress {
            done: progress,
            total,
            message: message.map(str::to_owned),
        });
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }

    /// Like rho: a path relative to the workspace, or under `/workspace/` (where the
    /// workspace appears inside the component); `..` and other absolute paths are refused.
    fn read_file(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        let refused = |message: String| ReadError::Unreadable {
            path: path.to_owned(),
            message,
        };
        let relative = path.strip_prefix("/workspace/").unwrap_or(path);
        if relative.starts_with('/') || relative.split(['/', '\\']).any(|part| part == "..") {
            return Err(refused(format!("`{path}` is outside the workspace")));
        }
        let key = relative.strip_prefix("./").unwrap_or(relative);
        self.files.get(key).cloned().ok_or_else(|| {
            refused(format!(
                "cannot read `{path}`: no such file in the workspace"
            ))
        })
    }
}
