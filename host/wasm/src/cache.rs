//! The compiled-artifact cache: one file per component under rho's own cache directory, keyed
//! by the SHA-256 of the component's bytes and of the engine's compatibility fingerprint,
//! written atomically and checked against an embedded checksum before wasmtime maps it.
//!
//! File layout: the payload (what `Component::serialize` produced, an ELF image that starts
//! the file so wasmtime can map it page-aligned), then a 24-byte trailer: payload length
//! (8 bytes, little endian), CRC-32 of the payload (4 bytes), format version (4 bytes, little
//! endian), `RHOCWASM` (8 bytes).
//!
//! A hit is read once to check the trailer, then handed to wasmtime by path, which maps it
//! instead of copying it into fresh memory: for the 2.8 MB artifact of the example plugin
//! that is about 0.15 ms instead of 1.2 ms.
//!
//! The directory is kept under [`MAX_CACHE_BYTES`]: after each write the least recently used
//! entries go (a hit refreshes an entry's mtime at most once a day), as do temporary files a
//! crashed writer left.
//!
//! The key needs SHA-256: it binds an artifact to the exact component, whoever wrote it. The
//! payload only needs protecting from accidents (the directory is owner-only and files are
//! renamed into place whole), so a CRC-32 checks it: hashing a multi-megabyte artifact with
//! SHA-256 cost more than the rest of a cached load together.

use std::fs;
use std::hash::Hasher;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::engine::CONFIG_TAG;
use crate::error::WasmError;

const MAGIC: &[u8; 8] = b"RHOCWASM";
const FORMAT: u32 = 3;
const TRAILER_LEN: usize = 8 + 4 + 4 + MAGIC.len();

/// The most the cache directory may hold; older entries are removed past it.
pub const MAX_CACHE_BYTES: u64 = 512 * 1024 * 1024;

/// The largest cache entry read: no sound entry is larger than the whole cache. A larger file
/// is a miss (and replaced by the next compile).
const ENTRY_MAX_BYTES: u64 = MAX_CACHE_BYTES;

/// How stale an entry's mtime may get before a hit refreshes it.
const TOUCH_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Age after which a temporary file is a crashed writer's leftover.
const STALE_TMP_AFTER: Duration = Duration::from_secs(60 * 60);

/// Temporary-file names are unique per process and write.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// The cache directory and the engine fingerprint every key includes.
#[derive(Debug)]
pub(crate) struct ArtifactCache {
    dir: PathBuf,
    fingerprint: [u8; 32],
}

