//! `grep`: lines matching a regex across a tree, searched in parallel with ripgrep's libraries.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::args::invalid;
use super::blocking::{OnCancel, Stop, cancelled, run_blocking};
use super::paths::Sandbox;
use super::walk::walker;

const NAME: &str = "grep";
/// Matching lines returned when the call gives no `max_results`.
const DEFAULT_RESULTS: u64 = 200;
/// The largest `max_results` accepted.
const MAX_RESULTS: u64 = 2000;
/// The longest line text shown; longer lines (minified code) are cut.
const MAX_LINE_BYTES: usize = 500;
/// The most text one call returns.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;

const DESCRIPTION: &str = "Search file contents with a regular expression (Rust regex syntax, \
like ripgrep). Returns matching lines as `path:line:text`, paths relative to the workspace root, \
sorted by path and line. Searches `path` (a directory, recursively, or one file; default the \
workspace root). Files excluded by .gitignore or .ignore files, hidden entries and binary files \
are skipped. `glob` limits the files searched in a directory, e.g. `*.rs` (any depth) or `src/**/*.ts`; a \
leading `!` excludes instead. Returns at most `max_results` lines (default 200, at most 2000); \
lines longer than 500 bytes are cut.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The regular expression to search for (Rust regex syntax); matched against each line.
    pattern: String,
    /// The directory or file to search, relative to the workspace root or absolute inside it (default: the workspace root).
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts`; prefix with `!` to exclude instead.
    glob: Option<String>,
    /// Match without regard to case (default false).
    #[serde(default)]
    case_insensitive: bool,
    /// The most matching lines to return (default 200, at most 2000).
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    max_results: Option<u64>,
}

/// Searches file contents for a regular expression.
#[derive(Debug, Clone, Copy)]
pub struct Grep;

impl BuiltinTool for Grep {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Search contents";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Read;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        let max = args.max_results.unwrap_or(DEFAULT_RESULTS);
        if !(1..=MAX_RESULTS).contains(&max) {
            return invalid(
                NAME,
                "max_results",
                format!("must be between 1 and {MAX_RESULTS}, got {max}"),
            );
        }
        if args.pattern.is_empty() {
            return invalid(NAME, "pattern", "must not be empty");
        }
        let matcher = match RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
        {
            Ok(matcher) => matcher,
            Err(e) => return invalid(NAME, "pattern", e),
        };
        let limit = usize::try_from(max).unwrap_or(usize::MAX);
        run_blocking(NAME, context, OnCancel::Abandon, move |sandbox, stop| {
            search(sandbox, stop, &args, &matcher, limit)
        })
        .await
    }
}

/// One matching line.
struct Hit {
    path: String,
    line: u64,
    text: String,
}

fn search(
    sandbox: &Sandbox,
    stop: &Stop,
    args: &Args,
    matcher: &RegexMatcher,
    limit: usize,
) -> ToolOutput {
    let raw = args.path.as_deref().unwrap_or(".");
    let (root, shown) = match sandbox.resolve_path(raw) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    if !root.exists() {
        return ToolOutput::error(format!("`{shown}` does not exist"));
    }
    let mut builder = walker(&root, false);
    if let Some(glob) = args.glob.as_deref().filter(|g| !g.is_empty()) {
        let overrides = OverrideBuilder::new(&root)
            .add(glob)
            .and_then(|builder| builder.build());
        match overrides {
            // Like ripgrep, a file named explicitly is searched whatever the glob says.
            Ok(overrides) if root.is_dir() => {
                builder.overrides(overrides);
            }
            Ok(_) => {}
            Err(e) => return invalid(NAME, "glob", e),
        }
    }
    let (mut hits, matched) = walk_and_search(&builder, sandbox, stop, matcher, limit);
    if stop.requested() {
        return cancelled(NAME);
    }
    if hits.is_empty() {
        return ToolOutput::text(format!("no matches for `{}` under `{shown}`", args.pattern));
    }
    hits.sort_unstable_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    render(&hits, matched > limit, limit)
}

/// Searches every file the walker yields, in parallel, stopping once more than `limit` lines
/// matched. Returns the hits kept (at most `limit`) and how many lines matched before the
/// search stopped.
fn walk_and_search(
    builder: &WalkBuilder,
    sandbox: &Sandbox,
    stop: &Stop,
    matcher: &RegexMatcher,
    limit: usize,
) -> (Vec<Hit>, usize) {
    let hits = Mutex::new(Vec::new());
    let matched = AtomicUsize::new(0);
    builder.build_parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .build();
        let matcher = matcher.clone();
        let hits = &hits;
        let matched = &matched;
        Box::new(move |entry| {
            if stop.requested() || matched.load(Ordering::Relaxed) > limit {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            // Links are not followed: one inside the tree may point anywhere.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = sandbox.display(entry.path());
            let sink = Lossy(|line, text: &str| {
                if matched.fetch_add(1, Ordering::Relaxed) >= limit {
                    return Ok(false);
                }
                let hit = Hit {
                    path: path.clone(),
                    line,
                    text: cut_line(text),
                };
                hits.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(hit);
                Ok(!stop.requested())
            });
            // An unreadable file is skipped, as ripgrep does; the rest of the tree still counts.
            let _ = searcher.search_path(&matcher, entry.path(), sink);
            WalkState::Continue
        })
    });
    let hits = hits.into_inner().unwrap_or_else(PoisonError::into_inner);
    (hits, matched.into_inner())
}

fn cut_line(text: &str) -> String {
    let text = text.trim_end_matches(['\n', '\r']);
    if text.len() <= MAX_LINE_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [... line cut]", &text[..end])
}

fn render(hits: &[Hit], stopped_early: bool, limit: usize) -> ToolOutput {
    let mut text = String::new();
    let mut shown = 0usize;
    for hit in hits {
        let line = format!("{}:{}:{}\n", hit.path, hit.line, hit.text);
        if text.len() + line.len() > MAX_OUTPUT_BYTES {
            break;
        }
        text.push_str(&line);
        shown += 1;
    }
    let mut output = ToolOutput::text(text);
    if shown < hits.len() {
        let _ = write!(
            output.text,
            "[output capped at 256 KiB: showing {shown} of {} matching lines; narrow the search]",
            hits.len()
        );
        output.truncated = true;
    } else if stopped_early {
        let _ = write!(
            output.text,
            "[stopped after {limit} matching lines, so others were not searched; narrow the pattern, path or glob, or raise max_results]"
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

    fn tree() -> tempfile::TempDir {
        let dir = workspace();
        put(
            dir.path(),
            "src/lib.rs",
            "pub fn alpha() {}\n// TODO later\n",
        );
        put(dir.path(), "src/main.rs", "fn main() {\n    alpha();\n}\n");
        put(dir.path(), "docs/guide.md", "Call alpha first.\n");
        put(dir.path(), "target/gen.rs", "fn alpha_generated() {}\n");
        put(dir.path(), ".gitignore", "target/\n");
        put(dir.path(), ".hidden/x.rs", "alpha\n");
        std::fs::write(dir.path().join("blob.bin"), b"alpha\0\x01\x02").unwrap();
        dir
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn finds_lines_sorted_skipping_ignored_hidden_and_binary_files() {
        let dir = tree();
        let output = run(Grep, dir.path(), json!({"pattern": "alpha"})).await;
        assert_eq!(
            ok_text(&output),
            "docs/guide.md:1:Call alpha first.\nsrc/lib.rs:1:pub fn alpha() {}\nsrc/main.rs:2:    alpha();\n"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gitignore_is_respected_in_a_git_checkout() {
        let dir = tree();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let output = run(Grep, dir.path(), json!({"pattern": "generated"})).await;
        assert_eq!(ok_text(&output), "no matches for `generated` under `.`");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn glob_path_and_case_options_narrow_the_search() {
        let dir = tree();
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "ALPHA", "case_insensitive": true, "glob": "*.rs"}),
        )
        .await;
        assert_eq!(
            ok_text(&output),
            "src/lib.rs:1:pub fn alpha() {}\nsrc/main.rs:2:    alpha();\n"
        );
        let output = run(Grep, dir.path(), json!({"pattern": "ALPHA"})).await;
        assert!(ok_text(&output).starts_with("no matches"));
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "alpha", "glob": "!*.rs"}),
        )
        .await;
        assert_eq!(ok_text(&output), "docs/guide.md:1:Call alpha first.\n");
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "TODO|main", "path": "src/lib.rs"}),
        )
        .await;
        assert_eq!(ok_text(&output), "src/lib.rs:2:// TODO later\n");
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "TODO", "path": "src/lib.rs", "glob": "*.md"}),
        )
        .await;
        assert_eq!(ok_text(&output), "src/lib.rs:2:// TODO later\n");
        let output = run(Grep, dir.path(), json!({"pattern": "fn", "path": "src"})).await;
        assert_eq!(
            ok_text(&output),
            "src/lib.rs:1:pub fn alpha() {}\nsrc/main.rs:1:fn main() {\n"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn caps_results_and_long_lines() {
        let dir = workspace();
        let many: String = (0..50).map(|i| format!("hit {i}\n")).collect();
        for f in 0..10 {
            put(dir.path(), &format!("f{f}.txt"), &many);
        }
        put(
            dir.path(),
            "wide.min.js",
            &format!("{}hit\n", "x".repeat(5000)),
        );
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "hit", "max_results": 30}),
        )
        .await;
        assert!(output.truncated);
        let text = ok_text(&output);
        assert_eq!(text.lines().filter(|l| l.contains(":hit")).count(), 30);
        assert!(text.contains("stopped after 30 matching lines"), "{text}");

        let output = run(Grep, dir.path(), json!({"pattern": "hit$", "glob": "*.js"})).await;
        let text = ok_text(&output);
        assert!(text.ends_with("[... line cut]\n"), "{text}");
        assert!(text.len() < 600);
    }

    #[tokio::test]
    async fn reports_bad_arguments_and_paths() {
        let dir = tree();
        let cases = [
            (json!({"pattern": "("}), "field `pattern`"),
            (json!({"pattern": ""}), "field `pattern`"),
            (
                json!({"pattern": "a", "max_results": 0}),
                "field `max_results`",
            ),
            (
                json!({"pattern": "a", "max_results": 5000}),
                "field `max_results`",
            ),
            (
                json!({"pattern": "a", "max_results": -1}),
                "field `max_results`",
            ),
            (json!({"pattern": "a", "glob": "{a"}), "field `glob`"),
            (
                json!({"pattern": "a", "path": "../"}),
                "outside the workspace",
            ),
            (
                json!({"pattern": "a", "path": "nope"}),
                "`nope` does not exist",
            ),
            (
                json!({"pattern": "a", "regex": true}),
                "unknown field `regex`",
            ),
        ];
        for (arguments, needle) in cases {
            let output = run(Grep, dir.path(), arguments).await;
            assert_error(&output, needle);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn does_not_read_through_links_leading_outside() {
        let dir = workspace();
        let outside = workspace();
        put(outside.path(), "secret.txt", "password=hunter2\n");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("secret-link.txt"),
        )
        .unwrap();
        let output = run(Grep, dir.path(), json!({"pattern": "password"})).await;
        assert!(ok_text(&output).starts_with("no matches"));
        let output = run(
            Grep,
            dir.path(),
            json!({"pattern": "password", "path": "secret-link.txt"}),
        )
        .await;
        assert_error(&output, "outside the workspace");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn searches_a_larger_tree() {
        let dir = workspace();
        for d in 0..20 {
            for f in 0..100 {
                let body = if (d * 100 + f) % 97 == 0 {
                    "needle here\n"
                } else {
                    "hay\nhay\nhay\n"
                };
                put(dir.path(), &format!("d{d:02}/f{f:03}.txt"), body);
            }
        }
        let output = run(Grep, dir.path(), json!({"pattern": "needle"})).await;
        let text = ok_text(&output);
        assert_eq!(text.lines().count(), 21, "{text}");
        assert!(text.starts_with("d00/f000.txt:1:needle here\n"));
    }
}
