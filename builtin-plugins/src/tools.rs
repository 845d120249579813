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

use rho_component::{RiskLevel, Tool, ToolContext, ToolFuture, ToolOrigin, ToolOutput, ToolSpec};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
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
        Arc::new(Builtin::new(ReadFile)),
        Arc::new(Builtin::new(WriteFile)),
        Arc::new(Builtin::new(EditFile)),
        Arc::new(Builtin::new(ListDirectory)),
        Arc::new(Builtin::new(Glob)),
        Arc::new(Builtin::new(Grep)),
        Arc::new(Builtin::new(RunCommand)),
    ]
}

/// A built-in tool: its declaration as constants and its arguments as a typed struct, whose
/// derived JSON Schema ([`rho_component::input_schema`], descriptions from the fields' doc
/// comments) is the input schema the model sees. [`Builtin`] makes it a [`Tool`].
pub trait BuiltinTool: Send + Sync + 'static {
    /// The arguments, parsed from the model's JSON before [`BuiltinTool::run`] (unknown fields
    /// are refused: `deny_unknown_fields`).
    type Args: DeserializeOwned + JsonSchema + Send;
    /// The name the model calls.
    const NAME: &'static str;
    /// The short title shown to people.
    const TITLE: &'static str;
    /// What the model reads about the tool.
    const DESCRIPTION: &'static str;
    /// What a call can change.
    const RISK: RiskLevel;

    /// Runs one call with parsed arguments (checks the schema cannot say are the tool's own).
    /// An implementation is an `async fn`; [`Builtin`] boxes its future.
    fn run(
        &self,
        args: Self::Args,
        context: &ToolContext,
    ) -> impl Future<Output = ToolOutput> + Send;
}

/// The [`Tool`] a [`BuiltinTool`] is: the declaration built once from the constants and the
/// arguments' schema; each call's arguments parsed into `T::Args` (errors name the field).
#[derive(Debug, Clone)]
pub struct Builtin<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: BuiltinTool> Builtin<T> {
    /// Declares `tool`.
    pub fn new(tool: T) -> Self {
        let mut input_schema = rho_component::input_schema::<T::Args>();
        if let Value::Object(root) = &mut input_schema {
            // The model needs the shape, not the document's metadata.
            root.remove("$schema");
            root.remove("title");
            root.remove("description");
        }
        let spec = ToolSpec {
            name: T::NAME.to_owned(),
            title: Some(T::TITLE.to_owned()),
            description: T::DESCRIPTION.to_owned(),
            input_schema,
            output_schema: None,
            risk: T::RISK,
            origin: ToolOrigin::Builtin,
        };
        Self { tool, spec }
    }
}

impl<T: BuiltinTool> Tool for Builtin<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> ToolFuture<'a> {
        match args::parse::<T::Args>(T::NAME, arguments) {
            Ok(args) => Box::pin(self.tool.run(args, context)),
            Err(failed) => Box::pin(std::future::ready(failed)),
        }
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
            let required = schema.get("required").and_then(Value::as_array);
            for required in required.into_iter().flatten() {
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
