//! The command line rho gives `claude`: stream-json in and out, no MCP server from anywhere,
//! and rho's permission mode as Claude's own permission flags, never wider than the mode
//! allows (`docs/sessions.md`, "The Claude CLI runtime").

use std::ffi::OsString;
use std::path::PathBuf;

use rho_component::PermissionMode;

/// The MCP configuration Claude gets: no server. With `--strict-mcp-config` Claude also
/// ignores every MCP configuration of its own (user, project, plugins), so nothing is loaded.
pub(crate) const NO_MCP_SERVERS: &str = r#"{"mcpServers":{}}"#;

/// Claude's tools that change files.
const EDIT_TOOLS: &str = "Edit,Write,NotebookEdit";
/// Claude's tools that only read.
const READ_TOOLS: &str = "Read,Glob,Grep";
/// Claude's tools that run commands.
const COMMAND_TOOLS: &str = "Bash";

/// What one `claude` process is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    /// rho's permission mode.
    pub(crate) permission_mode: PermissionMode,
    /// `--model`, when one was asked for (`rho --model`).
    pub(crate) model: Option<String>,
    /// Directories besides the workspace (`[agent] extra_roots`), as `--add-dir`.
    pub(crate) extra_roots: Vec<PathBuf>,
    /// Claude's session to continue (`--resume`), after a process was stopped.
    pub(crate) resume: Option<String>,
}

/// Claude's permission flags for rho's `mode`. Claude cannot ask rho's user (nobody answers
/// its prompts in print mode), so whatever rho would ask about is refused:
/// - `read-only`: only Claude's read tools exist (`--tools Read,Glob,Grep`), in `dontAsk`.
/// - `ask`: `dontAsk` (only what Claude runs without asking, its reads), and its edit and
///   command tools denied outright, so no rule in Claude's own settings allows them.
/// - `ask-destructive`: edits allowed, commands denied, everything else `dontAsk`.
/// - `allow-all`: `bypassPermissions` (Claude refuses it when run as root).
pub(crate) fn permission_args(mode: PermissionMode) -> Vec<String> {
    let args: &[&str] = match mode {
        PermissionMode::ReadOnly => &["--permission-mode", "dontAsk", "--tools", READ_TOOLS],
        PermissionMode::Ask => &[
            "--permission-mode",
            "dontAsk",
            "--disallowedTools",
            "Bash,Edit,Write,NotebookEdit",
        ],
        PermissionMode::AskDestructive => &[
            "--permission-mode",
            "dontAsk",
            "--allowedTools",
            EDIT_TOOLS,
            "--disallowedTools",
            COMMAND_TOOLS,
        ],
        PermissionMode::AllowAll => &["--permission-mode", "bypassPermissions"],
    };
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// Every argument after the program: print mode with stream-json input and output (partial
/// messages streamed), no MCP server, the permission flags, then the model, extra roots and
/// the session to resume.
pub(crate) fn args(launch: &Launch) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--strict-mcp-config",
        "--mcp-config",
        NO_MCP_SERVERS,
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.extend(
        permission_args(launch.permission_mode)
            .into_iter()
            .map(OsString::from),
    );
    if let Some(model) = &launch.model {
        args.push("--model".into());
        args.push(model.into());
    }
    for root in &launch.extra_roots {
        args.push("--add-dir".into());
        args.push(root.clone().into_os_string());
    }
    if let Some(session) = &launch.resume {
        args.push("--resume".into());
        args.push(session.into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(mode: PermissionMode) -> Launch {
        Launch {
            permission_mode: mode,
            model: None,
            extra_roots: Vec::new(),
            resume: None,
        }
    }

    fn joined(launch: &Launch) -> String {
        args(launch)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_launch_is_stream_json_with_no_mcp_server() {
        let line = joined(&launch(PermissionMode::default()));
        assert!(
            line.starts_with(
                "-p --input-format stream-json --output-format stream-json --verbose \
                 --include-partial-messages --strict-mcp-config --mcp-config {\"mcpServers\":{}}"
            ),
            "{line}"
        );
    }

    #[test]
    fn no_mode_but_allow_all_lets_claude_run_commands_or_skip_permissions() {
        for mode in PermissionMode::ALL.iter().copied() {
            let flags = permission_args(mode).join(" ");
            if mode == PermissionMode::AllowAll {
                assert_eq!(flags, "--permission-mode bypassPermissions");
                continue;
            }
            assert!(
                flags.starts_with("--permission-mode dontAsk"),
                "{mode:?}: {flags}"
            );
            let runs_commands = flags.contains("--allowedTools Bash")
                || !(flags.contains("--disallowedTools Bash") || flags.contains("--tools Read"));
            assert!(!runs_commands, "{mode:?}: {flags}");
        }
        assert_eq!(
            permission_args(PermissionMode::ReadOnly).join(" "),
            "--permission-mode dontAsk --tools Read,Glob,Grep"
        );
        assert!(
            permission_args(PermissionMode::Ask)
                .join(" ")
                .contains("--disallowedTools Bash,Edit,Write,NotebookEdit")
        );
    }

    #[test]
    fn model_roots_and_resume_follow_the_permission_flags() {
        let line = joined(&Launch {
            permission_mode: PermissionMode::Ask,
            model: Some("sonnet".into()),
            extra_roots: vec![PathBuf::from("/srv/data")],
            resume: Some("0b6e".into()),
        });
        assert!(
            line.ends_with("--model sonnet --add-dir /srv/data --resume 0b6e"),
            "{line}"
        );
    }
}
