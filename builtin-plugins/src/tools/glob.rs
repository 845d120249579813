//! `glob`: files whose path under a search root matches a glob pattern, ignore files respected.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::args::invalid;
use super::blocking::{OnCancel, Stop, cancelled, run_blocking};
use super::paths::Sandbox;
use super::walk::{relative, walker};

const NAME: &str = "glob";
/// The most paths one call shows.
const MAX_RESULTS: usize = 1000;
/// The most matches kept for sorting; past it matches are only counted, so memory stays bounded
/// on enormous trees.
const MAX_COLLECTED: usize = 100_000;

const DESCRIPTION: &str = "Find files by glob pattern, e.g. `**/*.rs` or `src/**/mod.rs`. The \
pattern is matched against each path relative to the search root (`path`, default the workspace \
root); `*` and `?` do not cross `/`, `**` matches any number of directories, `{a,b}` and `[abc]` \
work too. So `*.rs` only matches in the search root itself: use `**/*.rs` to search every depth. \
Files excluded by .gitignore or .ignore files are skipped, and so are hidden entries unless \
the pattern names one (e.g. `.github/**` or `**/.env`); `.git` directories are never searched. \
Returns matching paths relative to the search root, sorted, directories ending with `/`, at most 1000.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The glob pattern, relative to the search root, e.g. `**/*.rs`.
    pattern: String,
    /// The directory to search, relative to the workspace root or absolute inside it (default: the workspace root).
    path: Option<String>,
}

/// Finds paths matching a glob pattern.
#[derive(Debug, Clone, Copy)]
pub struct Glob;

impl BuiltinTool for Glob {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Find files";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Read;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        let pattern = args.pattern.trim_start_matches("./");
        if pattern.is_empty() {
            return invalid(NAME, "pattern", "must not be empty");
        }
        let matcher = match GlobBuilder::new(pattern).literal_separator(true).build() {
            Ok(glob) => glob.compile_matcher(),
            Err(e) => return invalid(NAME, "pattern", e),
        };
        run_blocking(NAME, context, OnCancel::Abandon, move |sandbox, stop| {
            find(sandbox, stop, &args, &matcher)
        })
        .await
    }
}

fn find(sandbox: &Sandbox, stop: &Stop, args: &Args, matcher: &GlobMatcher) -> ToolOutput {
    let raw = args.path.as_deref().unwrap_or(".");
    let (root, shown) = match sandbox.resolve_path(raw) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    if !root.is_dir() {
        return ToolOutput::error(format!("`{shown}` is not a directory"));
    }
    let (mut found, total) = collect(&root, stop, matcher, mentions_hidden(&args.pattern));
    if stop.requested() {
        return cancelled(NAME);
    }
    if total == 0 {
        return ToolOutput::text(format!("no paths match `{}` under `{shown}`", args.pattern));
    }
    found.sort_unstable();
    let mut text = String::new();
    if shown != "." {
        let _ = writeln!(text, "[paths relative to `{shown}`]");
    }
    for path in found.iter().take(MAX_RESULTS) {
        text.push_str(path);
        text.push('\n');
    }
    let mut output = ToolOutput::text(text);
    if total > MAX_RESULTS {
        let _ = write!(
            output.text,
            "[showing {MAX_RESULTS} of {total} matches; narrow the pattern or the path]"
        );
        output.truncated = true;
    }
    output
}

/// Whether a component of `pattern` starts with a dot: the caller asks for hidden entries.
fn mentions_hidden(pattern: &str) -> bool {
    pattern
        .split('/')
        .any(|part| part.starts_with('.') && part != "." && part != "..")
}

