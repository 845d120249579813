//! What the `rho-mcp` benchmarks share: the pinned `server-everything` peer, a spec that starts
//! it over stdio, the runtime rho builds, and a description of the machine and its load.

use std::path::{Path, PathBuf};

use rho_component::{McpServerOrigin, McpServerSpec, McpTransport, StdioCommand, StdioServerSpec};

/// The `server-everything` launcher installed by `npm ci --prefix tests/peers`.
pub fn server_everything() -> Result<PathBuf, String> {
    // This crate is `host/mcp`, two levels below the repository root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .ok_or("cannot locate the repository root")?;
    let bin = root.join("tests/peers/node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        return Err(format!(
            "{} is missing: install the test peers with `npm ci --prefix tests/peers` \
             (bash .ci/run does)",
            bin.display()
        ));
    }
    Ok(bin)
}

/// `server` (the launcher above) as a stdio server named `id`.
pub fn everything_spec(id: &str, server: &Path) -> McpServerSpec {
    McpServerSpec::new(
        id,
        McpServerOrigin::Config,
        McpTransport::Stdio(StdioServerSpec {
            command: StdioCommand::Path(server.to_path_buf()),
            args: vec!["stdio".into()],
            env: vec![],
            env_from_env: vec![],
            cwd: None,
        }),
    )
}

/// The runtime `rho` builds for commands that talk to servers.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build the tokio runtime: {e}"))
}

/// CPUs, their model and the kernel.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .and_then(|rest| rest.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|release| format!("{} {}", std::env::consts::OS, release.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_owned());
    format!("{cpus} CPUs ({model}), {kernel}")
}

/// The load averages (1, 5, 15 minutes).
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
