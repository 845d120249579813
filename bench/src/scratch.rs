//! A uniquely named directory under the system temp dir, removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Distinguishes directories created by one process.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// The directory one measurement lays out its `home/` and `project/` in.
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates a fresh directory whose name no other run can hold (pid, clock, counter).
    pub fn new(label: &str) -> Result<Self, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let name = format!(
            "rho-bench-{label}-{}-{nanos:09}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        // `create_dir`, not `create_dir_all`: an existing directory means a name clash, not reuse.
        std::fs::create_dir(&path)
            .map_err(|e| format!("cannot create scratch directory {}: {e}", path.display()))?;
        Ok(Self { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates (with parents) and returns a directory inside the scratch directory.
    pub fn dir(&self, relative: &str) -> Result<PathBuf, String> {
        let dir = self.path.join(relative);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(dir)
    }
}

impl Scratch {
    /// Creates a user's `home/` and an empty `project/` (the working directory and `--cwd`)
    /// inside; returns them with `RHO_HOME`, `home/.rho` (not created).
    pub fn layout(&self) -> Result<(PathBuf, PathBuf, PathBuf), String> {
        let home = self.dir("home")?;
        let rho_home = home.join(".rho");
        Ok((home, self.dir("project")?, rho_home))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            eprintln!(
                "rho-bench: warning: cannot remove {}: {e}",
                self.path.display()
            );
        }
    }
}
