//! `read_file`: a text file's lines, numbered like `cat -n`, a window at a time.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use rho_component::{RiskLevel, ToolContext, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::BuiltinTool;
use super::args::invalid;
use super::blocking::{OnCancel, Stop, cancelled, run_blocking};
use super::paths::Sandbox;

const NAME: &str = "read_file";
/// Lines shown when the call gives no `limit`.
const DEFAULT_LINES: u64 = 2000;
/// The most text one call returns; a window that would exceed it is cut at a line boundary.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// The longest line shown whole; the rest of a longer line is skipped, not buffered.
const MAX_LINE_BYTES: usize = 4096;
/// How much of the start of the file decides whether it is binary (a NUL byte there).
const BINARY_PROBE_BYTES: usize = 8 * 1024;

const DESCRIPTION: &str = "Read a text file from the workspace. Returns its lines numbered like \
`cat -n` (line number, a tab, the line). By default returns the first 2000 lines; use `offset` \
(1-based line number) and `limit` (number of lines) to read other parts of a long file. Output is \
capped at 256 KiB and lines longer than 4096 bytes are cut; the result says when more follows and \
which offset to read next. Binary files are refused. Relative paths are resolved against the \
workspace root.";

/// The arguments (their schema is the tool's input schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file to read, relative to the workspace root or absolute inside it.
    path: String,
    /// The 1-based line number to start at (default 1).
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to return (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

/// Reads a text file with numbered lines, refusing binary files and capping the output.
#[derive(Debug, Clone, Copy)]
pub struct ReadFile;

impl BuiltinTool for ReadFile {
    type Args = Args;
    const NAME: &'static str = NAME;
    const TITLE: &'static str = "Read file";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const RISK: RiskLevel = RiskLevel::Read;

    async fn run(&self, args: Args, context: &ToolContext) -> ToolOutput {
        if args.offset == Some(0) {
            return invalid(NAME, "offset", "line numbers start at 1");
        }
        if args.limit == Some(0) {
            return invalid(NAME, "limit", "must be at least 1");
        }
        run_blocking(NAME, context, OnCancel::Abandon, move |sandbox, stop| {
            read(sandbox, stop, &args)
        })
        .await
    }
}

fn read(sandbox: &Sandbox, stop: &Stop, args: &Args) -> ToolOutput {
    let (path, shown) = match sandbox.resolve_path(&args.path) {
        Ok(resolved) => resolved,
        Err(output) => return output,
    };
    match read_window(&path, &shown, stop, args) {
        Ok(output) => output,
        Err(e) => ToolOutput::error(format!("cannot read `{shown}`: {e}")),
    }
}

fn read_window(path: &Path, shown: &str, stop: &Stop, args: &Args) -> std::io::Result<ToolOutput> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Ok(ToolOutput::error(format!(
            "`{shown}` is a directory; use list_directory to see its entries"
        )));
    }
    if !meta.is_file() {
        // A FIFO or a device would block or never end.
        return Ok(ToolOutput::error(format!(
            "`{shown}` is not a regular file"
        )));
    }
    let mut file = File::open(path)?;
    let mut probe = Vec::with_capacity(BINARY_PROBE_BYTES);
    (&mut file)
        .take(BINARY_PROBE_BYTES as u64)
        .read_to_end(&mut probe)?;
    if probe.contains(&0) {
        return Ok(ToolOutput::error(format!(
            "`{shown}` looks like a binary file (it has a NUL byte in its first 8 KiB); read_file only reads text"
        )));
    }
    if probe.is_empty() {
        return Ok(ToolOutput::text(format!("`{shown}` is empty")));
    }
    let mut reader = BufReader::new(Cursor::new(probe).chain(file));
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(DEFAULT_LINES);

    let mut line = Vec::new();
    let mut number: u64 = 0;
    while number + 1 < offset {
        if number.is_multiple_of(4096) && stop.requested() {
            return Ok(cancelled(NAME));
        }
        if read_line_bounded(&mut reader, &mut line, 0)?.is_none() {
            return Ok(ToolOutput::error(format!(
                "offset {offset} is past the end of `{shown}`, which has {number} lines"
            )));
        }
        number += 1;
    }

    let mut text = String::new();
    let mut shown_lines: u64 = 0;
    let mut byte_capped = false;
    while shown_lines < limit {
        if number.is_multiple_of(4096) && stop.requested() {
            return Ok(cancelled(NAME));
        }
        let Some(cut) = read_line_bounded(&mut reader, &mut line, MAX_LINE_BYTES)? else {
            break;
        };
        let mut rendered = format!("{:>6}\t{}", number + 1, String::from_utf8_lossy(&line));
        if cut > 0 {
            let _ = write!(rendered, " [... line cut, {cut} more bytes]");
        }
        rendered.push('\n');
        if text.len() + rendered.len() > MAX_OUTPUT_BYTES && shown_lines > 0 {
            byte_capped = true;
            // This line is not shown: the next window starts at it.
            break;
        }
        text.push_str(&rendered);
        number += 1;
        shown_lines += 1;
    }
    if shown_lines == 0 {
        return Ok(ToolOutput::error(format!(
            "offset {offset} is past the end of `{shown}`, which has {number} lines"
        )));
    }
    let more = byte_capped || !reader.fill_buf()?.is_empty();
    let mut output = ToolOutput::text(text);
    if more {
        let first = number + 1 - shown_lines;
        let why = if byte_capped {
            " (output capped at 256 KiB)"
        } else {
            ""
        };
        let _ = write!(
            output.text,
            "\n[showing lines {first}-{number} of `{shown}`{why}; the file continues: call read_file with offset={} to read more]",
            number + 1
        );
        // A window the caller chose is not a cut; the default one and the byte cap are.
        output.truncated = byte_capped || args.limit.is_none();
    }
    Ok(output)
}

