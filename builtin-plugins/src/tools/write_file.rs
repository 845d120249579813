//! `write_file`: creates or overwrites a file inside the workspace, creating parent directories.

use std::fs;

use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::blocking::{OnCancel, cancelled, run_blocking};
use super::paths::{Sandbox, write_no_follow};

const NAME: &str = "write_file";

const DESCRIPTION: &str = "Write a file in the workspace, replacing it entirely if it exists. \
Parent directories are created as needed. Use edit_file instead to change part of an existing \
file. Relative paths are resolved against the workspace root; paths outside the workspace \
(including through symbolic links) are refused.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file to write, relative to the workspace root or absolute inside it.
    path: String,
    /// The complete new content of the file.
    content: String,
}

/// Creates or overwrites a file with the given content.
#[derive(Debug, Clone, Copy)]
pub struct WriteFile;

impl BuiltinTool for WriteFile {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Write file";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Write;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        run_blocking(NAME, context, OnCancel::Finish, move |sandbox, stop| {
            if stop.requested() {
                return cancelled(NAME);
            }
            write(sandbox, &args)
        })
        .await
    }
}

fn write(sandbox: &Sandbox, args: &Args) -> ToolOutput {
    let (path, shown) = match sandbox.resolve_path(&args.path) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    let existed = match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return ToolOutput::error(format!("`{shown}` is a directory"));
        }
        Ok(meta) if !meta.is_file() => {
            return ToolOutput::error(format!("`{shown}` is not a regular file"));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    if let Some(parent) = path.parent()
        && let Err(e) = fs::create_dir_all(parent)
    {
        return ToolOutput::error(format!(
            "cannot create the parent directories of `{shown}`: {e}"
        ));
    }
    match write_no_follow(&path, args.content.as_bytes()) {
        Ok(()) => {
            let what = if existed { "overwrote" } else { "created" };
            ToolOutput::text(format!(
                "{what} `{shown}` ({} bytes written)",
                args.content.len()
            ))
        }
        Err(e) => ToolOutput::error(format!("cannot write `{shown}`: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::{assert_error, ok_text, put, run, workspace};
    use serde_json::json;

    #[tokio::test]
    async fn creates_files_and_parent_directories() {
        let dir = workspace();
        let output = run(
            WriteFile,
            dir.path(),
            json!({"path": "a/b/c.txt", "content": "héllo\n"}),
        )
        .await;
        assert_eq!(ok_text(&output), "created `a/b/c.txt` (7 bytes written)");
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "héllo\n"
        );
        let output = run(
            WriteFile,
            dir.path(),
            json!({"path": "a/b/c.txt", "content": ""}),
        )
        .await;
        assert_eq!(ok_text(&output), "overwrote `a/b/c.txt` (0 bytes written)");
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            ""
        );
    }

    #[tokio::test]
    async fn refuses_directories_and_bad_arguments() {
        let dir = workspace();
        fs::create_dir(dir.path().join("sub")).unwrap();
        let output = run(
            WriteFile,
            dir.path(),
            json!({"path": "sub", "content": "x"}),
        )
        .await;
        assert_error(&output, "`sub` is a directory");
        let output = run(WriteFile, dir.path(), json!({"path": "x.txt"})).await;
        assert_error(&output, "missing field `content`");
        let output = run(
            WriteFile,
            dir.path(),
            json!({"path": "x.txt", "content": "x", "mode": 7}),
        )
        .await;
        assert_error(&output, "unknown field `mode`");
    }

    #[tokio::test]
    async fn never_writes_outside_the_workspace() {
        let dir = workspace();
        let outside = workspace();
        put(outside.path(), "target.txt", "original\n");
        std::os::unix::fs::symlink(
            outside.path().join("target.txt"),
            dir.path().join("link.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("new.txt"),
            dir.path().join("dangling.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        for path in [
            "link.txt",
            "dangling.txt",
            "out/created/x.txt",
            "../escape.txt",
        ] {
            let output = run(
                WriteFile,
                dir.path(),
                json!({"path": path, "content": "pwned"}),
            )
            .await;
            assert_error(&output, "outside the workspace");
        }
        assert_eq!(
            fs::read_to_string(outside.path().join("target.txt")).unwrap(),
            "original\n"
        );
        assert!(!outside.path().join("new.txt").exists());
        assert!(!outside.path().join("created").exists());
    }

    #[tokio::test]
    async fn a_link_inside_the_workspace_writes_its_target() {
        let dir = workspace();
        put(dir.path(), "real.txt", "old");
        std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("alias.txt"))
            .unwrap();
        let output = run(
            WriteFile,
            dir.path(),
            json!({"path": "alias.txt", "content": "new"}),
        )
        .await;
        assert_eq!(ok_text(&output), "overwrote `real.txt` (3 bytes written)");
        assert_eq!(
            fs::read_to_string(dir.path().join("real.txt")).unwrap(),
            "new"
        );
    }
}
