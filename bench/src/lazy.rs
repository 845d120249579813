//! What the lazy-start benchmarks (`lazy-ready`, `lazy-first-call`) share: `fake-mcp` server
//! entries that record each start in a pid file, the tool cache they fill, a session that fills
//! it, and the servers' states as `listExtensions` reports them (`docs/mcp.md`, "Lazy start"
//! and "Tool cache").

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::json_lines;
use crate::rpc_ready::{LineChild, LineCommand};
use crate::toml_text::toml_string;

/// How long a session may take to fill the tool cache for every lazy server.
const FILL_TIMEOUT: Duration = Duration::from_secs(60);

/// A `[mcp.servers.<id>]` table: `fake-mcp --mode ok --pid-file <pids>`, started `startup`
/// (`lazy` or `eager`). Every start of the server appends its pid to `pids`, and the path of
/// `pids` on its command line marks its process in `/proc`.
pub fn server_table(id: &str, fake: &Path, pids: &Path, startup: &str) -> String {
    format!(
        "[mcp.servers.{id}]\ncommand = {}\nargs = [\"--mode\", \"ok\", \"--pid-file\", {}]\n\
         startup = {}\n\n",
        toml_string(&fake.to_string_lossy()),
        toml_string(&pids.to_string_lossy()),
        toml_string(startup)
    )
}

/// The tool cache's directory under `rho_home`.
pub fn cache_dir(rho_home: &Path) -> PathBuf {
    rho_home.join("cache").join("mcp")
}

/// The tool cache's entries (`<key>.json`; the temporary files of a write in progress are not
/// counted).
pub fn cache_entries(rho_home: &Path) -> usize {
    std::fs::read_dir(cache_dir(rho_home))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|entry| {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    !name.starts_with('.') && name.ends_with(".json")
                })
                .count()
        })
        .unwrap_or(0)
}

/// How many times the servers recording in `pids` started (no file: none). Each start appends
/// its pid and a newline, but in two writes, so the pids of servers starting together can
/// interleave: the newlines are counted, not the lines.
pub fn starts(pids: &Path) -> Result<usize, String> {
    match std::fs::read(pids) {
        Ok(bytes) => Ok(bytes.iter().filter(|b| **b == b'\n').count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(format!("cannot read {}: {e}", pids.display())),
    }
}

/// Runs one `rho rpc` session (`command`, whose configuration has lazy servers nothing is
/// cached for yet) until the tool cache under `rho_home` holds `entries` entries: its lazy
/// servers start in the background and each start is remembered. Returns how long that took.
pub fn fill_cache(
    command: &mut LineCommand,
    rho_home: &Path,
    entries: usize,
) -> Result<Duration, String> {
    let start = Instant::now();
    let rpc = command.spawn_ready()?;
    loop {
        let found = cache_entries(rho_home);
        if found >= entries {
            break;
        }
        if start.elapsed() > FILL_TIMEOUT {
            return Err(format!(
                "the session `{}` wrote {found} tool cache entries in {FILL_TIMEOUT:?}, \
                 expected {entries} (in {})",
                command.command_line(),
                cache_dir(rho_home).display()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let filled = start.elapsed();
    rpc.finish()?;
    Ok(filled)
}

/// Asks a running session for `listExtensions` (request `id`) and returns each MCP server's id
/// and status, in the session's order. Notifications before the response are skipped.
pub fn server_statuses(rpc: &mut LineChild, id: u64) -> Result<Vec<(String, String)>, String> {
    rpc.write_line(&json!({"jsonrpc": "2.0", "id": id, "method": "listExtensions"}).to_string())?;
    let mut line = String::new();
    loop {
        rpc.read_line(&mut line)?;
        if json_lines::is_response_to(&json_lines::parse(&line, "rho")?, id) {
            return statuses_of(&line);
        }
    }
}

/// The `(id, status)` of every server in a `listExtensions` response line.
fn statuses_of(line: &str) -> Result<Vec<(String, String)>, String> {
    let message = json_lines::rpc_line(line)?;
    let servers = message["result"]["servers"]
        .as_array()
        .ok_or_else(|| format!("listExtensions answered without servers: {line}"))?;
    Ok(servers
        .iter()
        .map(|server| {
            let field = |key: &str| server[key].as_str().unwrap_or("?").to_owned();
            (field("id"), field("status"))
        })
        .collect())
}

/// Fails unless there are `count` servers and every one is in state `want`.
pub fn check_statuses(
    statuses: &[(String, String)],
    count: usize,
    want: &str,
) -> Result<(), String> {
    if statuses.len() != count {
        return Err(format!(
            "the session lists {} MCP servers, expected {count}",
            statuses.len()
        ));
    }
    let off: Vec<String> = statuses
        .iter()
        .filter(|(_, status)| status != want)
        .map(|(id, status)| format!("{id} is {status}"))
        .collect();
    if off.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "expected every server {want}, but {}",
            off.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_table_records_starts_and_is_quoted() {
        let text = server_table(
            "lazy07",
            Path::new("/opt/a \"b\"/fake-mcp"),
            Path::new("/tmp/x/lazy.pids"),
            "lazy",
        );
        assert!(text.starts_with("[mcp.servers.lazy07]\n"));
        assert!(text.contains(r#"command = "/opt/a \"b\"/fake-mcp""#));
        assert!(text.contains(r#"args = ["--mode", "ok", "--pid-file", "/tmp/x/lazy.pids"]"#));
        assert!(text.contains("startup = \"lazy\"\n"));
    }

    #[test]
    fn cache_entries_and_starts_count_what_is_there() {
        let scratch = crate::scratch::Scratch::new("lazy-test").unwrap();
        let home = scratch.path().join(".rho");
        assert_eq!(cache_entries(&home), 0);
        let dir = cache_dir(&home);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["a.json", "b.json", ".tmp-1-2", "c.txt"] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        assert_eq!(cache_entries(&home), 2);
        let pids = scratch.path().join("pids");
        assert_eq!(starts(&pids), Ok(0));
        std::fs::write(&pids, "12\n34\n").unwrap();
        assert_eq!(starts(&pids), Ok(2));
        // Two servers' appends interleaved: still two starts.
        std::fs::write(&pids, "1234\n\n56\n").unwrap();
        assert_eq!(starts(&pids), Ok(3));
    }

    #[test]
    fn statuses_are_read_from_list_extensions() {
        let line = r#"{"jsonrpc":"2.0","id":7,"result":{"plugins":[],"servers":[{"id":"a","status":"known"},{"id":"b","status":"started"}]}}"#;
        let statuses = statuses_of(line).unwrap();
        assert_eq!(
            statuses,
            [
                ("a".to_owned(), "known".to_owned()),
                ("b".to_owned(), "started".to_owned())
            ]
        );
        assert!(check_statuses(&statuses, 2, "known").is_err());
        assert!(check_statuses(&statuses[..1], 1, "known").is_ok());
        assert!(check_statuses(&statuses[..1], 2, "known").is_err());
        assert!(statuses_of(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#).is_err());
    }
}
