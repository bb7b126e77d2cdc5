//! KRaft storage formatted once per kind of cluster, then copied into every
//! node.
//!
//! Kafka's `StorageTool format` writes two things into a node's log
//! directory:
//!
//! 1. `meta.properties`: the cluster id, the node id and a random directory
//!    id;
//! 2. the bootstrap metadata: the feature levels (`metadata.version`,
//!    `transaction.version`, ...) and any SCRAM credentials, as
//!    `bootstrap.checkpoint` (Kafka 3.9) or as the first snapshot of
//!    `__cluster_metadata-0` (Kafka 4.x).
//!
//! The bootstrap metadata depends on the distribution and on what the format
//! reads (its arguments and the node's configuration), never on the node or
//! the cluster id; only its timestamps change from run to run. Each format
//! is a JVM run of about 1.5 CPU seconds, and a test suite formats every node
//! of every cluster it starts.
//!
//! So the first format of a kind runs the tool on every node, as before, and
//! keeps a copy of node 1's files but `meta.properties` in the distribution
//! cache (`<cache>/storage-templates/<version>/<key>/`). Later clusters of
//! the same kind copy those files into each node and write
//! `meta.properties` as the tool writes it. The copy is put in place by an
//! atomic rename, so a cluster never copies a half-written template;
//! concurrent first formats race harmlessly.
//!
//! `KAFKA_EOS_STORAGE_TEMPLATES=0` formats every node with the tool.

use crate::dist::{KafkaVersion, cache_dir};
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The file the format writes per node; never part of a template.
const META_PROPERTIES: &str = "meta.properties";

/// Changes when the harness changes what a template holds, so that an old
/// cache is not read as a new one.
const TEMPLATE_LAYOUT: u32 = 1;

/// The formatted storage of one kind of cluster, in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StorageTemplate {
    /// The template's directory: it exists only once complete.
    dir: PathBuf,
}

impl StorageTemplate {
    /// The template of `version` formatted from `inputs` (everything the
    /// format reads besides the node's id, ports and directories: its
    /// arguments and the configuration entries of the builder); `None` when
    /// templates are off or the cache cannot be written.
    pub(crate) fn for_format(version: &KafkaVersion, inputs: &[String]) -> Option<StorageTemplate> {
        if std::env::var("KAFKA_EOS_STORAGE_TEMPLATES").is_ok_and(|v| v == "0") {
            return None;
        }
        let parent = cache_dir().join("storage-templates").join(version.as_str());
        std::fs::create_dir_all(&parent).ok()?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        TEMPLATE_LAYOUT.hash(&mut hasher);
        version.as_str().hash(&mut hasher);
        inputs.hash(&mut hasher);
        Some(StorageTemplate {
            dir: parent.join(format!("{:016x}", hasher.finish())),
        })
    }

    /// Whether the template is complete (a previous format saved it).
    pub(crate) fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// Formats `data_dir` as the tool would for node `node_id` of cluster
    /// `cluster_id`: the template's files, then `meta.properties` with a
    /// fresh directory id.
    pub(crate) fn copy_into(
        &self,
        data_dir: &Path,
        cluster_id: &str,
        node_id: i32,
        directory_id: &str,
    ) -> io::Result<()> {
        copy_tree(&self.dir, data_dir)?;
        std::fs::write(
            data_dir.join(META_PROPERTIES),
            meta_properties(cluster_id, node_id, directory_id),
        )
    }

    /// Keeps the files the tool wrote into `formatted` (but
    /// `meta.properties`) as the template, unless another format saved it
    /// first. Best effort: a template that cannot be saved only means the
    /// next cluster runs the tool again.
    pub(crate) fn save(&self, formatted: &Path) {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(parent) = self.dir.parent() else {
            return;
        };
        let partial = parent.join(format!(
            ".partial-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let copied = std::fs::create_dir(&partial)
            .and_then(|()| copy_tree(formatted, &partial))
            .and_then(
                |()| match std::fs::remove_file(partial.join(META_PROPERTIES)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            );
        // rename(2) onto an existing non-empty directory fails: the first
        // complete template stays, this copy is removed.
        if copied.is_err() || std::fs::rename(&partial, &self.dir).is_err() {
            let _ = std::fs::remove_dir_all(&partial);
        }
    }
}

/// `meta.properties` as `StorageTool format` writes it (a Java properties
/// file, version 1).
fn meta_properties(cluster_id: &str, node_id: i32, directory_id: &str) -> String {
    format!(
        "#\n#Written by kafka-testcontainers from a formatted template\n\
         node.id={node_id}\ndirectory.id={directory_id}\nversion=1\ncluster.id={cluster_id}\n"
    )
}

/// Copies the files and directories under `from` into `to` (created when
/// missing), keeping each file's permissions.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a template holds everything the format wrote but
    /// `meta.properties`, and a copy of it holds the same files plus a
    /// `meta.properties` of the new node.
    #[test]
    fn a_saved_template_is_copied_with_the_node_s_own_meta_properties() {
        let scratch = tempfile::tempdir().unwrap();
        let formatted = scratch.path().join("formatted");
        std::fs::create_dir_all(formatted.join("__cluster_metadata-0")).unwrap();
        std::fs::write(formatted.join(META_PROPERTIES), "node.id=1\n").unwrap();
        std::fs::write(
            formatted.join("__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"),
            b"snapshot",
        )
        .unwrap();
        let template = StorageTemplate {
            dir: scratch.path().join("templates").join("kind"),
        };
        std::fs::create_dir_all(template.dir.parent().unwrap()).unwrap();
        assert!(!template.exists());

        template.save(&formatted);
        assert!(template.exists());
        assert!(!template.dir.join(META_PROPERTIES).exists());

        let node = scratch.path().join("node-2");
        template.copy_into(&node, "cluster-x", 2, "dir-y").unwrap();
        assert_eq!(
            std::fs::read(
                node.join("__cluster_metadata-0/00000000000000000000-0000000000.checkpoint")
            )
            .unwrap(),
            b"snapshot"
        );
        let meta = std::fs::read_to_string(node.join(META_PROPERTIES)).unwrap();
        let lines: Vec<&str> = meta.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "node.id=2",
                "directory.id=dir-y",
                "version=1",
                "cluster.id=cluster-x"
            ]
        );
        // No partial copy is left beside the template.
        let names: Vec<_> = std::fs::read_dir(template.dir.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["kind"]);
    }

    /// Invariant: a second save never replaces a complete template.
    #[test]
    fn a_second_save_keeps_the_first_template() {
        let scratch = tempfile::tempdir().unwrap();
        let template = StorageTemplate {
            dir: scratch.path().join("kind"),
        };
        for content in ["first", "second"] {
            let formatted = scratch.path().join(content);
            std::fs::create_dir_all(&formatted).unwrap();
            std::fs::write(formatted.join("bootstrap.checkpoint"), content).unwrap();
            template.save(&formatted);
        }
        assert_eq!(
            std::fs::read_to_string(template.dir.join("bootstrap.checkpoint")).unwrap(),
            "first"
        );
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 3);
    }
}
