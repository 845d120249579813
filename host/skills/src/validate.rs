//! `rho skills validate <dir>`: every problem of one skill directory.

use std::fs;
use std::path::Path;

use rho_component::{SkillMeta, SkillSource};

use crate::file::load_skill_dir;
use crate::frontmatter::SKILL_FILE;

/// Validates the skill directory at `path` and returns its metadata, or every problem found,
/// each a lower-case message.
///
/// `path` may also name the `SKILL.md` file itself (spelled exactly so); its parent directory
/// is then validated, as `skills-ref validate` does. The metadata's source is
/// [`SkillSource::Project`]: a directory validated by hand is not a configured root, and the
/// source only matters for precedence, which validation does not involve.
///
/// # Errors
///
/// The problems, when the skill is not valid.
pub fn validate_dir(path: &Path) -> Result<SkillMeta, Vec<String>> {
    let names_skill_file = path.file_name().is_some_and(|n| n == SKILL_FILE);
    let dir = match (names_skill_file, fs::metadata(path), path.parent()) {
        (true, Ok(meta), Some(parent)) if meta.is_file() => {
            if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            }
        }
        _ => path,
    };
    load_skill_dir(dir, SkillSource::Project).map_err(|e| e.problems())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn write(root: &Path, dir: &str, text: &str) -> PathBuf {
        let dir = root.join(dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SKILL_FILE), text).unwrap();
        dir
    }

    #[test]
    fn valid_dir_and_file_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = write(tmp.path(), "demo", "---\nname: demo\ndescription: d\n---\n");
        assert_eq!(validate_dir(&dir).unwrap().name, "demo");
        assert_eq!(validate_dir(&dir.join(SKILL_FILE)).unwrap().name, "demo");
    }

    #[test]
    fn lists_every_problem() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = write(
            tmp.path(),
            "demo",
            "---\nname: Demo--\ndescription: ''\nfoo: bar\n---\n",
        );
        let problems = validate_dir(&dir).unwrap_err();
        assert!(problems.len() >= 5, "{problems:?}");
        assert!(problems.iter().all(|p| !p.starts_with(char::is_uppercase)));
    }

    #[test]
    fn lowercase_skill_md_is_not_a_skill_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        fs::create_dir(&dir).unwrap();
        fs::write(
            dir.join("skill.md"),
            "---\nname: demo\ndescription: d\n---\n",
        )
        .unwrap();
        let problems = validate_dir(&dir).unwrap_err();
        assert!(problems[0].contains("missing SKILL.md"), "{problems:?}");
        let problems = validate_dir(&dir.join("skill.md")).unwrap_err();
        assert!(problems[0].contains("not a directory"), "{problems:?}");
    }

    #[test]
    fn missing_path() {
        let tmp = tempfile::tempdir().unwrap();
        let problems = validate_dir(&tmp.path().join("nope")).unwrap_err();
        assert!(problems[0].contains("does not exist"), "{problems:?}");
    }
}
