//! [`CheckpointStorage`]: durable checkpoint files in one directory.
//!
//! A checkpoint is written in four steps:
//! 1. write `chk-<id>.ckpt.tmp` and fsync it;
//! 2. rename it to `chk-<id>.ckpt`;
//! 3. fsync the directory;
//! 4. remove the oldest files beyond the number kept.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Checkpoint, CheckpointError};

/// The default number of complete checkpoints kept on disk.
pub const DEFAULT_RETAINED_CHECKPOINTS: usize = 3;

fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> CheckpointError + 'a {
    move |source| CheckpointError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Durable checkpoint files in one directory: `chk-<id>.ckpt`, written
/// atomically, the last `retain` kept.
///
/// ```
/// use kafka_sink::{Checkpoint, CheckpointStorage};
/// let dir = tempfile::tempdir()?;
/// let storage = CheckpointStorage::open(dir.path(), 2)?;
/// for id in 1..=3 {
///     storage.write(&Checkpoint { id, timestamp_ms: 0, operators: vec![] })?;
/// }
/// // Only the newest two are kept.
/// let ids: Vec<u64> = storage.list()?.into_iter().map(|(id, _)| id).collect();
/// assert_eq!(ids, [2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CheckpointStorage {
    /// The directory holding the checkpoint files.
    dir: PathBuf,
    /// How many complete checkpoints are kept (at least 1).
    retain: usize,
}

