//! Helpers the tool tests share: a temporary workspace and a one-line way to call a tool.

use std::path::Path;

use rho_component::{Tool, ToolContext, ToolOutput};

use super::{Builtin, BuiltinTool};
use serde_json::Value;

/// A fresh temporary workspace.
pub(crate) fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Writes `text` to `relative` under `root`, creating parent directories.
pub(crate) fn put(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// Calls `tool` with `arguments` in a plain context for `root`.
pub(crate) async fn call(tool: &dyn Tool, root: &Path, arguments: Value) -> ToolOutput {
    let context = ToolContext::new(root);
    tool.call(arguments, &context).await
}

/// Calls the built-in `tool` with `arguments` in a plain context for `root`.
pub(crate) async fn run<T: BuiltinTool>(tool: T, root: &Path, arguments: Value) -> ToolOutput {
    call(&Builtin::new(tool), root, arguments).await
}

/// Asserts the call failed and its message contains `needle`.
pub(crate) fn assert_error(output: &ToolOutput, needle: &str) {
    assert!(output.is_error, "expected an error, got: {}", output.text);
    assert!(
        output.text.contains(needle),
        "expected `{needle}` in: {}",
        output.text
    );
}

/// Asserts the call succeeded and returns its text.
pub(crate) fn ok_text(output: &ToolOutput) -> &str {
    assert!(!output.is_error, "unexpected error: {}", output.text);
    &output.text
}
