//! The compiled-artifact cache: one file per component under rho's own cache directory, keyed
//! by the SHA-256 of the component's bytes and of the engine's compatibility fingerprint,
//! written atomically and checked against an embedded checksum before wasmtime reads it.
//!
//! File layout: `RHOCWASM` (8 bytes), format version (4 bytes, little endian), payload length
//! (8 bytes, little endian), CRC-32 of the payload (4 bytes), payload (what
//! `Component::serialize` produced).
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

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::engine::CONFIG_TAG;
use crate::error::WasmError;

const MAGIC: &[u8; 8] = b"RHOCWASM";
const FORMAT: u32 = 2;
const HEADER_LEN: usize = MAGIC.len() + 4 + 8 + 4;

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
        key.update(bytes);
        self.dir.join(format!("{}.cwasm", hex(&key.finalize())))
    }

    /// The cached component at `path`, if there is a sound one. Anything else (no file, a
    /// truncated or corrupt file, an artifact another wasmtime build wrote) is a miss; a bad
    /// file is removed so the next write replaces it.
    pub(crate) fn get(&self, engine: &Engine, path: &Path) -> Option<Component> {
        let data = fs::read(path).ok()?;
        let Some(payload) = verified_payload(&data) else {
            tracing::warn!(path = %path.display(), "discarding a corrupt wasm cache entry");
            let _ = fs::remove_file(path);
            return None;
        };
        // SAFETY: `Component::deserialize` maps the payload as native code without validating
        // it, so it must be an artifact wasmtime itself produced for a compatible engine. It
        // is: the file lives in rho's own cache directory (created 0700), is only ever
        // written by `put` below from `Component::serialize` output via a temporary file and
        // an atomic rename, carries the length and a CRC-32 of that exact output which were
        // just checked (so a truncated, torn or bit-flipped file is rejected above), and its
        // name includes the
        // engine's compatibility hash; wasmtime additionally checks its own version and
        // configuration header and errors on a mismatch. Whoever can forge a file there with a
        // matching digest can already write to the user's files and replace rho itself.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, payload) };
        match component {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "discarding an incompatible wasm cache entry");
                let _ = fs::remove_file(path);
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
            file.write_all(MAGIC)?;
            file.write_all(&FORMAT.to_le_bytes())?;
            file.write_all(&(payload.len() as u64).to_le_bytes())?;
            file.write_all(&crc32fast::hash(payload).to_le_bytes())?;
            file.write_all(payload)?;
            file.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// The payload of a cache file whose header, length and checksum check out.
fn verified_payload(data: &[u8]) -> Option<&[u8]> {
    let (header, payload) = data.split_at_checked(HEADER_LEN)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (format, rest) = rest.split_at(4);
    let (length, checksum) = rest.split_at(8);
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
    fn payloads_are_checked_against_their_digest() {
        let payload = b"not really machine code";
        let mut file = Vec::new();
        file.extend_from_slice(MAGIC);
        file.extend_from_slice(&FORMAT.to_le_bytes());
        file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        file.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        file.extend_from_slice(payload);
        assert_eq!(verified_payload(&file), Some(&payload[..]));

        let mut flipped = file.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(verified_payload(&flipped), None);
        assert_eq!(verified_payload(&file[..file.len() - 1]), None);
        assert_eq!(verified_payload(&file[..10]), None);
        let mut other_format = file.clone();
        other_format[8] = 1;
        assert_eq!(verified_payload(&other_format), None);
    }

    #[test]
    fn hex_is_lowercase_and_two_digits_per_byte() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