impl CheckpointStorage {
    /// Opens (creating) `dir`, keeping the last `retain` checkpoints (at
    /// least 1). Leftover temporary files of interrupted writes are removed.
    ///
    /// ```
    /// use kafka_sink::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path().join("checkpoints"), 0)?; // created
    /// assert_eq!(storage.retained(), 1); // at least one is kept
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(dir: impl AsRef<Path>, retain: usize) -> Result<Self, CheckpointError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(io_err("create directory", &dir))?;
        let storage = CheckpointStorage {
            dir,
            retain: retain.max(1),
        };
        for entry in fs::read_dir(&storage.dir).map_err(io_err("list", &storage.dir))? {
            let entry = entry.map_err(io_err("list", &storage.dir))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".chk-") && name.ends_with(".tmp") {
                let path = entry.path();
                tracing::info!(path = %path.display(), "removing an interrupted checkpoint write");
                fs::remove_file(&path).map_err(io_err("remove", &path))?;
            }
        }
        Ok(storage)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many complete checkpoints are kept.
    pub fn retained(&self) -> usize {
        self.retain
    }

    /// The file of checkpoint `id`.
    pub fn path_for(&self, id: u64) -> PathBuf {
        self.dir.join(format!("chk-{id:020}.ckpt"))
    }

    /// Checkpoint files present, ascending by id (valid or not).
    pub fn list(&self) -> Result<Vec<(u64, PathBuf)>, CheckpointError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(io_err("list", &self.dir))? {
            let entry = entry.map_err(io_err("list", &self.dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(id) = name
                .strip_prefix("chk-")
                .and_then(|s| s.strip_suffix(".ckpt"))
                .and_then(|s| s.parse::<u64>().ok())
            else {
                continue;
            };
            out.push((id, entry.path()));
        }
        out.sort();
        Ok(out)
    }

    /// Writes `checkpoint` durably (temp file, fsync, rename, fsync of the
    /// directory), then deletes all but the newest `retain` checkpoints.
    pub fn write(&self, checkpoint: &Checkpoint) -> Result<PathBuf, CheckpointError> {
        let bytes = checkpoint.encode();
        let tmp = self.dir.join(format!(".chk-{:020}.tmp", checkpoint.id));
        let path = self.path_for(checkpoint.id);
        {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)
                .map_err(io_err("create", &tmp))?;
            f.write_all(&bytes).map_err(io_err("write", &tmp))?;
            f.sync_all().map_err(io_err("fsync", &tmp))?;
        }
        fs::rename(&tmp, &path).map_err(io_err("rename into", &path))?;
        self.sync_dir()?;
        let files = self.list()?;
        if files.len() > self.retain {
            for (id, old) in &files[..files.len() - self.retain] {
                if *id < checkpoint.id {
                    fs::remove_file(old).map_err(io_err("remove", old))?;
                }
            }
            self.sync_dir()?;
        }
        Ok(path)
    }

    fn sync_dir(&self) -> Result<(), CheckpointError> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("fsync directory", &self.dir))
    }

    /// Reads and verifies one checkpoint file.
    pub fn read(&self, path: &Path) -> Result<Checkpoint, CheckpointError> {
        let bytes = fs::read(path).map_err(io_err("read", path))?;
        Checkpoint::decode(&bytes).map_err(|source| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The newest checkpoint that reads and verifies; corrupt or torn files
    /// (and files whose name and contents disagree on the id) are skipped
    /// with a warning.
    pub fn latest_valid(&self) -> Result<Option<Checkpoint>, CheckpointError> {
        for (id, path) in self.list()?.into_iter().rev() {
            match self.read(&path) {
                Ok(cp) if cp.id == id => return Ok(Some(cp)),
                Ok(cp) => tracing::warn!(
                    path = %path.display(),
                    found = cp.id,
                    "skipping a checkpoint file whose name and contents disagree"
                ),
                Err(CheckpointError::Corrupt { path, source }) => tracing::warn!(
                    path = %path.display(),
                    error = %source,
                    "skipping a corrupt checkpoint file"
                ),
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty(id: u64) -> Checkpoint {
        Checkpoint {
            id,
            timestamp_ms: 0,
            operators: vec![],
        }
    }

    /// Invariant: a checkpoint's file is `chk-<id, 20 digits>.ckpt` in the
    /// directory, so that names sort by id.
    #[test]
    fn path_for_zero_pads_the_id_to_twenty_digits() {
        let dir = tempfile::tempdir().unwrap();
        let storage = CheckpointStorage::open(dir.path(), DEFAULT_RETAINED_CHECKPOINTS).unwrap();
        assert_eq!(storage.dir(), dir.path());
        assert_eq!(storage.retained(), 3);
        assert_eq!(
            storage.path_for(42),
            dir.path().join("chk-00000000000000000042.ckpt")
        );
    }

    /// Invariant: the file written holds the checkpoint's encoding, at its
    /// `path_for`.
    #[test]
    fn write_stores_the_encoding_at_path_for() {
        let dir = tempfile::tempdir().unwrap();
        let storage = CheckpointStorage::open(dir.path(), 3).unwrap();
        let checkpoint = Checkpoint {
            id: 1,
            timestamp_ms: 1_700_000_000_000,
            operators: vec![],
        };
        let path = storage.write(&checkpoint).unwrap();
        assert_eq!(path, storage.path_for(1));
        assert_eq!(fs::read(&path).unwrap(), checkpoint.encode());
    }

    /// Invariant: files that are not checkpoint files are not listed.
    #[test]
    fn list_ignores_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let storage = CheckpointStorage::open(dir.path(), 3).unwrap();
        let path = storage.write(&empty(5)).unwrap();
        fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        assert_eq!(storage.list().unwrap(), [(5, path)]);
    }

    /// Invariant: a torn file reads as `Corrupt`, and the newest valid
    /// checkpoint skips it.
    #[test]
    fn torn_file_is_corrupt_and_skipped_by_latest_valid() {
        let dir = tempfile::tempdir().unwrap();
        let storage = CheckpointStorage::open(dir.path(), 3).unwrap();
        assert!(storage.latest_valid().unwrap().is_none());
        storage.write(&empty(1)).unwrap();
        let newest = storage.write(&empty(2)).unwrap();
        assert_eq!(storage.read(&newest).unwrap().id, 2);
        fs::write(&newest, b"KEOSCKPT").unwrap();
        assert!(matches!(
            storage.read(&newest),
            Err(CheckpointError::Corrupt { .. })
        ));
        assert_eq!(storage.latest_valid().unwrap().map(|c| c.id), Some(1));
    }

    /// Invariant: opening a path that is a file fails as an I/O error naming
    /// the action.
    #[test]
    fn open_on_a_file_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-directory");
        fs::write(&file, b"x").unwrap();
        let err = CheckpointStorage::open(&file, 3).unwrap_err();
        assert!(matches!(
            err,
            CheckpointError::Io {
                action: "create directory",
                ..
            }
        ));
    }
}
