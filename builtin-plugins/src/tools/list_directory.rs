//! `list_directory`: the entries of one directory, sorted, directories marked with `/`.

use std::fmt::Write as _;
use std::fs;

use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::blocking::{OnCancel, Stop, cancelled, run_blocking};
use super::paths::Sandbox;

const NAME: &str = "list_directory";
/// The most entries one call shows.
const MAX_ENTRIES: usize = 1000;

const DESCRIPTION: &str = "List the entries of a directory in the workspace (not recursive), \
sorted by name, one per line; directories end with `/`. Hidden entries are included and ignore \
files are not applied. At most 1000 entries are shown. Defaults to the workspace root. Use glob \
to find files recursively.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The directory to list, relative to the workspace root or absolute inside it (default: the workspace root).
    path: Option<String>,
}

/// Lists one directory.
#[derive(Debug, Clone, Copy)]
pub struct ListDirectory;

impl BuiltinTool for ListDirectory {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "List directory";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Read;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        run_blocking(NAME, context, OnCancel::Abandon, move |sandbox, stop| {
            list(sandbox, stop, args.path.as_deref().unwrap_or("."))
        })
        .await
    }
}

fn list(sandbox: &Sandbox, stop: &Stop, raw: &str) -> ToolOutput {
    let (path, shown) = match sandbox.resolve_path(raw) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    let reader = match fs::read_dir(&path) {
        Ok(reader) => reader,
        Err(_) if path.is_file() => {
            return ToolOutput::error(format!(
                "`{shown}` is a file, not a directory; use read_file to read it"
            ));
        }
        Err(e) => return ToolOutput::error(format!("cannot list `{shown}`: {e}")),
    };
    let mut entries = Vec::new();
    for (i, entry) in reader.enumerate() {
        if i.is_multiple_of(1024) && stop.requested() {
            return cancelled(NAME);
        }
        let Ok(entry) = entry else { continue };
        let mut name = entry.file_name().to_string_lossy().into_owned();
        // A link to a directory is listed as one: that is how it behaves when used.
        let is_dir = entry.file_type().is_ok_and(|t| {
            t.is_dir() || (t.is_symlink() && fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()))
        });
        if is_dir {
            name.push('/');
        }
        entries.push(name);
    }
    if entries.is_empty() {
        return ToolOutput::text(format!("`{shown}` is empty"));
    }
    entries.sort_unstable();
    let total = entries.len();
    let mut text = String::new();
    for name in entries.iter().take(MAX_ENTRIES) {
        text.push_str(name);
        text.push('\n');
    }
    let mut output = ToolOutput::text(text);
    if total > MAX_ENTRIES {
        let _ = write!(
            output.text,
            "[showing the first {MAX_ENTRIES} of {total} entries; use glob with a pattern to narrow the listing]"
        );
        output.truncated = true;
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::{assert_error, ok_text, put, run, workspace};
    use serde_json::json;

    #[tokio::test]
    async fn lists_sorted_entries_with_directories_marked() {
        let dir = workspace();
        put(dir.path(), "b.txt", "");
        put(dir.path(), "a/inner.txt", "");
        put(dir.path(), ".hidden", "");
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("c-link")).unwrap();
        let output = run(ListDirectory, dir.path(), json!({})).await;
        assert_eq!(ok_text(&output), ".hidden\na/\nb.txt\nc-link/\n");
        let output = run(ListDirectory, dir.path(), json!({"path": "a"})).await;
        assert_eq!(ok_text(&output), "inner.txt\n");
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        let output = run(ListDirectory, dir.path(), json!({"path": "empty"})).await;
        assert_eq!(ok_text(&output), "`empty` is empty");
    }

    #[tokio::test]
    async fn caps_long_listings() {
        let dir = workspace();
        for i in 0..1005 {
            put(dir.path(), &format!("f{i:04}"), "");
        }
        let output = run(ListDirectory, dir.path(), json!({"path": "."})).await;
        assert!(output.truncated);
        let text = ok_text(&output);
        assert_eq!(text.lines().count(), MAX_ENTRIES + 1);
        assert!(text.contains("first 1000 of 1005 entries"));
        assert!(text.contains("f0999\n"));
        assert!(!text.contains("f1000"));
    }

    #[tokio::test]
    async fn refuses_files_missing_paths_and_escapes() {
        let dir = workspace();
        put(dir.path(), "f.txt", "");
        let outside = workspace();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let output = run(ListDirectory, dir.path(), json!({"path": "f.txt"})).await;
        assert_error(&output, "is a file, not a directory");
        let output = run(ListDirectory, dir.path(), json!({"path": "nope"})).await;
        assert_error(&output, "cannot list `nope`");
        let output = run(ListDirectory, dir.path(), json!({"path": ".."})).await;
        assert_error(&output, "outside the workspace");
        let output = run(ListDirectory, dir.path(), json!({"path": "out"})).await;
        assert_error(&output, "outside the workspace");
        let output = run(ListDirectory, dir.path(), json!({"path": true})).await;
        assert_error(&output, "field `path`");
    }
}
