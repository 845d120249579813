//! The locations of one run, resolved once from the environment and `--cwd`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rho_config::{PathsEnv, RhoPaths};
use rho_plugins::PluginLocations;

/// Everything a command needs to find components.
pub struct Context {
    pub paths: RhoPaths,
    pub plugins: PluginLocations,
    pub json: bool,
    /// `--config`, if given.
    pub config_file: Option<PathBuf>,
}

impl Context {
    pub fn new(cwd: Option<&Path>, json: bool, config_file: Option<&Path>) -> anyhow::Result<Self> {
        let cwd = match cwd {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().context("cannot read the working directory")?,
        };
        let paths = RhoPaths::resolve(&PathsEnv::from_process(), &cwd)?;
        let plugins = rho_core::plugin_locations(&paths);
        Ok(Self {
            paths,
            plugins,
            json,
            config_file: config_file.map(Path::to_path_buf),
        })
    }

    /// Where the configuration comes from: `--config` (required to exist) or the default file.
    fn config_source(&self) -> rho_config::ConfigSource {
        match &self.config_file {
            Some(file) => rho_config::ConfigSource::Explicit(self.arg_path(file)),
            None => rho_config::ConfigSource::Default(self.paths.default_config_file()),
        }
    }

    /// Reads the configuration alone, failing as [`registry`](Self::registry) does.
    pub fn config(&self) -> anyhow::Result<rho_config::RhoConfig> {
        Ok(rho_config::load_config(&self.config_source())?)
    }

    /// Every component source of this run, loaded (nothing is started). A configuration that
    /// cannot be used fails the command with the loader's error (file, key, line): every
    /// command that reads `config.toml` refuses it the same way, rather than going on without
    /// the servers and settings the user wrote.
    pub fn registry(&self) -> anyhow::Result<rho_core::Registry> {
        let registry = self.registry_reporting_config();
        if let Some(error) = &registry.config_error {
            anyhow::bail!("{error}");
        }
        Ok(registry)
    }

    /// As [`registry`](Self::registry), with the MCP servers of the servers file `file` alone
    /// (`rho rpc --mcp-config`); any problem in that file is an error naming it.
    pub fn registry_with_servers_file(&self, file: &Path) -> anyhow::Result<rho_core::Registry> {
        let registry = rho_core::Registry::load_with_servers_file(
            self.paths.clone(),
            &self.config_source(),
            file,
        )
        .map_err(|e| anyhow::anyhow!("--mcp-config: {e}"))?;
        if let Some(error) = &registry.config_error {
            anyhow::bail!("{error}");
        }
        Ok(registry)
    }

    /// As [`registry`](Self::registry), but an unusable configuration is only recorded (as
    /// `config_error` and a diagnostic): for `rho doctor`, whose job is to report it.
    pub fn registry_reporting_config(&self) -> rho_core::Registry {
        rho_core::Registry::load(self.paths.clone(), &self.config_source())
    }

    /// Resolves a path argument against the project directory (`--cwd`).
    pub fn arg_path(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.paths.project.cwd.join(path)
        }
    }
}
