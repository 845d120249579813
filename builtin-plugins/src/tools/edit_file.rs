//! `edit_file`: exact string replacement in a text file, refusing ambiguous or empty edits.

use std::fs;

use rho_component::{FileError, FileKind, RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::args::invalid;
use super::blocking::{OnCancel, cancelled, run_blocking};
use super::paths::{Sandbox, write_no_follow};

const NAME: &str = "edit_file";
/// The largest file edited in memory.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

const DESCRIPTION: &str = "Edit a text file in the workspace by exact string replacement: \
`old_string` is replaced with `new_string`. `old_string` must match the file exactly, including \
whitespace and indentation, and must occur exactly once unless `replace_all` is true; include \
enough surrounding lines to make it unique. Read the file first to copy the text exactly. \
Returns how many replacements were made.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file to edit, relative to the workspace root or absolute inside it.
    path: String,
    /// The exact text to replace (not empty).
    old_string: String,
    /// The text to put in its place (must differ from old_string).
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    replace_all: bool,
}

/// Replaces an exact string in a file, once or everywhere.
#[derive(Debug, Clone, Copy)]
pub struct EditFile;

impl BuiltinTool for EditFile {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Edit file";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Write;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        if args.old_string.is_empty() {
            return invalid(NAME, "old_string", "must not be empty");
        }
        if args.old_string == args.new_string {
            return invalid(
                NAME,
                "new_string",
                "is identical to old_string, so the edit would change nothing",
            );
        }
        run_blocking(NAME, context, OnCancel::Finish, move |sandbox, stop| {
            if stop.requested() {
                return cancelled(NAME);
            }
            edit(sandbox, &args)
        })
        .await
    }
}

fn edit(sandbox: &Sandbox, args: &Args) -> ToolOutput {
    let (path, shown) = match sandbox.resolve_path(&args.path) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    // One open, checked on the descriptor: a directory, a FIFO or a device (even one swapped in
    // after the path was resolved) is refused unread, and the size is capped.
    let read = rho_component::RegularFile::open(&path, MAX_FILE_BYTES)
        .and_then(rho_component::RegularFile::read_all);
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(FileError::NotRegular {
            kind: FileKind::Directory,
            ..
        }) => return ToolOutput::error(format!("`{shown}` is a directory")),
        Err(FileError::NotRegular { .. }) => {
            return ToolOutput::error(format!("`{shown}` is not a regular file"));
        }
        Err(FileError::TooLarge { .. }) => {
            let size = fs::metadata(&path).map_or(0, |meta| meta.len());
            return ToolOutput::error(format!(
                "`{shown}` is too large to edit ({size} bytes; the limit is 16 MiB)"
            ));
        }
        Err(e) => return ToolOutput::error(format!("cannot read `{shown}`: {}", e.problem())),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return ToolOutput::error(format!(
            "`{shown}` is not valid UTF-8 text, so it cannot be edited by string replacement"
        ));
    };
    let count = text.matches(args.old_string.as_str()).count();
    if count == 0 {
        return ToolOutput::error(format!(
            "`old_string` was not found in `{shown}`; read the file and copy the text exactly, including whitespace"
        ));
    }
    if count > 1 && !args.replace_all {
        return ToolOutput::error(format!(
            "`old_string` occurs {count} times in `{shown}`; include more surrounding text to make it unique, or set replace_all to true"
        ));
    }
    let edited = if args.replace_all {
        text.replace(&args.old_string, &args.new_string)
    } else {
        text.replacen(&args.old_string, &args.new_string, 1)
    };
    if let Err(e) = write_no_follow(&path, edited.as_bytes()) {
        return ToolOutput::error(format!("cannot write `{shown}`: {e}"));
    }
    let noun = if count == 1 {
        "replacement"
    } else {
        "replacements"
    };
    ToolOutput::text(format!("edited `{shown}`: {count} {noun} made"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::{assert_error, ok_text, put, run, workspace};
    use serde_json::json;

    #[tokio::test]
    async fn replaces_one_unique_occurrence() {
        let dir = workspace();
        put(dir.path(), "a.rs", "fn a() {}\nfn b() {}\n");
        let output = run(
            EditFile,
            dir.path(),
            json!({"path": "a.rs", "old_string": "fn b()", "new_string": "fn c()"}),
        )
        .await;
        assert_eq!(ok_text(&output), "edited `a.rs`: 1 replacement made");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.rs")).unwrap(),
            "fn a() {}\nfn c() {}\n"
        );
    }

    #[tokio::test]
    async fn ambiguous_edits_need_replace_all() {
        let dir = workspace();
        put(dir.path(), "a.txt", "x x x");
        let output = run(
            EditFile,
            dir.path(),
            json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
        )
        .await;
        assert_error(&output, "occurs 3 times in `a.txt`");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "x x x"
        );
        let output = run(
            EditFile,
            dir.path(),
            json!({"path": "a.txt", "old_string": "x", "new_string": "yy", "replace_all": true}),
        )
        .await;
        assert_eq!(ok_text(&output), "edited `a.txt`: 3 replacements made");
        assert_eq!(
            fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "yy yy yy"
        );
    }

    #[tokio::test]
    async fn refuses_missing_empty_and_identical_strings() {
        let dir = workspace();
        put(dir.path(), "a.txt", "hello");
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9").unwrap();
        let cases = [
            (
                json!({"path": "a.txt", "old_string": "bye", "new_string": "x"}),
                "was not found in `a.txt`",
            ),
            (
                json!({"path": "a.txt", "old_string": "", "new_string": "x"}),
                "field `old_string`: must not be empty",
            ),
            (
                json!({"path": "a.txt", "old_string": "hello", "new_string": "hello"}),
                "identical to old_string",
            ),
            (
                json!({"path": "a.txt", "old_string": "hello"}),
                "missing field `new_string`",
            ),
            (
                json!({"path": "a.txt", "old_string": "h", "new_string": "j", "replace_all": "yes"}),
                "field `replace_all`",
            ),
            (
                json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
                "cannot read `missing.txt`",
            ),
            (
                json!({"path": "latin1.txt", "old_string": "caf", "new_string": "b"}),
                "not valid UTF-8",
            ),
            (
                json!({"path": "../a.txt", "old_string": "a", "new_string": "b"}),
                "outside the workspace",
            ),
        ];
        for (arguments, needle) in cases {
            let output = run(EditFile, dir.path(), arguments).await;
            assert_error(&output, needle);
        }
        assert_eq!(
            fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "hello"
        );
    }

    #[tokio::test]
    async fn refuses_links_that_lead_outside() {
        let dir = workspace();
        let outside = workspace();
        put(outside.path(), "t.txt", "keep");
        std::os::unix::fs::symlink(outside.path().join("t.txt"), dir.path().join("l.txt")).unwrap();
        let output = run(
            EditFile,
            dir.path(),
            json!({"path": "l.txt", "old_string": "keep", "new_string": "lost"}),
        )
        .await;
        assert_error(&output, "outside the workspace");
        assert_eq!(
            fs::read_to_string(outside.path().join("t.txt")).unwrap(),
            "keep"
        );
    }
}
