//! The helper programs the benchmarks drive, built next to `rho` in `target/release`: the
//! `fake-mcp` stdio server and the `fake-model` scripted model server (started here and killed
//! on drop).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::processes::KillOnDrop;
use crate::rpc_ready::stderr_quote;
use crate::{Error, Resolved};

/// How long a `fake-model` may take to write its port file.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// `--fake`, or `fake-mcp` next to the rho binary (both are built into `target/release`).
pub fn fake_mcp_binary(resolved: &Resolved) -> Result<PathBuf, Error> {
    helper_binary(
        resolved,
        resolved.options.fake.as_deref(),
        "fake-mcp",
        "--fake",
    )
}

/// `--fake-model`, or `fake-model` next to the rho binary (both are built into `target/release`).
pub fn fake_model_binary(resolved: &Resolved) -> Result<PathBuf, Error> {
    helper_binary(
        resolved,
        resolved.options.fake_model.as_deref(),
        "fake-model",
        "--fake-model",
    )
}

/// `given`, or binary `name` next to the rho binary; absolute, and checked to exist.
pub fn helper_binary(
    resolved: &Resolved,
    given: Option<&Path>,
    name: &str,
    flag: &str,
) -> Result<PathBuf, Error> {
    let binary = match given {
        Some(path) => path.to_path_buf(),
        None => beside_rho(resolved, name)?,
    };
    existing(
        name,
        &binary,
        &format!(
            "build it with `cargo build --release -p rho-e2e --bin {name}` (or pass {flag} PATH)"
        ),
    )
}

/// Helper `relative` to the rho binary's directory (such as `examples/sdk_first_call`),
/// absolute and checked to exist; `build` is the command that builds it.
pub fn helper_path(resolved: &Resolved, relative: &str, build: &str) -> Result<PathBuf, Error> {
    let binary = beside_rho(resolved, relative)?;
    existing(relative, &binary, &format!("build it with `{build}`"))
}

/// `relative` (an executable's name, with the platform's suffix added) in the rho binary's
/// directory.
fn beside_rho(resolved: &Resolved, relative: &str) -> Result<PathBuf, Error> {
    let dir = resolved
        .rho
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", resolved.rho.display()))?;
    Ok(dir.join(format!("{relative}{}", std::env::consts::EXE_SUFFIX)))
}

/// `binary` made absolute, or an error naming `name` and how to get it (`hint`).
fn existing(name: &str, binary: &Path, hint: &str) -> Result<PathBuf, Error> {
    if !binary.is_file() {
        return Err(Error::Failed(format!(
            "{name} not found at {}; {hint}",
            binary.display()
        )));
    }
    std::path::absolute(binary)
        .map_err(|e| Error::Failed(format!("cannot make {} absolute: {e}", binary.display())))
}

/// A `fake-model` script file: its turns as a JSON array, one line a turn.
pub fn script_text(turns: &[Value]) -> String {
    let lines: Vec<String> = turns.iter().map(Value::to_string).collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}

/// A running `fake-model`, killed and reaped on drop.
pub struct FakeModel {
    child: KillOnDrop,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
}

impl FakeModel {
    /// Starts one server on a free port; `log` makes it append every request to that file.
    pub fn start(
        binary: &Path,
        dir: &Path,
        name: &str,
        script: &Path,
        log: Option<&Path>,
    ) -> Result<Self, String> {
        let port_file = dir.join(format!("{name}.port"));
        let stderr_path = dir.join(format!("{name}.stderr"));
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| format!("cannot create {}: {e}", stderr_path.display()))?;
        let mut command = Command::new(binary);
        command
            .arg("--script")
            .arg(script)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        if let Some(log) = log {
            command.arg("--log").arg(log);
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut model = Self {
            child: KillOnDrop(child),
            port: 0,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                model.port = port;
                return Ok(model);
            }
            if let Ok(Some(status)) = model.child.0.try_wait() {
                return Err(format!(
                    "fake-model {name} exited with {status}; stderr:\n{}",
                    stderr_quote(&stderr_path)
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "fake-model {name} wrote no port file within {START_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The base URL to pass to `rho rpc --endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_json_arrays_one_turn_a_line() {
        let turns = [
            serde_json::json!({"content": "a \"b\"\n"}),
            serde_json::json!({"tool_calls": []}),
        ];
        let text = script_text(&turns);
        assert_eq!(text.lines().count(), 4);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, Value::from(turns.to_vec()));
        assert_eq!(script_text(&[]), "[\n\n]\n");
        assert!(serde_json::from_str::<Value>(&script_text(&[])).is_ok());
    }
}
