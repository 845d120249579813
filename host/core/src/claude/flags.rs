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
/// Claude's permission prompts come to rho as control requests on stdout
/// (`control.rs`), answered through rho's own approval flow.
const PROMPTS_TO_RHO: [&str; 2] = ["--permission-prompt-tool", "stdio"];
/// `ask`: Claude asks (rho) before every command and edit, whatever rules of its own settings
/// would allow (an `ask` rule for a whole tool comes before them).
const ASK_COMMANDS_AND_EDITS: &str =
    r#"{"permissions":{"ask":["Bash","Edit","Write","NotebookEdit"]}}"#;
/// `ask-destructive`: Claude asks (rho) before every command.
const ASK_COMMANDS: &str = r#"{"permissions":{"ask":["Bash"]}}"#;

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

/// Claude's permission flags for rho's `mode`, never wider than it:
/// - `read-only`: only Claude's read tools exist (`--tools Read,Glob,Grep`), in `dontAsk`.
/// - `ask`: Claude's `default` mode, with `ask` rules for its command and edit tools (so no
///   rule of Claude's own settings runs them unasked), and its prompts sent to rho
///   (`--permission-prompt-tool stdio`), which answers them through its approval flow.
/// - `ask-destructive`: the same, with edits allowed and only commands asked about.
/// - `allow-all`: `bypassPermissions` (Claude refuses it when run as root).
pub(crate) fn permission_args(mode: PermissionMode) -> Vec<String> {
    let mut args: Vec<&str> = match mode {
        PermissionMode::ReadOnly => vec!["--permission-mode", "dontAsk", "--tools", READ_TOOLS],
        PermissionMode::Ask => vec![
            "--permission-mode",
            "default",
            "--settings",
            ASK_COMMANDS_AND_EDITS,
        ],
        PermissionMode::AskDestructive => vec![
            "--permission-mode",
            "default",
            "--allowedTools",
            EDIT_TOOLS,
            "--settings",
            ASK_COMMANDS,
        ],
        PermissionMode::AllowAll => vec!["--permission-mode", "bypassPermissions"],
    };
    if asks_rho(mode) {
        args.extend(PROMPTS_TO_RHO);
    }
    args.into_iter().map(str::to_owned).collect()
}

/// Whether Claude's permission prompts come to rho in `mode` (`ask`, `ask-destructive`).
pub(crate) fn asks_rho(mode: PermissionMode) -> bool {
    matches!(mode, PermissionMode::Ask | PermissionMode::AskDestructive)
}

/// Every argument after the program: print mode with stream-json input and output (partial
/// messages streamed, user messages echoed when Claude takes them: how rho knows where
/// steering joined), no MCP server, the permission flags, then the model, extra roots and
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
        "--replay-user-messages",
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
                 --include-partial-messages --replay-user-messages --strict-mcp-config \
                 --mcp-config {\"mcpServers\":{}}"
            ),
            "{line}"
        );
    }

    #[test]
    fn no_mode_but_allow_all_lets_claude_run_commands_unasked_or_skip_permissions() {
        for mode in PermissionMode::ALL.iter().copied() {
            let flags = permission_args(mode).join(" ");
            if mode == PermissionMode::AllowAll {
                assert_eq!(flags, "--permission-mode bypassPermissions");
                continue;
            }
            assert!(!flags.contains("bypassPermissions"), "{mode:?}: {flags}");
            assert!(
                !flags.contains("Bash,") && !flags.contains("Tools Bash"),
                "{mode:?}: {flags}"
            );
            let commands_asked = flags.contains(r#""ask":["Bash""#);
            let no_commands = flags.contains("--tools Read,Glob,Grep");
            assert!(commands_asked || no_commands, "{mode:?}: {flags}");
        }
        assert_eq!(
            permission_args(PermissionMode::ReadOnly).join(" "),
            "--permission-mode dontAsk --tools Read,Glob,Grep"
        );
        assert_eq!(
            permission_args(PermissionMode::Ask).join(" "),
            r#"--permission-mode default --settings {"permissions":{"ask":["Bash","Edit","Write","NotebookEdit"]}} --permission-prompt-tool stdio"#
        );
        assert_eq!(
            permission_args(PermissionMode::AskDestructive).join(" "),
            r#"--permission-mode default --allowedTools Edit,Write,NotebookEdit --settings {"permissions":{"ask":["Bash"]}} --permission-prompt-tool stdio"#
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
