//! The workspace's files for the `@` palette: walked once, in the background, the way `git`
//! sees them (`.gitignore`, `.ignore` and hidden files left out), bounded by
//! [`MAX_FILES`] and [`WALK_BUDGET`] so a huge tree or a slow disk never holds the screen.

use std::path::Path;
use std::time::{Duration, Instant};

/// Files listed at most.
pub const MAX_FILES: usize = 20_000;
/// How long the walk may take.
pub const WALK_BUDGET: Duration = Duration::from_secs(2);

/// The files under `root`, as `/`-separated paths relative to it, sorted; symbolic links are
/// not followed, and special files (FIFOs, devices, sockets) are left out.
pub fn list(root: &Path) -> Vec<String> {
    let started = Instant::now();
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .follow_links(false)
        .require_git(false)
        .build();
    for entry in walk {
        if files.len() >= MAX_FILES || started.elapsed() > WALK_BUDGET {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(text) = relative.to_str() else {
            continue;
        };
        files.push(text.replace(std::path::MAIN_SEPARATOR, "/"));
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_what_git_would_and_nothing_special() {
        // Not hidden (a `.tmp` name), so the walk's own rules see only the files below.
        let temp = tempfile::Builder::new()
            .prefix("rho-tui-files-")
            .tempdir()
            .unwrap();
        let dir = temp.path();
        std::fs::create_dir_all(dir.join("src")).unwrap_or_default();
        std::fs::create_dir_all(dir.join("target")).unwrap_or_default();
        for (path, text) in [
            ("src/main.rs", "fn main() {}"),
            ("README.md", "# x"),
            ("target/big.bin", "x"),
            (".gitignore", "target/\n"),
            (".hidden", "x"),
        ] {
            std::fs::write(dir.join(path), text).unwrap_or_default();
        }
        let files = list(dir);
        assert_eq!(files, ["README.md", "src/main.rs"]);
    }
}