/// Reads one line into `line` without its terminator, keeping at most `max` bytes and skipping
/// the rest. Returns `None` at end of file, otherwise how many bytes were skipped.
fn read_line_bounded(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<usize>> {
    line.clear();
    let mut skipped = 0usize;
    let mut any = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        any = true;
        let (chunk, used, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..i], i + 1, true),
            None => (buffer, buffer.len(), false),
        };
        let room = max.saturating_sub(line.len());
        let keep = chunk.len().min(room);
        line.extend_from_slice(&chunk[..keep]);
        skipped += chunk.len() - keep;
        reader.consume(used);
        if done {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if skipped == 0 && line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Builtin;
    use crate::tools::testing::{assert_error, ok_text, put, run, workspace};
    use rho_component::CancelSignal;
    use rho_component::Tool;
    use serde_json::json;

    #[tokio::test]
    async fn numbers_lines_like_cat_n() {
        let dir = workspace();
        put(dir.path(), "a.txt", "first\nsecond\r\nthird");
        let output = run(ReadFile, dir.path(), json!({"path": "a.txt"})).await;
        assert_eq!(
            ok_text(&output),
            "     1\tfirst\n     2\tsecond\n     3\tthird\n"
        );
    }

    #[tokio::test]
    async fn offset_and_limit_select_a_window_and_say_what_follows() {
        let dir = workspace();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        put(dir.path(), "a.txt", &text);
        let output = run(
            ReadFile,
            dir.path(),
            json!({"path": "a.txt", "offset": 3, "limit": 2}),
        )
        .await;
        let text = ok_text(&output);
        assert!(
            text.starts_with("     3\tline 3\n     4\tline 4\n"),
            "{text}"
        );
        assert!(text.contains("offset=5"), "{text}");
        let output = run(ReadFile, dir.path(), json!({"path": "a.txt", "offset": 9})).await;
        assert_eq!(ok_text(&output), "     9\tline 9\n    10\tline 10\n");
        let output = run(ReadFile, dir.path(), json!({"path": "a.txt", "offset": 11})).await;
        assert_error(&output, "past the end of `a.txt`, which has 10 lines");
        let output = run(ReadFile, dir.path(), json!({"path": "a.txt", "offset": 0})).await;
        assert_error(&output, "field `offset`");
    }

    #[tokio::test]
    async fn long_files_are_capped_by_lines_and_bytes() {
        let dir = workspace();
        let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        put(dir.path(), "long.txt", &text);
        let output = run(ReadFile, dir.path(), json!({"path": "long.txt"})).await;
        let text = ok_text(&output);
        assert!(text.contains("  2000\t2000\n"));
        assert!(!text.contains("\t2001\n"));
        assert!(
            text.contains("offset=2001"),
            "{}",
            &text[text.len() - 200..]
        );

        let wide: String = (0..200)
            .map(|_| format!("{}\n", "x".repeat(3000)))
            .collect();
        put(dir.path(), "wide.txt", &wide);
        let output = run(ReadFile, dir.path(), json!({"path": "wide.txt"})).await;
        assert!(output.truncated);
        assert!(output.text.len() <= MAX_OUTPUT_BYTES + 300);
        assert!(output.text.contains("capped at 256 KiB"));

        put(dir.path(), "one-line.txt", &"y".repeat(100_000));
        let output = run(ReadFile, dir.path(), json!({"path": "one-line.txt"})).await;
        let text = ok_text(&output);
        assert!(
            text.contains("line cut, 95904 more bytes"),
            "{}",
            &text[4000..]
        );
    }

    #[tokio::test]
    async fn refuses_binary_files_directories_and_missing_files() {
        let dir = workspace();
        std::fs::write(dir.path().join("bin.dat"), b"abc\0def").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        put(dir.path(), "empty.txt", "");
        let output = run(ReadFile, dir.path(), json!({"path": "bin.dat"})).await;
        assert_error(&output, "binary file");
        let output = run(ReadFile, dir.path(), json!({"path": "sub"})).await;
        assert_error(&output, "is a directory");
        let output = run(ReadFile, dir.path(), json!({"path": "nope.txt"})).await;
        assert_error(&output, "cannot read `nope.txt`");
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(fifo.success());
        let output = run(ReadFile, dir.path(), json!({"path": "pipe"})).await;
        assert_error(&output, "`pipe` is not a regular file");
        let output = run(ReadFile, dir.path(), json!({"path": "empty.txt"})).await;
        assert!(ok_text(&output).contains("is empty"));
        let output = run(ReadFile, dir.path(), json!({"path": 3})).await;
        assert_error(&output, "field `path`");
        let output = run(ReadFile, dir.path(), json!({})).await;
        assert_error(&output, "missing field `path`");
    }

    #[tokio::test]
    async fn refuses_paths_outside_the_workspace() {
        let dir = workspace();
        let outside = workspace();
        put(outside.path(), "secret.txt", "secret\n");
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("link.txt"),
        )
        .unwrap();
        let output = run(ReadFile, dir.path(), json!({"path": "link.txt"})).await;
        assert_error(&output, "outside the workspace");
        assert!(!output.text.contains("secret\n"));
        let output = run(ReadFile, dir.path(), json!({"path": "../x.txt"})).await;
        assert_error(&output, "`../x.txt` is outside the workspace");
    }

    #[tokio::test]
    async fn a_cancelled_call_reads_nothing() {
        let dir = workspace();
        put(dir.path(), "a.txt", "a\n");
        let mut context = ToolContext::new(dir.path());
        context.cancel = CancelSignal::new();
        context.cancel.cancel();
        let output = Builtin::new(ReadFile)
            .call(json!({"path": "a.txt"}), &context)
            .await;
        assert_error(&output, "cancelled");
    }
}
