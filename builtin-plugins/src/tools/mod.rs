//! The built-in tools: files (read, write, edit, list), search (glob, grep) and shell commands.
//!
//! Every file tool resolves paths through one rule (see `paths.rs`): relative paths are taken
//! from the session workspace, and nothing outside the workspace or the configured extra roots
//! is touched, symbolic links included. File-system work runs on tokio's blocking pool and
//! stops when the call is cancelled or its future is dropped.

mod args;
mod blocking;
mod capture;
mod edit_file;
mod glob;
mod grep;
mod list_directory;
mod paths;
mod read_file;
mod run_command;
mod walk;
mod write_file;

#[cfg(test)]
mod testing;

use std::sync::Arc;

use rho_component::{RiskLevel, Tool, ToolOrigin, ToolSpec};
use serde_json::Value;

pub use edit_file::EditFile;
pub use glob::Glob;
pub use grep::Grep;
pub use list_directory::ListDirectory;
pub use read_file::ReadFile;
pub use run_command::RunCommand;
pub use write_file::WriteFile;

/// Every built-in tool this crate provides, in a stable order. `activate_skill` is not among
/// them: it needs the skill registry, so the host adds it.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(WriteFile::new()),
        Arc::new(EditFile::new()),
        Arc::new(ListDirectory::new()),
        Arc::new(Glob::new()),
        Arc::new(Grep::new()),
        Arc::new(RunCommand::new()),
    ]
}

/// The declaration of a built-in tool.
fn builtin_spec(
    name: &str,
    title: &str,
    description: &str,
    input_schema: Value,
    risk: RiskLevel,
) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        title: Some(title.to_owned()),
        description: description.to_owned(),
        input_schema,
        output_schema: None,
        risk,
        origin: ToolOrigin::Builtin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_builtin_tool_declares_a_strict_object_schema() {
        let tools = builtin_tools();
        let mut names = HashSet::new();
        for tool in &tools {
            let spec = tool.spec();
            assert!(names.insert(spec.name.clone()), "duplicate {}", spec.name);
            assert_eq!(spec.origin, ToolOrigin::Builtin);
            assert!(!spec.description.is_empty());
            let schema = &spec.input_schema;
            assert_eq!(schema["type"], "object", "{}", spec.name);
            assert_eq!(schema["additionalProperties"], false, "{}", spec.name);
            let properties = schema["properties"].as_object().unwrap();
            for (field, property) in properties {
                assert!(
                    property["description"].is_string(),
                    "{}.{field} has no description",
                    spec.name
                );
            }
            for required in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()));
            }
        }
        let expected = [
            "read_file",
            "write_file",
            "edit_file",
            "list_directory",
            "glob",
            "grep",
            "run_command",
        ];
        assert_eq!(names, expected.iter().map(|s| s.to_string()).collect());
    }

    #[test]
    fn risk_levels_match_what_each_tool_can_change() {
        for tool in builtin_tools() {
            let spec = tool.spec();
            let expected = match spec.name.as_str() {
                "write_file" | "edit_file" => RiskLevel::Write,
                "run_command" => RiskLevel::Destructive,
                _ => RiskLevel::Read,
            };
            assert_eq!(spec.risk, expected, "{}", spec.name);
        }
    }
}
