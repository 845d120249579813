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

    /// Reads the configuration: `--config` (required to exist) or the default file.
    pub fn config(&self) -> anyhow::Result<rho_config::RhoConfig> {
        let source = match &self.config_file {
            Some(file) => rho_config::ConfigSource::Explicit(self.arg_path(file)),
            None => rho_config::ConfigSource::Default(self.paths.default_config_file()),
        };
        Ok(rho_config::load_config(&source)?)
    }

    /// Every component source of this run, loaded (nothing is started).
    pub fn registry(&self) -> rho_core::Registry {
        let source = match &self.config_file {
            Some(file) => rho_config::ConfigSource::Explicit(self.arg_path(file)),
            None => rho_config::ConfigSource::Default(self.paths.default_config_file()),
        };
        rho_core::Registry::load(self.paths.clone(), &source)
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
