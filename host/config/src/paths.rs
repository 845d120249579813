//! The user and project locations rho discovers components in and keeps state in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::ConfigError;

/// The parts of the process environment that decide rho's locations.
#[derive(Debug, Clone, Default)]
pub struct PathsEnv {
    /// `HOME`.
    pub home: Option<OsString>,
    /// `RHO_HOME`.
    pub rho_home: Option<OsString>,
}

impl PathsEnv {
    /// Reads `HOME` and `RHO_HOME` from the process environment.
    pub fn from_process() -> Self {
        Self {
            home: std::env::var_os("HOME"),
            rho_home: std::env::var_os("RHO_HOME"),
        }
    }
}

/// Every location rho uses for one run: user scope plus the project around `--cwd`.
#[derive(Debug, Clone)]
pub struct RhoPaths {
    /// The user's home directory (`~`), when known.
    pub home: Option<PathBuf>,
    /// `$RHO_HOME`, default `~/.rho`.
    pub rho_home: PathBuf,
    /// The project the command runs in.
    pub project: ProjectPaths,
}

/// The project: the working directory and the repository root above it.
#[derive(Debug, Clone)]
pub struct ProjectPaths {
    /// The (resolved) project directory: `--cwd` or the working directory.
    pub cwd: PathBuf,
    /// The nearest ancestor (or `cwd` itself) holding `.git`; `cwd` when there is none.
    pub root: PathBuf,
    /// `cwd` and each ancestor up to and including `root`, nearest first.
    pub chain: Vec<PathBuf>,
}

impl ProjectPaths {
    /// Resolves the project around `cwd` (which must exist).
    pub fn discover(cwd: &Path) -> Result<Self, ConfigError> {
        let cwd = dunce::canonicalize(cwd).map_err(|error| ConfigError::ProjectDir {
            path: cwd.to_path_buf(),
            error,
        })?;
        let mut chain = Vec::new();
        let mut root = None;
        for dir in cwd.ancestors() {
            chain.push(dir.to_path_buf());
            if dir.join(".git").symlink_metadata().is_ok() {
                root = Some(dir.to_path_buf());
                break;
            }
        }
        let root = match root {
            Some(root) => root,
            None => {
                // Outside a repository the project is just the directory itself: climbing to `/`
                // would make every ancestor's `.agents` a project root.
                chain.truncate(1);
                cwd.clone()
            }
        };
        Ok(Self { cwd, root, chain })
    }
}

impl RhoPaths {
    /// Resolves every location for a run in `cwd`.
    pub fn resolve(env: &PathsEnv, cwd: &Path) -> Result<Self, ConfigError> {
        let home = env
            .home
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let rho_home = match env.rho_home.as_ref().filter(|h| !h.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home.as_ref().ok_or(ConfigError::NoHome)?.join(".rho"),
        };
        let rho_home = std::path::absolute(&rho_home).unwrap_or(rho_home);
        let project = ProjectPaths::discover(cwd)?;
        Ok(Self {
            home,
            rho_home,
            project,
        })
    }

