//! The files a skill bundles besides `SKILL.md` (scripts, references, assets).

use std::fs;
use std::path::{Path, PathBuf};

use rho_component::SkillMeta;

use crate::SkillError;
use crate::body::is_builtin;
use crate::frontmatter::SKILL_FILE;

/// How many directory levels below the skill directory are listed (`a/b/c/d/file` at most).
pub const RESOURCE_MAX_DEPTH: usize = 4;

/// How many directory entries one listing examines at most, whatever `cap` is.
const SCAN_BUDGET: usize = 10_000;

/// Directories that never hold skill resources.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules"];

/// The files bundled with a skill, as paths relative to its directory, sorted, at most `cap`.
///
/// `SKILL.md` itself is left out, as are `.git` and `node_modules`. Links are not followed
/// into directories; a link to a file is listed only when its target is a regular file inside
/// the skill directory. Listing stops [`RESOURCE_MAX_DEPTH`] levels down and after a fixed
/// budget of entries, so a huge tree costs little. Unreadable directories are skipped. A
/// built-in skill has no resources on disk.
pub fn list_resources(meta: &SkillMeta, cap: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if cap == 0 || is_builtin(meta) {
        return out;
    }
    let base = meta.directory();
    let Ok(real_base) = fs::canonicalize(&base) else {
        return out;
    };
    let mut walk = Walk {
        real_base,
        cap,
        budget: SCAN_BUDGET,
        out: &mut out,
    };
    walk.dir(&base, Path::new(""), 0);
    out
}

/// Reads the bundled file at `relative` (a path [`list_resources`] gives, `/`-separated), at
/// most `max_bytes` long.
///
/// Only a file the listing (with at most `listed` entries) holds is read, so nothing outside
/// the skill directory, no `.git`, nothing deeper than [`RESOURCE_MAX_DEPTH`] and no link out of
/// the directory is ever opened; the read itself takes regular files only and refuses one
/// longer than the cap before reading a byte.
pub fn read_resource(
    meta: &SkillMeta,
    relative: &str,
    listed: usize,
    max_bytes: u64,
) -> Result<Vec<u8>, SkillError> {
    let missing = || SkillError::NoSuchResource {
        skill: meta.name.clone(),
        path: relative.to_owned(),
    };
    let wanted = Path::new(relative);
    if !list_resources(meta, listed).iter().any(|p| p == wanted) {
        return Err(missing());
    }
    let path = meta.directory().join(wanted);
    // The listing checked a link's target; the target is read, never the link again, and it
    // is checked again here: a link swapped since the listing cannot lead out of the folder.
    let real = fs::canonicalize(&path).map_err(|_| missing())?;
    let base = fs::canonicalize(meta.directory()).map_err(|_| missing())?;
    if !real.starts_with(&base) {
        return Err(missing());
    }
    rho_component::read_regular(&real, max_bytes).map_err(|source| SkillError::ResourceRead {
        skill: meta.name.clone(),
        source,
    })
}

struct Walk<'a> {
    real_base: PathBuf,
    cap: usize,
    budget: usize,
    out: &'a mut Vec<PathBuf>,
}

impl Walk<'_> {
    fn done(&self) -> bool {
        self.out.len() >= self.cap || self.budget == 0
    }

    /// Visits `dir` (at `relative` below the base). Entries are taken in name order and
    /// directories entered as they come, which yields paths already in sorted order.
    fn dir(&mut self, dir: &Path, relative: &Path, depth: usize) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort();
        for name in names {
            if self.done() {
                return;
            }
            self.budget -= 1;
            if depth == 0 && name == SKILL_FILE {
                continue;
            }
            let path = dir.join(&name);
            let rel = relative.join(&name);
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            let kind = meta.file_type();
            if kind.is_dir() {
                let skipped = SKIPPED_DIRS.iter().any(|s| name == *s);
                if !skipped && depth < RESOURCE_MAX_DEPTH {
                    self.dir(&path, &rel, depth + 1);
                }
            } else if kind.is_file() || (kind.is_symlink() && self.link_to_inner_file(&path)) {
                self.out.push(rel);
            }
        }
    }

    fn link_to_inner_file(&self, path: &Path) -> bool {
        fs::canonicalize(path).is_ok_and(|target| {
            target.starts_with(&self.real_base) && fs::metadata(&target).is_ok_and(|m| m.is_file())
        })
    }
}

