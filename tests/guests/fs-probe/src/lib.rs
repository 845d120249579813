//! A test guest for `tests/e2e/wasi_sandbox.rs`: one tool, `probe`, that tries one plain `std`
//! operation (a file read or write, a directory listing, a removal, a new symbolic link, an
//! environment lookup, a TCP connection) through WASI and reports what happened.
//!
//! It never goes through rho's `read-file` import: everything here is what any Rust guest can
//! do with `std` under the capabilities rho grants (`/workspace` preopened read-only or
//! read-write, or nothing; declared variables only; no sockets). A failure is a result, not a
//! tool error, so the test reads the `std::io::ErrorKind` the guest saw.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use rho_plugin_sdk::{Context, Output, Tool, ToolError, export_tools};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// How long `connect` waits for one address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The `probe` tool.
pub struct Probe;

/// What `probe` tries.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// `std::fs::read(path)`.
    Read,
    /// `std::fs::write(path, content)` (creates or truncates).
    Write,
    /// `std::fs::read_dir(path)`, names sorted.
    List,
    /// `std::fs::remove_file(path)`.
    Remove,
    /// A new symbolic link at `path` holding `target`.
    Symlink,
    /// `std::env::current_dir()`.
    Cwd,
    /// `std::env::var_os(name)`, or the names of `std::env::vars_os()`.
    Env,
    /// Resolves `addr` and opens a TCP connection to it.
    Connect,
}

impl Op {
    /// Its name in the arguments.
    fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::List => "list",
            Op::Remove => "remove",
            Op::Symlink => "symlink",
            Op::Cwd => "cwd",
            Op::Env => "env",
            Op::Connect => "connect",
        }
    }
}

/// Arguments of `probe`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeArgs {
    /// The operation.
    op: Op,
    /// The file or directory (`read`, `write`, `list`, `remove`; the new link for `symlink`).
    path: Option<String>,
    /// What `write` writes.
    content: Option<String>,
    /// What a new link points to (`symlink`).
    target: Option<String>,
    /// The variable (`env`; without it, the names of all variables).
    name: Option<String>,
    /// `host:port` (`connect`).
    addr: Option<String>,
    /// A directory to change to first (`std::env::set_current_dir`), so relative paths start
    /// there.
    cwd: Option<String>,
}

impl Tool for Probe {
    const NAME: &'static str = "probe";
    const TITLE: Option<&'static str> = Some("Sandbox probe");
    const DESCRIPTION: &'static str = "Tries one std operation through WASI and reports the \
        outcome: `read`, `write`, `list`, `remove` or `symlink` on `path`, `cwd`, `env` \
        (`name`, or all names), `connect` to `addr`. Test use only.";
    type Args = ProbeArgs;

    fn input_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "op": {
                    "type": "string",
                    "enum": ["read", "write", "list", "remove", "symlink", "cwd", "env", "connect"]
                },
                "path": {"type": "string"},
                "content": {"type": "string"},
                "target": {"type": "string"},
                "name": {"type": "string"},
                "addr": {"type": "string"},
                "cwd": {"type": "string"}
            },
            "required": ["op"],
            "additionalProperties": false
        })
    }

    fn output_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {
                "op": {"type": "string"},
                "ok": {"type": "boolean"},
                "kind": {"type": "string", "description": "the std::io::ErrorKind of a failure"},
                "error": {"type": "string"}
            },
            "required": ["op", "ok"]
        }))
    }

    fn call(args: ProbeArgs, _cx: &Context) -> Result<Output, ToolError> {
        let outcome = match &args.cwd {
            Some(dir) => std::env::set_current_dir(dir),
            None => Ok(()),
        };
        let outcome = outcome.and_then(|()| operation(&args));
        let mut result = Map::new();
        result.insert("op".into(), json!(args.op.name()));
        let text = match outcome {
            Ok(extra) => {
                result.insert("ok".into(), json!(true));
                let text = format!("ok: {}", Value::Object(extra.clone()));
                result.extend(extra);
                text
            }
            Err(e) => {
                let kind = format!("{:?}", e.kind());
                let text = format!("error ({kind}): {e}");
                result.insert("ok".into(), json!(false));
                result.insert("kind".into(), json!(kind));
                result.insert("error".into(), json!(e.to_string()));
                text
            }
        };
        Ok(Output::text(text).with_structured(Value::Object(result)))
    }
}

/// Runs the operation; an argument it needs and lacks is an `InvalidInput` failure.
fn operation(args: &ProbeArgs) -> std::io::Result<Map<String, Value>> {
    match args.op {
        Op::Read => std::fs::read(need(&args.path, "path")?).map(|bytes| {
            fields([
                ("len", json!(bytes.len())),
                ("content", json!(String::from_utf8_lossy(&bytes))),
            ])
        }),
        Op::Write => {
            let content = need(&args.content, "content")?;
            std::fs::write(need(&args.path, "path")?, content)
                .map(|()| fields([("len", json!(content.len()))]))
        }
        Op::List => std::fs::read_dir(need(&args.path, "path")?).and_then(|entries| {
            let mut names = Vec::new();
            for entry in entries {
                names.push(entry?.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            Ok(fields([("entries", json!(names))]))
        }),
        Op::Remove => std::fs::remove_file(need(&args.path, "path")?).map(|()| Map::new()),
        // The stable way to make a link on WASI (`std::os::wasi::fs::symlink_path` is not).
        #[allow(deprecated)]
        Op::Symlink => std::fs::soft_link(need(&args.target, "target")?, need(&args.path, "path")?)
            .map(|()| Map::new()),
        Op::Cwd => {
            std::env::current_dir().map(|dir| fields([("cwd", json!(dir.to_string_lossy()))]))
        }
        Op::Env => Ok(match &args.name {
            Some(name) => fields([(
                "value",
                std::env::var_os(name).map_or(Value::Null, |v| json!(v.to_string_lossy())),
            )]),
            None => {
                let mut names: Vec<String> = std::env::vars_os()
                    .map(|(k, _)| k.to_string_lossy().into_owned())
                    .collect();
                names.sort();
                fields([("names", json!(names))])
            }
        }),
        Op::Connect => connect(need(&args.addr, "addr")?),
    }
}

/// A required argument of the operation.
fn need<'a>(value: &'a Option<String>, field: &str) -> std::io::Result<&'a str> {
    value.as_deref().ok_or_else(|| {
        std::io::Error::new(ErrorKind::InvalidInput, format!("`{field}` is required"))
    })
}

/// A result object from pairs.
fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Resolves `addr` (a name lookup unless it is an IP address) and connects to the first
/// address that answers.
fn connect(addr: &str) -> std::io::Result<Map<String, Value>> {
    let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
    let mut last = std::io::Error::new(ErrorKind::NotFound, "the name has no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(stream) => {
                let peer = stream
                    .peer_addr()
                    .map(|p| p.to_string())
                    .unwrap_or_default();
                return Ok(fields([("peer", json!(peer))]));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

export_tools!(Probe);

#[cfg(test)]
mod tests {
    use super::*;
    use rho_plugin_sdk::ToolSpec;

    #[test]
    fn the_spec_is_sound() {
        assert_eq!(ToolSpec::of::<Probe>().problems(), Vec::<String>::new());
    }
}
