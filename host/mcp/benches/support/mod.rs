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

// The machine line every rho benchmark prints, from its one definition in `rho-bench`.
#[path = "../../../../bench/src/machine.rs"]
mod machine;

pub use machine::{describe as machine, load};
