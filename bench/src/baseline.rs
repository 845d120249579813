//! The hidden `read-files` mode: the floor any loader pays, timed as a whole process like rho.
//!
//! It walks the root depth-first on one thread and reads every regular file whole with
//! `std::fs::read`, then prints the total byte count (so the work cannot be skipped and the
//! bench can check it read what was generated). No parsing, no validation, no output beyond that.

use std::path::Path;

/// Reads every file under `root` and prints the number of bytes read.
pub fn read_files(root: &Path) -> Result<(), crate::Error> {
    let mut total = 0u64;
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot stat {}: {e}", entry.path().display()))?;
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let bytes = std::fs::read(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                total += bytes.len() as u64;
            }
        }
    }
    println!("{total}");
    Ok(())
}
