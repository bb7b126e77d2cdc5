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
/// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
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
    dir: PathBuf,
    retain: usize,
}

impl CheckpointStorage {
    /// Opens (creating) `dir`, keeping the last `retain` checkpoints (at
    /// least 1). Leftover temporary files of interrupted writes are removed.
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert_eq!(storage.dir(), dir.path());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many complete checkpoints are kept.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointStorage, DEFAULT_RETAINED_CHECKPOINTS};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), DEFAULT_RETAINED_CHECKPOINTS)?;
    /// assert_eq!(storage.retained(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retained(&self) -> usize {
        self.retain
    }

    /// The file of checkpoint `id`.
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert_eq!(storage.path_for(42), dir.path().join("chk-00000000000000000042.ckpt"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path_for(&self, id: u64) -> PathBuf {
        self.dir.join(format!("chk-{id:020}.ckpt"))
    }

    /// Checkpoint files present, ascending by id (valid or not).
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let path = storage.write(&Checkpoint { id: 5, timestamp_ms: 0, operators: vec![] })?;
    /// std::fs::write(dir.path().join("notes.txt"), "ignored")?;
    /// assert_eq!(storage.list()?, [(5, path)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let checkpoint = Checkpoint { id: 1, timestamp_ms: 1_700_000_000_000, operators: vec![] };
    /// let path = storage.write(&checkpoint)?;
    /// assert_eq!(path, storage.path_for(1));
    /// assert_eq!(std::fs::read(&path)?, checkpoint.encode());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointError, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let path = storage.write(&Checkpoint { id: 1, timestamp_ms: 0, operators: vec![] })?;
    /// assert_eq!(storage.read(&path)?.id, 1);
    /// std::fs::write(&path, b"KEOSCKPT")?; // torn
    /// assert!(matches!(storage.read(&path), Err(CheckpointError::Corrupt { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert!(storage.latest_valid()?.is_none());
    /// storage.write(&Checkpoint { id: 1, timestamp_ms: 0, operators: vec![] })?;
    /// let newest = storage.write(&Checkpoint { id: 2, timestamp_ms: 0, operators: vec![] })?;
    /// std::fs::write(&newest, b"garbage")?; // damaged after the write
    /// assert_eq!(storage.latest_valid()?.map(|c| c.id), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