/// Walks `root` in parallel; returns the matches kept (at most [`MAX_COLLECTED`]) and the count.
fn collect(
    root: &Path,
    stop: &Stop,
    matcher: &GlobMatcher,
    include_hidden: bool,
) -> (Vec<String>, usize) {
    let found = Mutex::new(Vec::new());
    let total = AtomicUsize::new(0);
    walker(root, include_hidden).build_parallel().run(|| {
        Box::new(|entry| {
            if stop.requested() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let mut rel = relative(root, entry.path());
            if matcher.is_match(&rel) {
                total.fetch_add(1, Ordering::Relaxed);
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    rel.push('/');
                }
                let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
                if found.len() < MAX_COLLECTED {
                    found.push(rel);
                }
            }
            WalkState::Continue
        })
    });
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    (found, total.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::{assert_error, ok_text, put, run, workspace};
    use serde_json::json;

    fn tree() -> tempfile::TempDir {
        let dir = workspace();
        put(dir.path(), "src/lib.rs", "");
        put(dir.path(), "src/tools/mod.rs", "");
        put(dir.path(), "src/tools/glob.rs", "");
        put(dir.path(), "README.md", "");
        put(dir.path(), "build.rs", "");
        put(dir.path(), "target/debug/out.rs", "");
        put(dir.path(), "notes/skip.rs", "");
        put(dir.path(), ".hidden/secret.rs", "");
        put(dir.path(), ".gitignore", "target/\n");
        put(dir.path(), "notes/.ignore", "skip.rs\n");
        dir
    }

    #[tokio::test]
    async fn finds_matches_at_every_depth_respecting_ignore_files() {
        let dir = tree();
        let output = run(Glob, dir.path(), json!({"pattern": "**/*.rs"})).await;
        assert_eq!(
            ok_text(&output),
            "build.rs\nsrc/lib.rs\nsrc/tools/glob.rs\nsrc/tools/mod.rs\n"
        );
        let output = run(Glob, dir.path(), json!({"pattern": "*.rs"})).await;
        assert_eq!(ok_text(&output), "build.rs\n");
        let output = run(Glob, dir.path(), json!({"pattern": "src/*"})).await;
        assert_eq!(ok_text(&output), "src/lib.rs\nsrc/tools/\n");
    }

    #[tokio::test]
    async fn gitignore_counts_inside_a_git_checkout_too() {
        let dir = tree();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let output = run(Glob, dir.path(), json!({"pattern": "**/out.rs"})).await;
        assert_eq!(ok_text(&output), "no paths match `**/out.rs` under `.`");
    }

    #[tokio::test]
    async fn hidden_entries_are_found_only_when_the_pattern_names_them() {
        let dir = tree();
        put(dir.path(), ".git/config", "");
        let output = run(Glob, dir.path(), json!({"pattern": ".hidden/*.rs"})).await;
        assert_eq!(ok_text(&output), ".hidden/secret.rs\n");
        let output = run(Glob, dir.path(), json!({"pattern": "**/.*"})).await;
        assert_eq!(ok_text(&output), ".gitignore\n.hidden/\nnotes/.ignore\n");
        assert!(mentions_hidden("**/.env"));
        assert!(!mentions_hidden("./src/../*.rs"));
    }

    #[tokio::test]
    async fn searches_under_a_path_relative_to_it() {
        let dir = tree();
        let output = run(
            Glob,
            dir.path(),
            json!({"pattern": "**/*.rs", "path": "src/tools"}),
        )
        .await;
        assert_eq!(
            ok_text(&output),
            "[paths relative to `src/tools`]\nglob.rs\nmod.rs\n"
        );
    }

    #[tokio::test]
    async fn caps_the_result_list() {
        let dir = workspace();
        for i in 0..1010 {
            put(dir.path(), &format!("d/f{i:04}.txt"), "");
        }
        let output = run(Glob, dir.path(), json!({"pattern": "**/*.txt"})).await;
        assert!(output.truncated);
        assert!(output.text.contains("showing 1000 of 1010 matches"));
        assert!(output.text.contains("d/f0999.txt\n"));
        assert!(!output.text.contains("d/f1000.txt"));
    }

    #[tokio::test]
    async fn reports_bad_patterns_and_paths() {
        let dir = tree();
        let output = run(Glob, dir.path(), json!({"pattern": "src/[a"})).await;
        assert_error(&output, "field `pattern`");
        let output = run(Glob, dir.path(), json!({"pattern": ""})).await;
        assert_error(&output, "field `pattern`");
        let output = run(Glob, dir.path(), json!({"pattern": "*", "path": ".."})).await;
        assert_error(&output, "outside the workspace");
        let output = run(
            Glob,
            dir.path(),
            json!({"pattern": "*", "path": "README.md"}),
        )
        .await;
        assert_error(&output, "`README.md` is not a directory");
        let output = run(Glob, dir.path(), json!({"path": "src"})).await;
        assert_error(&output, "missing field `pattern`");
    }

    #[tokio::test]
    async fn does_not_walk_through_links_leading_outside() {
        let dir = workspace();
        let outside = workspace();
        put(outside.path(), "secret.rs", "");
        put(dir.path(), "mine.rs", "");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let output = run(Glob, dir.path(), json!({"pattern": "**/*.rs"})).await;
        assert_eq!(ok_text(&output), "mine.rs\n");
    }
}