#[cfg(test)]
mod tests {
    use rho_component::SkillSource;

    use super::*;
    use crate::test_meta::skill_meta;

    fn meta_for(dir: &Path) -> SkillMeta {
        skill_meta("demo", dir.join(SKILL_FILE), SkillSource::User)
    }

    fn touch(path: &Path) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, "x").unwrap();
    }

    fn listed(dir: &Path, cap: usize) -> Vec<String> {
        list_resources(&meta_for(dir), cap)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn lists_sorted_relative_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        for f in [
            "SKILL.md",
            "scripts/run.py",
            "a.txt",
            "a/z.txt",
            "references/REFERENCE.md",
            ".git/config",
            "node_modules/x/index.js",
            "assets/nested/SKILL.md",
            "1/2/3/4/deep.txt",
            "1/2/3/4/5/too-deep.txt",
        ] {
            touch(&dir.join(f));
        }
        assert_eq!(
            listed(&dir, 100),
            [
                "1/2/3/4/deep.txt",
                "a/z.txt",
                "a.txt",
                "assets/nested/SKILL.md",
                "references/REFERENCE.md",
                "scripts/run.py",
            ]
        );
        assert_eq!(listed(&dir, 2), ["1/2/3/4/deep.txt", "a/z.txt"]);
        assert!(listed(&dir, 0).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn links_never_lead_outside() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        touch(&dir.join("SKILL.md"));
        touch(&dir.join("real.txt"));
        touch(&tmp.path().join("outside/secret.txt"));
        symlink(dir.join("real.txt"), dir.join("inner-link.txt")).unwrap();
        symlink(
            tmp.path().join("outside/secret.txt"),
            dir.join("outer-link.txt"),
        )
        .unwrap();
        symlink(tmp.path().join("outside"), dir.join("outer-dir")).unwrap();
        symlink(&dir, dir.join("loop")).unwrap();
        symlink(tmp.path().join("missing"), dir.join("dangling")).unwrap();
        assert_eq!(listed(&dir, 100), ["inner-link.txt", "real.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn only_listed_files_are_read_and_within_the_cap() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        touch(&dir.join("SKILL.md"));
        touch(&dir.join("scripts/run.sh"));
        fs::write(dir.join("big.bin"), [0u8; 64]).unwrap();
        touch(&tmp.path().join("secret.txt"));
        symlink(tmp.path().join("secret.txt"), dir.join("out.txt")).unwrap();
        let meta = meta_for(&dir);
        assert_eq!(
            read_resource(&meta, "scripts/run.sh", 100, 10).unwrap(),
            b"x"
        );
        for refused in [
            "out.txt",
            "../secret.txt",
            "SKILL.md",
            "/etc/passwd",
            "scripts",
        ] {
            assert!(
                matches!(
                    read_resource(&meta, refused, 100, 10),
                    Err(SkillError::NoSuchResource { .. })
                ),
                "{refused}"
            );
        }
        assert!(matches!(
            read_resource(&meta, "big.bin", 100, 10),
            Err(SkillError::ResourceRead { .. })
        ));
    }

    #[test]
    fn built_ins_and_missing_dirs_have_none() {
        let meta = SkillMeta {
            location: crate::builtin_location("demo"),
            source: SkillSource::BuiltIn,
            ..meta_for(Path::new("/"))
        };
        assert!(list_resources(&meta, 10).is_empty());
        assert!(listed(Path::new("/nonexistent/rho/skill"), 10).is_empty());
    }
}
