//! Reading `SKILL.md` from disk without ever blocking or reading more than needed.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rho_component::{FileError, RegularFile, SkillMeta, SkillSource};

use crate::error::SkillError;
use crate::frontmatter::{HEAD_MAX_BYTES, SKILL_FILE};
use crate::parse::parse_skill;

/// Reads the beginning of a `SKILL.md`: at most [`HEAD_MAX_BYTES`], enough for the largest
/// frontmatter accepted and its delimiter lines, so discovery never reads a large body.
///
/// # Errors
///
/// Whatever the reader returns.
pub fn read_skill_head(file: &mut impl Read) -> io::Result<Vec<u8>> {
    read_capped(file, HEAD_MAX_BYTES)
}

pub(crate) fn read_capped(file: &mut impl Read, cap: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(cap.min(8 * 1024));
    let limit = u64::try_from(cap).unwrap_or(u64::MAX);
    file.take(limit).read_to_end(&mut head)?;
    Ok(head)
}

/// Opens `path` for reading only if it is (or links to) a regular file, through rho's one file
/// reader ([`RegularFile`]): the type is checked before opening, the open never blocks, and the
/// opened descriptor is checked again. No cap on the length: callers read only a capped head.
pub(crate) fn open_regular(path: &Path) -> Result<File, SkillError> {
    match RegularFile::open(path, u64::MAX) {
        Ok(opened) => Ok(opened.into_file()),
        Err(FileError::NotFound { .. }) => Err(SkillError::NotFound { path: path.into() }),
        Err(FileError::NotRegular { .. } | FileError::TooLarge { .. }) => {
            Err(SkillError::NotRegularFile { path: path.into() })
        }
        Err(FileError::Io { error, .. }) => Err(SkillError::io(path, error)),
    }
}

/// The directory made absolute (without resolving links) and its name. A path ending in `..`
/// has no name of its own, so that one case is canonicalized.
fn absolute_dir(dir: &Path) -> Result<(PathBuf, String), SkillError> {
    let mut absolute = std::path::absolute(dir).map_err(|e| SkillError::io(dir, e))?;
    if absolute.file_name().is_none() {
        absolute = fs::canonicalize(&absolute).map_err(|e| SkillError::io(dir, e))?;
    }
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((absolute, name))
}

