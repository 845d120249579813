//! Loose skill roots: every immediate child directory holding a `SKILL.md` is a skill.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;

use rho_component::{Diagnostic, DiagnosticCode, SkillMeta, SkillSource};

use crate::file::load_skill_dir;
use crate::frontmatter::SKILL_FILE;

/// Discovers the skills of one loose root (`~/.agents/skills`, `<project>/.rho/skills`, …).
///
/// Each immediate child that is a directory (or a link to one) and holds a `SKILL.md` entry is
/// a skill; nothing deeper is looked at. Children that are not directories, lack `SKILL.md`, or
/// are hidden (their name starts with `.`, which no valid skill name does) are skipped
/// silently. A missing root yields nothing and no diagnostic. A skill that does not validate
/// becomes an error-severity `skill-invalid` diagnostic whose path is its `SKILL.md` and whose
/// component is its directory name; its siblings still load. A root that exists but cannot be
/// listed yields one warning-severity `skill-invalid` diagnostic.
///
/// Skills come back sorted by name, diagnostics in directory-name order.
pub fn discover_root(root: &Path, source: SkillSource) -> (Vec<SkillMeta>, Vec<Diagnostic>) {
    let mut skills = Vec::new();
    let mut diagnostics = Vec::new();
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (skills, diagnostics),
        Err(e) => {
            diagnostics.push(root_unreadable(root, &e));
            return (skills, diagnostics);
        }
    };
    let mut names: Vec<OsString> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => names.push(entry.file_name()),
            Err(e) => diagnostics.push(root_unreadable(root, &e)),
        }
    }
    names.sort();
    for name in names {
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let dir = root.join(&name);
        if !fs::metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let skill_file = dir.join(SKILL_FILE);
        if fs::symlink_metadata(&skill_file).is_err() {
            continue;
        }
        match load_skill_dir(&dir, source.clone()) {
            Ok(meta) => skills.push(meta),
            Err(e) => {
                let path = std::path::absolute(&skill_file).unwrap_or(skill_file);
                diagnostics.push(
                    Diagnostic::error(DiagnosticCode::SkillInvalid, e.problems().join("; "))
                        .with_path(path)
                        .with_component(name.to_string_lossy()),
                );
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, diagnostics)
}

fn root_unreadable(root: &Path, error: &io::Error) -> Diagnostic {
    let path = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    Diagnostic::warning(
        DiagnosticCode::SkillRootUnreadable,
        format!("cannot read skill root: {error}"),
    )
    .with_path(path)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rho_component::Severity;

    use super::*;

    fn skill(root: &Path, dir: &str, name: &str) -> PathBuf {
        let dir = root.join(dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join(SKILL_FILE),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody of {name}.\n"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn missing_root_is_silent() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, diagnostics) = discover_root(&tmp.path().join("none"), SkillSource::User);
        assert!(skills.is_empty() && diagnostics.is_empty());
    }

    #[test]
    fn finds_immediate_children_only_sorted() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        skill(root, "zeta", "zeta");
        skill(root, "alpha", "alpha");
        // Not skills: nested deeper, a file, a directory without SKILL.md, SKILL.md in the root.
        skill(&root.join("group"), "nested", "nested");
        fs::write(root.join("README.md"), "# skills").unwrap();
        fs::create_dir(root.join("notes")).unwrap();
        fs::write(root.join(SKILL_FILE), "---\nname: x\n---\n").unwrap();
        // Hidden directories are skipped even with a SKILL.md.
        skill(root, ".hidden", "hidden");

        let (skills, diagnostics) = discover_root(root, SkillSource::User);
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(skills.iter().all(|s| s.source == SkillSource::User));
        assert!(skills.iter().all(|s| s.location.is_absolute()));
    }

    #[test]
    fn invalid_skills_become_diagnostics_and_siblings_load() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        skill(root, "good", "good");
        skill(root, "bad", "other");
        let broken = root.join("broken");
        fs::create_dir(&broken).unwrap();
        fs::write(broken.join(SKILL_FILE), "no frontmatter").unwrap();
        fs::create_dir_all(root.join("dir-as-file").join(SKILL_FILE)).unwrap();

        let (skills, diagnostics) = discover_root(root, SkillSource::Project);
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].name, "good");
        let components: Vec<&str> = diagnostics
            .iter()
            .map(|d| d.component.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(components, ["bad", "broken", "dir-as-file"]);
        for d in &diagnostics {
            assert_eq!(d.code, DiagnosticCode::SkillInvalid);
            assert_eq!(d.severity, Severity::Error);
            let path = d.path.as_ref().unwrap();
            assert!(path.ends_with(SKILL_FILE) && path.is_absolute(), "{path:?}");
        }
        assert!(
            diagnostics[0]
                .message
                .contains("does not match the directory name")
        );
        assert!(diagnostics[2].message.contains("not a regular file"));
    }

    #[cfg(unix)]
    #[test]
    fn directory_links_count_and_fifos_do_not_block() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        let target = skill(&elsewhere, "linked", "linked");
        let root = tmp.path().join("root");
        fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&target, root.join("linked")).unwrap();
        let fifo_dir = root.join("fifo");
        fs::create_dir(&fifo_dir).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(fifo_dir.join(SKILL_FILE))
            .status()
            .unwrap();
        assert!(status.success());

        let (skills, diagnostics) = discover_root(&root, SkillSource::User);
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].location, root.join("linked").join(SKILL_FILE));
        assert_eq!(diagnostics.len(), 1);
        assert!(diagnostics[0].message.contains("not a regular file"));
    }

    #[test]
    fn a_root_that_is_a_file_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        let (skills, diagnostics) = discover_root(&file, SkillSource::User);
        assert!(skills.is_empty());
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].severity, Severity::Warning);
    }
}
