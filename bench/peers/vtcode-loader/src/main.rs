//! The peer of `rho-bench plugins-list`: VT Code's Agent Plugins loader over the same roots.
//!
//! It does what `vtcode plugins list` does (the `collect_plugin_rows` of VT Code's CLI,
//! `src/cli/plugins/list.rs` in the `vtcode` crate): the roots from `plugin_roots_for` (the
//! project's `.agents/plugins`, then `~/.agents/plugins`), each root's immediate children that
//! are directories holding a `plugin.json`, and `FileSystemPluginLoader::load` on each (manifest
//! parse and validation, `skills/*/SKILL.md` parse and validation, `mcp.json` parse). Instead of
//! VT Code's text rows it prints one line the bench checks:
//! `plugins <valid> invalid <invalid> skills <n> servers <n>`.

use std::path::PathBuf;
use std::process::ExitCode;

use vtcode_agent_plugins::{FileSystemPluginLoader, PluginLoader, plugin_roots_for};

#[derive(Default)]
struct Counts {
    plugins: usize,
    invalid: usize,
    skills: usize,
    servers: usize,
}

fn collect(roots: Vec<PathBuf>) -> std::io::Result<Counts> {
    let loader = FileSystemPluginLoader::new();
    let mut counts = Counts::default();
    for root in roots {
        if !root.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&root)? {
            let path = entry?.path();
            if !path.is_dir() {
                continue;
            }
            if !path.join("plugin.json").is_file() {
                continue;
            }
            match loader.load(&path) {
                Ok(loaded) => {
                    counts.plugins += 1;
                    counts.skills += loaded.skills.len();
                    counts.servers += loaded.mcp.as_ref().map_or(0, |m| m.servers.len());
                }
                Err(error) => {
                    counts.invalid += 1;
                    eprintln!("{}: invalid: {error}", path.display());
                }
            }
        }
    }
    Ok(counts)
}

fn main() -> ExitCode {
    let workspace = std::env::current_dir().unwrap_or_default();
    match collect(plugin_roots_for(&workspace)) {
        Ok(c) => {
            println!(
                "plugins {} invalid {} skills {} servers {}",
                c.plugins, c.invalid, c.skills, c.servers
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("vtcode-loader: {error}");
            ExitCode::FAILURE
        }
    }
}