    /// `~/.agents/plugins`: the user plugin root (also the user install root).
    pub fn user_plugins_root(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| h.join(".agents").join("plugins"))
    }

    /// `<dir>/.agents/plugins` for each project directory, nearest first. A directory whose
    /// root is also the user root (the project is the home directory) is left to the user scope.
    pub fn project_plugin_roots(&self) -> Vec<PathBuf> {
        let user = self.user_plugins_root();
        self.project
            .chain
            .iter()
            .map(|dir| dir.join(".agents").join("plugins"))
            .filter(|root| Some(root) != user.as_ref())
            .collect()
    }

    /// `<repository>/.agents/plugins`: where `--scope project` installs and links go.
    pub fn project_install_root(&self) -> PathBuf {
        self.project.root.join(".agents").join("plugins")
    }

    /// Loose user skill roots, in precedence order: `~/.agents/skills`, `$RHO_HOME/skills`.
    pub fn user_skill_roots(&self) -> Vec<PathBuf> {
        let mut roots = Vec::new();
        if let Some(home) = &self.home {
            roots.push(home.join(".agents").join("skills"));
        }
        roots.push(self.rho_home.join("skills"));
        roots
    }

    /// Loose project skill roots, nearest directory first; in each, `.agents/skills` then
    /// `.rho/skills`. Roots that are user roots too (project = home) are left to the user scope.
    pub fn project_skill_roots(&self) -> Vec<PathBuf> {
        let user = self.user_skill_roots();
        self.project
            .chain
            .iter()
            .flat_map(|dir| {
                [
                    dir.join(".agents").join("skills"),
                    dir.join(".rho").join("skills"),
                ]
            })
            .filter(|root| !user.contains(root))
            .collect()
    }

    /// `$RHO_HOME/config.toml`: the default configuration file.
    pub fn default_config_file(&self) -> PathBuf {
        self.rho_home.join("config.toml")
    }

    /// `$RHO_HOME/trusted-plugins.toml`: fingerprints of the project plugins the user trusted.
    pub fn trust_file(&self) -> PathBuf {
        self.rho_home.join("trusted-plugins.toml")
    }

    /// `$RHO_HOME/credentials`: the credential store (OAuth tokens of remote MCP servers), one
    /// owner-only file per server identity. Nothing creates it until the first login.
    pub fn credentials_dir(&self) -> PathBuf {
        self.rho_home.join("credentials")
    }

    /// `$RHO_HOME/cache`: what rho can always rebuild (compiled WASM components, MCP servers'
    /// tool lists); deleting it is always safe.
    pub fn cache_dir(&self) -> PathBuf {
        self.rho_home.join("cache")
    }

    /// `$RHO_HOME/cache/mcp`: the tool cache, what each MCP server offered at its last start
    /// (`docs/mcp.md`, "Tool cache"), from which a lazy server is mounted without starting it.
    pub fn mcp_cache_dir(&self) -> PathBuf {
        self.cache_dir().join("mcp")
    }

    /// `$RHO_HOME/logs`: where the interactive session writes its log (the screen is the
    /// session's, so logs never go there).
    pub fn logs_dir(&self) -> PathBuf {
        self.rho_home.join("logs")
    }

    /// `$RHO_HOME/sdk`: the copies of `rho-plugin-sdk` that `rho plugins new` writes out, one
    /// directory per SDK version and contents, which new plugins depend on by path.
    pub fn sdk_root(&self) -> PathBuf {
        self.rho_home.join("sdk")
    }

    /// `$RHO_HOME/plugins.toml`: user-scope activation state.
    pub fn user_state_file(&self) -> PathBuf {
        self.rho_home.join("plugins.toml")
    }

    /// `<repository>/.rho/plugins.toml`: project-scope activation state.
    pub fn project_state_file(&self) -> PathBuf {
        self.project.root.join(".rho").join("plugins.toml")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> PathsEnv {
        PathsEnv {
            home: Some(home.into()),
            rho_home: None,
        }
    }

    #[test]
    fn project_chain_stops_at_repository_root() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path();
        let deep = tmp.join("repo").join("a").join("b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(tmp.join("repo").join(".git")).unwrap();
        let paths = RhoPaths::resolve(&env(&tmp.join("home")), &deep).unwrap();
        let repo = dunce::canonicalize(tmp.join("repo")).unwrap();
        assert_eq!(paths.project.root, repo);
        assert_eq!(paths.project.chain.len(), 3);
        assert_eq!(
            paths.project_plugin_roots()[2],
            repo.join(".agents/plugins")
        );
        assert_eq!(paths.project_install_root(), repo.join(".agents/plugins"));
        assert_eq!(paths.project_state_file(), repo.join(".rho/plugins.toml"));
        assert_eq!(paths.rho_home, tmp.join("home").join(".rho"));
        assert_eq!(
            paths.credentials_dir(),
            tmp.join("home").join(".rho").join("credentials")
        );
        assert_eq!(
            paths.mcp_cache_dir(),
            tmp.join("home").join(".rho").join("cache").join("mcp")
        );
    }

    #[test]
    fn outside_a_repository_the_project_is_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path();
        std::fs::create_dir_all(tmp.join("x")).unwrap();
        let paths = RhoPaths::resolve(&env(tmp), &tmp.join("x")).unwrap();
        assert_eq!(paths.project.chain.len(), 1);
        assert_eq!(
            paths.project.root,
            dunce::canonicalize(tmp.join("x")).unwrap()
        );
    }

    #[test]
    fn home_as_project_is_user_scope_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dunce::canonicalize(dir.path()).unwrap();
        let paths = RhoPaths::resolve(&env(&home), &home).unwrap();
        assert!(paths.project_plugin_roots().is_empty());
        assert!(
            !paths
                .project_skill_roots()
                .contains(&home.join(".agents/skills"))
        );
    }

    #[test]
    fn rho_home_overrides_and_missing_home_is_an_error() {
        let e = PathsEnv {
            home: None,
            rho_home: None,
        };
        assert!(matches!(
            RhoPaths::resolve(&e, Path::new("/")),
            Err(ConfigError::NoHome)
        ));
        let e = PathsEnv {
            home: None,
            rho_home: Some("/tmp/rh".into()),
        };
        assert_eq!(
            RhoPaths::resolve(&e, Path::new("/")).unwrap().rho_home,
            Path::new("/tmp/rh")
        );
    }
}