/// Loads the skill in `dir`: checks that `dir/SKILL.md` is a regular file (links are followed),
/// reads its head and validates it. The `location` of the result is the absolute path of the
/// `SKILL.md`, made absolute without resolving symbolic links.
///
/// # Errors
///
/// [`SkillError::NotFound`] or [`SkillError::NotADirectory`] for a bad `dir`,
/// [`SkillError::MissingSkillFile`], [`SkillError::NotRegularFile`], [`SkillError::Io`], and
/// everything [`parse_skill`] returns.
pub fn load_skill_dir(dir: &Path, source: SkillSource) -> Result<SkillMeta, SkillError> {
    let (dir, dir_name) = absolute_dir(dir)?;
    let dir_meta = fs::metadata(&dir).map_err(|e| SkillError::io(&dir, e))?;
    if !dir_meta.is_dir() {
        return Err(SkillError::NotADirectory { path: dir });
    }
    let location = dir.join(SKILL_FILE);
    let mut file = match open_regular(&location) {
        Ok(file) => file,
        Err(SkillError::NotFound { .. }) if fs::symlink_metadata(&location).is_err() => {
            return Err(SkillError::MissingSkillFile { dir });
        }
        Err(e) => return Err(e),
    };
    let head = read_skill_head(&mut file).map_err(|e| SkillError::io(&location, e))?;
    parse_skill(&head, &dir_name, location, source)
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    const VALID: &str = "---\nname: demo\ndescription: A demo.\n---\nBody.\n";

    fn skill_dir(root: &Path, name: &str, text: &str) -> PathBuf {
        let dir = root.join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SKILL_FILE), text).unwrap();
        dir
    }

    #[test]
    fn loads_with_an_absolute_location() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = skill_dir(tmp.path(), "demo", VALID);
        let meta = load_skill_dir(&dir, SkillSource::Project).unwrap();
        assert_eq!(meta.location, dir.join("SKILL.md"));
        assert!(meta.location.is_absolute());
        assert_eq!(meta.directory(), dir);
        let dotted = dir.join("..").join("demo").join(".");
        let meta = load_skill_dir(&dotted, SkillSource::Project).unwrap();
        assert!(meta.location.is_absolute());
    }

    #[test]
    fn a_path_ending_in_dotdot_uses_the_real_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = skill_dir(tmp.path(), "demo", VALID);
        fs::create_dir(dir.join("sub")).unwrap();
        let meta = load_skill_dir(&dir.join("sub").join(".."), SkillSource::User).unwrap();
        assert_eq!(meta.name, "demo");
    }

    #[test]
    fn read_head_stops_at_the_cap() {
        let big = vec![b'x'; 10 * HEAD_MAX_BYTES];
        let head = read_skill_head(&mut big.as_slice()).unwrap();
        assert_eq!(head.len(), HEAD_MAX_BYTES);
        let small = read_skill_head(&mut VALID.as_bytes()).unwrap();
        assert_eq!(small, VALID.as_bytes());
    }

    #[test]
    fn huge_body_is_not_read_at_discovery() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = skill_dir(tmp.path(), "demo", VALID);
        // A sparse 1 GiB body: only the head is read, so this is instant and uses no memory.
        let file = OpenOptions::new()
            .append(true)
            .open(dir.join(SKILL_FILE))
            .unwrap();
        file.set_len(1 << 30).unwrap();
        let started = Instant::now();
        let meta = load_skill_dir(&dir, SkillSource::User);
        assert!(meta.is_ok(), "{meta:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn ten_megabyte_frontmatter_on_disk_hits_the_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let text = format!(
            "---\nname: demo\ndescription: d\nlicense: {}\n---\n",
            "x".repeat(10 << 20)
        );
        let dir = skill_dir(tmp.path(), "demo", &text);
        let e = load_skill_dir(&dir, SkillSource::User).unwrap_err();
        assert!(matches!(e, SkillError::FrontmatterTooLarge { .. }), "{e}");
        assert!(
            e.to_string().ends_with("frontmatter exceeds 65536 bytes"),
            "{e}"
        );
    }

    #[test]
    fn missing_and_wrong_kinds() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_skill_dir(&tmp.path().join("nope"), SkillSource::User),
            Err(SkillError::NotFound { .. })
        ));
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(matches!(
            load_skill_dir(&empty, SkillSource::User),
            Err(SkillError::MissingSkillFile { .. })
        ));
        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            load_skill_dir(&file, SkillSource::User),
            Err(SkillError::NotADirectory { .. })
        ));
        let dir_named_skill_md = tmp.path().join("dirskill");
        fs::create_dir_all(dir_named_skill_md.join(SKILL_FILE)).unwrap();
        let e = load_skill_dir(&dir_named_skill_md, SkillSource::User).unwrap_err();
        assert!(matches!(e, SkillError::NotRegularFile { .. }), "{e}");
        assert!(e.to_string().ends_with("SKILL.md is not a regular file"));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_to_regular_files_are_followed_and_dangling_ones_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.md");
        fs::write(&real, VALID).unwrap();
        let dir = tmp.path().join("demo");
        fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&real, dir.join(SKILL_FILE)).unwrap();
        let meta = load_skill_dir(&dir, SkillSource::User).unwrap();
        assert_eq!(meta.location, dir.join(SKILL_FILE));

        let dangling = tmp.path().join("dangling");
        fs::create_dir(&dangling).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("gone"), dangling.join(SKILL_FILE)).unwrap();
        assert!(matches!(
            load_skill_dir(&dangling, SkillSource::User),
            Err(SkillError::NotFound { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn fifo_does_not_block() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        fs::create_dir(&dir).unwrap();
        let fifo = dir.join(SKILL_FILE);
        let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success(), "mkfifo failed");
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let probe = dir.clone();
        // Run on a thread so a regression fails the test instead of hanging it.
        std::thread::spawn(move || {
            let _ = tx.send(load_skill_dir(&probe, SkillSource::User).map(|m| m.name));
        });
        let result = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(
            matches!(result, Err(SkillError::NotRegularFile { .. })),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        // Opening the FIFO directly through the helper does not block either.
        assert!(matches!(
            open_regular(&fifo),
            Err(SkillError::NotRegularFile { .. })
        ));
    }
}