/// Feeds `Hash` output into SHA-256, so the fingerprint is stable across processes (unlike
/// `DefaultHasher`, whose algorithm may change between Rust releases).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        // Never used: the digest is read with `finalize`.
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl ArtifactCache {
    /// Opens (creating it if needed) the cache directory for `engine`.
    pub(crate) fn open(dir: PathBuf, engine: &Engine) -> Result<Self, WasmError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            // Only rho may write here: the files are deserialized as trusted machine code.
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        builder.create(&dir).map_err(|source| WasmError::CacheDir {
            path: dir.clone(),
            source,
        })?;
        check_private(&dir)?;
        let mut hasher = ShaHasher(Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
        hasher.write(CONFIG_TAG.as_bytes());
        Ok(Self {
            dir,
            fingerprint: hasher.0.finalize().into(),
        })
    }

    /// The file that holds (or will hold) the artifact of `bytes`.
    pub(crate) fn path_for(&self, bytes: &[u8]) -> PathBuf {
        let mut key = Sha256::new();
        key.update(self.fingerprint);
        // Another file format is another key: old files are never read, only evicted.
        key.update(FORMAT.to_le_bytes());
        key.update(bytes);
        self.dir.join(format!("{}.cwasm", hex(&key.finalize())))
    }

    /// The cached component at `path`, if there is a sound one. Anything else (no file, a
    /// truncated or corrupt file, an artifact another wasmtime build wrote) is a miss; the
    /// compile that follows replaces the file (never deleted here: another process may just
    /// have renamed a good one into place).
    pub(crate) fn get(&self, engine: &Engine, path: &Path) -> Option<Component> {
        // Bounded, and refused unopened when it is not a regular file (a FIFO would block).
        let data = rho_component::read_regular(path, ENTRY_MAX_BYTES).ok()?;
        if verified_payload(&data).is_none() {
            tracing::warn!(path = %path.display(), "ignoring a corrupt wasm cache entry");
            return None;
        }
        drop(data);
        // SAFETY: `Component::deserialize_file` maps the file as native code without
        // validating it, so it must be an artifact wasmtime itself produced for a compatible
        // engine, and must not change while it is mapped. It is, and it does not: the file
        // lives in rho's own cache directory (owner-only, checked by `open`), is only ever
        // written by `put` below from `Component::serialize` output via a temporary file, an
        // fsync and an atomic rename (so a mapped file is never rewritten in place: a
        // replacement or a removal gives a new inode and leaves the mapping intact), carries
        // the length and a CRC-32 of that exact output which were just checked (so a
        // truncated, torn or bit-flipped file is rejected above; a concurrent replacement
        // between the check and the mapping is another rho's equally sound artifact for the
        // same key), and its name includes the engine's compatibility hash; wasmtime
        // additionally checks its own version and configuration header and errors on a
        // mismatch. Whoever can forge a file there with a matching digest can already write
        // to the user's files and replace rho itself. This assumes a local file system, where
        // an unlinked file stays mapped: on NFS another host's eviction could remove pages
        // under a running session (`$RHO_HOME` on a network share is not supported).
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize_file(engine, path) };
        match component {
            Ok(component) => {
                touch_if_stale(path);
                Some(component)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring an incompatible wasm cache entry");
                None
            }
        }
    }

    /// Stores the compiled `component` at `path`, atomically. Failures are logged, not
    /// returned: a cache that cannot be written only costs a later recompile.
    pub(crate) fn put(&self, component: &Component, path: &Path) {
        let payload = match component.serialize() {
            Ok(payload) => payload,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialize a compiled wasm component");
                return;
            }
        };
        if let Err(e) = self.write_atomically(path, &payload) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write a wasm cache entry");
        }
        self.evict(MAX_CACHE_BYTES, path);
    }

    /// Removes the least recently used entries until the directory holds at most `max` bytes
    /// (never `keep`, the entry just written), and temporary files older than an hour.
    fn evict(&self, max: u64, keep: &Path) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut files = Vec::new();
        let mut total: u64 = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(".tmp-") {
                if now.duration_since(modified).unwrap_or_default() > STALE_TMP_AFTER {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            total = total.saturating_add(meta.len());
            if path != keep {
                files.push((modified, meta.len(), path));
            }
        }
        files.sort();
        for (_, len, path) in files {
            if total <= max {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                tracing::debug!(path = %path.display(), "evicted a wasm cache entry");
                total = total.saturating_sub(len);
            }
        }
    }

    fn write_atomically(&self, path: &Path, payload: &[u8]) -> std::io::Result<()> {
        let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!(".tmp-{}-{seq}.cwasm", std::process::id()));
        let result = (|| {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            file.write_all(payload)?;
            file.write_all(&trailer(payload))?;
            file.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// Marks a hit as recently used, at most once a day (eviction goes by mtime).
fn touch_if_stale(path: &Path) {
    let stale = fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > TOUCH_AFTER);
    // A read-only handle may set the times of a file its user owns.
    if stale && let Ok(file) = fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Refuses a cache directory that someone else could write to (rho only sets the mode when it
/// creates the directory): a symbolic link, or one not owned by this user, or one writable by
/// its group or others.
fn check_private(dir: &Path) -> Result<(), WasmError> {
    let unsafe_dir = |reason: &str| WasmError::CacheDirUnsafe {
        path: dir.to_path_buf(),
        reason: reason.to_owned(),
    };
    let meta = fs::symlink_metadata(dir).map_err(|source| WasmError::CacheDir {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory (a symbolic link?)"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(unsafe_dir("another user owns it"));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(unsafe_dir("its group or other users may write to it"));
        }
    }
    Ok(())
}

/// The trailer that follows `payload` in its cache file.
fn trailer(payload: &[u8]) -> [u8; TRAILER_LEN] {
    let mut trailer = [0; TRAILER_LEN];
    let (length, rest) = trailer.split_at_mut(8);
    let (checksum, rest) = rest.split_at_mut(4);
    let (format, magic) = rest.split_at_mut(4);
    length.copy_from_slice(&(payload.len() as u64).to_le_bytes());
    checksum.copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    format.copy_from_slice(&FORMAT.to_le_bytes());
    magic.copy_from_slice(MAGIC);
    trailer
}

/// The payload of a cache file whose trailer, length and checksum check out.
fn verified_payload(data: &[u8]) -> Option<&[u8]> {
    let (payload, trailer) = data.split_at_checked(data.len().checked_sub(TRAILER_LEN)?)?;
    let (length, rest) = trailer.split_at(8);
    let (checksum, rest) = rest.split_at(4);
    let (format, magic) = rest.split_at(4);
    if magic != MAGIC || format != FORMAT.to_le_bytes() {
        return None;
    }
    let length = u64::from_le_bytes(length.try_into().ok()?);
    let checksum = u32::from_le_bytes(checksum.try_into().ok()?);
    (payload.len() as u64 == length && crc32fast::hash(payload) == checksum).then_some(payload)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_checked_against_their_trailer() {
        let payload = b"not really machine code";
        let mut file = payload.to_vec();
        file.extend_from_slice(&trailer(payload));
        assert_eq!(verified_payload(&file), Some(&payload[..]));

        let mut flipped = file.clone();
        flipped[0] ^= 1;
        assert_eq!(verified_payload(&flipped), None);
        assert_eq!(verified_payload(&file[..file.len() - 1]), None);
        assert_eq!(verified_payload(&file[1..]), None);
        assert_eq!(verified_payload(&file[..10]), None);
        assert_eq!(verified_payload(&[]), None);
        let mut other_format = file.clone();
        other_format[payload.len() + 12] = 2;
        assert_eq!(verified_payload(&other_format), None);
        // An empty payload is well-formed here (wasmtime rejects it later).
        assert_eq!(verified_payload(&trailer(b"")), Some(&b""[..]));
    }

    #[cfg(unix)]
    #[test]
    fn shared_or_linked_directories_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let engine = Engine::default();
        let root = tempfile::tempdir().unwrap();
        let private = root.path().join("private");
        ArtifactCache::open(private.clone(), &engine).unwrap();
        assert_eq!(
            fs::metadata(&private).unwrap().permissions().mode() & 0o777,
            0o700
        );

        let shared = root.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
        let e = ArtifactCache::open(shared.clone(), &engine).unwrap_err();
        assert!(e.to_string().contains("other users may write"), "{e}");

        let link = root.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        let e = ArtifactCache::open(link, &engine).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    #[test]
    fn eviction_removes_the_least_recently_used_entries_and_stale_temporaries() {
        let root = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::open(root.path().join("c"), &Engine::default()).unwrap();
        let dir = root.path().join("c");
        let day = Duration::from_secs(24 * 60 * 60);
        let now = SystemTime::now();
        let file = |name: &str, age_days: u32| {
            let path = dir.join(name);
            fs::write(&path, vec![0u8; 1000]).unwrap();
            let file = fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.set_modified(now - day * age_days).unwrap();
            path
        };
        let oldest = file("a.cwasm", 3);
        let middle = file("b.cwasm", 2);
        let newest = file("c.cwasm", 1);
        let just_written = file("d.cwasm", 4);
        let stale_tmp = file(".tmp-1-1.cwasm", 1);
        let fresh_tmp = file(".tmp-1-2.cwasm", 0);
        // 4,000 bytes of entries, 2,000 allowed: the two least recently used go, except the
        // one just written.
        cache.evict(2000, &just_written);
        assert!(!oldest.exists() && !middle.exists());
        assert!(newest.exists() && just_written.exists());
        assert!(!stale_tmp.exists() && fresh_tmp.exists());
    }

    #[test]
    fn a_hit_refreshes_a_stale_mtime_only() {
        let dir = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(24 * 60 * 60);
        let now = SystemTime::now();
        let mtime = |path: &Path| fs::metadata(path).unwrap().modified().unwrap();
        let stale = dir.path().join("stale.cwasm");
        let fresh = dir.path().join("fresh.cwasm");
        for (path, age) in [(&stale, day * 2), (&fresh, day / 2)] {
            fs::write(path, b"x").unwrap();
            fs::File::open(path)
                .unwrap()
                .set_modified(now - age)
                .unwrap();
        }
        let fresh_before = mtime(&fresh);
        touch_if_stale(&stale);
        touch_if_stale(&fresh);
        assert!(now.duration_since(mtime(&stale)).unwrap_or_default() < day / 24);
        assert_eq!(mtime(&fresh), fresh_before);
    }

    #[test]
    fn hex_is_lowercase_and_two_digits_per_byte() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
