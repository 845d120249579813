//! The instructions of a skill: its Markdown body, read from disk when it is activated.

use std::path::{Path, PathBuf};

use rho_component::{SkillMeta, SkillSource};

use crate::error::SkillError;
use crate::file::{open_regular, read_capped};
use crate::frontmatter::{BODY_MAX_BYTES, HEAD_MAX_BYTES, SKILL_FILE, split};
use crate::parse::split_error;

/// Appended to a body cut at [`BODY_MAX_BYTES`].
pub const TRUNCATION_MARKER: &str = "\n\n[rho: the rest of this skill was cut; it exceeds 1 MiB]";

/// The scheme-like prefix of built-in skill locations.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// The pseudo-location of a built-in skill: `builtin:/<name>/SKILL.md`. It never names a file.
pub fn builtin_location(name: &str) -> PathBuf {
    PathBuf::from(format!("{BUILTIN_PREFIX}/{name}/{SKILL_FILE}"))
}

/// Whether the skill lives in the binary rather than on disk.
pub fn is_builtin(meta: &SkillMeta) -> bool {
    meta.source == SkillSource::BuiltIn || is_builtin_location(&meta.location)
}

pub(crate) fn is_builtin_location(location: &Path) -> bool {
    location
        .as_os_str()
        .as_encoded_bytes()
        .starts_with(BUILTIN_PREFIX.as_bytes())
}

/// Reads the body of an on-disk skill: the Markdown after the closing `---` line, trimmed.
///
/// At most [`BODY_MAX_BYTES`] of body are returned; a longer body is cut (at a character
/// boundary) and ends with [`TRUNCATION_MARKER`]. The file is read afresh, so edits made since
/// discovery show. Built-in skills hold their text in memory: use [`crate::split_body`].
///
/// # Errors
///
/// [`SkillError::NotOnDisk`] for a built-in skill; otherwise the file errors of
/// [`crate::load_skill_dir`], frontmatter delimiter errors and [`SkillError::NotUtf8`].
pub fn read_body(meta: &SkillMeta) -> Result<String, SkillError> {
    if is_builtin(meta) {
        return Err(SkillError::NotOnDisk {
            name: meta.name.clone(),
        });
    }
    let path = &meta.location;
    let mut file = open_regular(path)?;
    read_body_from(&mut file, path)
}

/// Reads the body from an already opened `SKILL.md` (for callers that open it themselves under
/// their own containment rules, such as plugin skills); `path` names it in errors. Same caps
/// and result as [`read_body`].
///
/// # Errors
///
/// Read errors, frontmatter delimiter errors and [`SkillError::NotUtf8`].
pub fn read_body_from(file: &mut impl std::io::Read, path: &Path) -> Result<String, SkillError> {
    let bytes = read_capped(file, HEAD_MAX_BYTES + BODY_MAX_BYTES + 1)
        .map_err(|e| SkillError::io(path, e))?;
    let parts = split(&bytes).map_err(|e| split_error(e, path.to_path_buf()))?;
    body_text(parts.body, parts.body_offset, path)
}

fn body_text(body: &[u8], offset: usize, path: &Path) -> Result<String, SkillError> {
    let truncated = body.len() > BODY_MAX_BYTES;
    let kept = &body[..body.len().min(BODY_MAX_BYTES)];
    let text = match std::str::from_utf8(kept) {
        Ok(text) => text,
        // Cut inside a character: drop its first bytes.
        Err(e) if truncated && e.error_len().is_none() => {
            std::str::from_utf8(&kept[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(e) => {
            return Err(SkillError::NotUtf8 {
                path: path.to_path_buf(),
                offset: offset + e.valid_up_to(),
            });
        }
    };
    let mut out = text.trim().to_owned();
    if truncated {
        out.push_str(TRUNCATION_MARKER);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::io::Write;

    use super::*;
    use crate::test_meta::skill_meta;
    use crate::{parse_skill, split_body};

    fn meta_at(location: PathBuf, source: SkillSource) -> SkillMeta {
        skill_meta("demo", location, source)
    }

    #[test]
    fn reads_the_trimmed_body() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        fs::write(
            &path,
            "\u{feff}---\r\nname: demo\r\n---\r\n\r\n# Demo\r\n\r\n---\r\nMore.\r\n\r\n",
        )
        .unwrap();
        let body = read_body(&meta_at(path, SkillSource::User)).unwrap();
        assert_eq!(body, "# Demo\r\n\r\n---\r\nMore.");
    }

    #[test]
    fn caps_a_huge_body_with_a_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        let mut file = fs::File::create(&path).unwrap();
        file.write_all(b"---\nname: demo\n---\n").unwrap();
        // Two-byte characters, so the cut falls inside one.
        let chunk = "\u{e9}".repeat(1000) + "x";
        for _ in 0..(BODY_MAX_BYTES / chunk.len() + 10) {
            file.write_all(chunk.as_bytes()).unwrap();
        }
        // And a sparse gigabyte after that: never read.
        file.set_len(1 << 30).unwrap();
        drop(file);
        let body = read_body(&meta_at(path, SkillSource::User)).unwrap();
        assert!(body.ends_with(TRUNCATION_MARKER));
        let kept = body.len() - TRUNCATION_MARKER.len();
        assert!(
            kept <= BODY_MAX_BYTES && kept > BODY_MAX_BYTES - 4,
            "{kept}"
        );
    }

    #[test]
    fn body_exactly_at_the_cap_is_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        let body = "b".repeat(BODY_MAX_BYTES);
        fs::write(&path, format!("---\nname: demo\n---\n{body}")).unwrap();
        assert_eq!(read_body(&meta_at(path, SkillSource::User)).unwrap(), body);
    }

    #[test]
    fn invalid_utf8_body_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        fs::write(&path, b"---\nname: demo\n---\nok \xff bad").unwrap();
        let e = read_body(&meta_at(path, SkillSource::User)).unwrap_err();
        assert!(matches!(e, SkillError::NotUtf8 { offset: 22, .. }), "{e}");
    }

    #[test]
    fn built_ins_are_not_read_from_disk() {
        let location = builtin_location("demo");
        assert_eq!(location, PathBuf::from("builtin:/demo/SKILL.md"));
        let e = read_body(&meta_at(location.clone(), SkillSource::BuiltIn)).unwrap_err();
        assert!(matches!(e, SkillError::NotOnDisk { .. }));
        // Even with a wrong source, a builtin: location never reaches the filesystem.
        assert!(read_body(&meta_at(location, SkillSource::User)).is_err());
    }

    #[test]
    fn built_in_text_in_memory() {
        let text = "---\nname: demo\ndescription: A demo.\n---\n\n# Demo\n";
        let meta = parse_skill(
            text.as_bytes(),
            "demo",
            builtin_location("demo"),
            SkillSource::BuiltIn,
        )
        .unwrap();
        assert!(is_builtin(&meta));
        assert_eq!(meta.directory(), PathBuf::from("builtin:/demo"));
        assert_eq!(split_body(text), Some("# Demo"));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        let ok = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(ok.success());
        let e = read_body(&meta_at(path, SkillSource::User)).unwrap_err();
        assert!(matches!(e, SkillError::NotRegularFile { .. }));
    }
}
