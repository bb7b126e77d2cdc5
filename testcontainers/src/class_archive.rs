//! JVM class archives for the Java programs the harness runs: the broker,
//! `StorageTool format` and the reference tools.
//!
//! Most of a short JVM run is spent loading and verifying classes from the
//! distribution's jars; a test suite starts hundreds. An archive, written
//! at the normal exit of one run, is mapped by every later run of the same
//! program, which then starts with a fraction of the CPU. Two kinds, by the
//! runtime's release:
//!
//! - **Java 25 and later**: an ahead-of-time cache (JEP 483 and 514:
//!   classes loaded and linked; `-XX:AOTCacheOutput`, then
//!   `-XX:AOTCache`). The schema registry (Quarkus, on Java 25) starts
//!   with 2.3 CPU seconds instead of 3.9.
//! - **Older releases**: a dynamic class-data-sharing archive (AppCDS;
//!   `-XX:ArchiveClassesAtExit`, then `-XX:SharedArchiveFile`).
//!
//! One archive per release (of Kafka or of the schema registry), main class
//! and `java` binary, in the distribution cache
//! (`<cache>/jvm-class-archives/`). The first run of a
//! program writes it to a file of its own and the harness renames it into
//! place only after that run exited by itself (or, for a broker, after a
//! SIGTERM it sent), so no run ever maps a half-written archive; concurrent
//! first runs race harmlessly (the rename is atomic). A JVM that cannot use
//! an archive (another JDK, another class path) ignores it; its CDS warnings
//! are switched off so that tool output stays clean.
//!
//! `KAFKA_EOS_JVM_CLASS_ARCHIVES=0` turns archives off.

use crate::dist::cache_dir;
use crate::java::JavaRuntime;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether a run maps an existing archive or writes a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// The archive exists: mapped.
    Use,
    /// Written into `dump` at exit, renamed to the archive's path by
    /// [`ClassArchive::finish`].
    Write { dump: PathBuf },
}

/// The kind of archive a runtime writes and maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Java 25 and later: an ahead-of-time cache.
    AheadOfTimeCache,
    /// Older releases: a dynamic class-data-sharing archive.
    DynamicCds,
}

impl Kind {
    fn of(java: &JavaRuntime) -> Kind {
        if java.major >= 25 {
            Kind::AheadOfTimeCache
        } else {
            Kind::DynamicCds
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::AheadOfTimeCache => "aot",
            Kind::DynamicCds => "jsa",
        }
    }

    /// The option mapping an archive, the one writing it at exit, and the
    /// ones switching its log output off (a tool's output stays its own).
    fn options(self) -> (&'static str, &'static str, [&'static str; 2]) {
        match self {
            Kind::AheadOfTimeCache => (
                "-XX:AOTCache",
                "-XX:AOTCacheOutput",
                ["-Xlog:aot*=off", "-Xlog:cds*=off"],
            ),
            Kind::DynamicCds => (
                "-XX:SharedArchiveFile",
                "-XX:ArchiveClassesAtExit",
                ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"],
            ),
        }
    }
}

/// The archive of one program of one distribution, for one JVM run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassArchive {
    /// Where the finished archive is (or will be, once written).
    path: PathBuf,
    /// Mapped or written by this run.
    mode: Mode,
    /// Ahead-of-time cache or dynamic archive.
    kind: Kind,
}

/// Which run of a program writes its missing archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenToWrite {
    /// None: this run will be killed rather than exit.
    Never,
    /// The first: a program that runs many times (the broker, the storage
    /// tool, the schema registry).
    FirstRun,
    /// The second: the first only leaves a mark beside the archive's path.
    /// For the reference tools, some of which a test suite runs once: an
    /// archive costs a run about twice its CPU to write (an ahead-of-time
    /// cache more), which one later run does not win back.
    SecondRun,
}

impl ClassArchive {
    /// The archive for running `main_class` of `release` (a directory name
    /// of the archive cache: a Kafka version, `apicurio-3.3.3`) with `java`; `None`
    /// when archives are off or the cache directory cannot be written.
    /// `when`: whether this run may write a missing archive.
    pub(crate) fn for_program(
        release: &str,
        java: &JavaRuntime,
        main_class: &str,
        when: WhenToWrite,
    ) -> Option<ClassArchive> {
        if std::env::var("KAFKA_EOS_JVM_CLASS_ARCHIVES").is_ok_and(|v| v == "0") {
            return None;
        }
        // A class name, not a source file run by the source launcher (its
        // classes are compiled in memory; no archive holds them).
        let is_class_name = !crate::java_source::is_source_file(main_class)
            && main_class
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '$');
        if !is_class_name {
            return None;
        }
        let dir = cache_dir().join("jvm-class-archives").join(release);
        std::fs::create_dir_all(&dir).ok()?;
        let kind = Kind::of(java);
        let path = dir.join(format!(
            "{main_class}-{:016x}.{}",
            java_fingerprint(&java.path),
            kind.extension()
        ));
        if path.is_file() {
            return Some(ClassArchive {
                path,
                mode: Mode::Use,
                kind,
            });
        }
        match when {
            WhenToWrite::Never => return None,
            WhenToWrite::FirstRun => {}
            WhenToWrite::SecondRun => {
                let mut mark = path.clone().into_os_string();
                mark.push(".seen");
                let first = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&mark)
                    .is_ok();
                if first {
                    return None;
                }
            }
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dump = dir.join(format!(
            ".{main_class}-{}-{}.part.{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            kind.extension()
        ));
        Some(ClassArchive {
            path,
            mode: Mode::Write { dump },
            kind,
        })
    }

    /// The JVM options for this run.
    pub(crate) fn jvm_args(&self) -> Vec<String> {
        let (map, write, quiet) = self.kind.options();
        let archive = match &self.mode {
            Mode::Use => format!("{map}={}", self.path.display()),
            Mode::Write { dump } => format!("{write}={}", dump.display()),
        };
        std::iter::once(archive)
            .chain(quiet.map(String::from))
            .collect()
    }

    /// Whether this run writes the archive (and so must exit by itself, or
    /// by SIGTERM, for the archive to exist).
    pub(crate) fn writes(&self) -> bool {
        matches!(self.mode, Mode::Write { .. })
    }

    /// After the run: `exited` says whether it exited by itself or by
    /// SIGTERM (not killed). Moves a written archive into place, or removes
    /// the partial file.
    pub(crate) fn finish(&self, exited: bool) {
        let Mode::Write { dump } = &self.mode else {
            return;
        };
        let written = exited && std::fs::metadata(dump).is_ok_and(|m| m.len() > 0);
        if !(written && std::fs::rename(dump, &self.path).is_ok()) {
            let _ = std::fs::remove_file(dump);
        }
        // The training configuration an ahead-of-time cache is assembled
        // from, left beside the output by a run killed before its exit.
        let mut config = dump.clone().into_os_string();
        config.push(".config");
        let _ = std::fs::remove_file(config);
    }
}

/// Distinguishes `java` binaries: the resolved path, size and modification
/// time of the executable (an archive only works with the JVM that wrote it).
fn java_fingerprint(java: &Path) -> u64 {
    let resolved = crate::java::resolve(java);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    if let Some(path) = &resolved {
        path.hash(&mut hasher);
        if let Ok(meta) = std::fs::metadata(path) {
            meta.len().hash(&mut hasher);
            meta.modified().ok().hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_archive_is_moved_into_place_only_after_a_clean_exit() {
        let dir = std::env::temp_dir().join(format!("class-archive-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let archive = |name: &str| ClassArchive {
            path: dir.join(format!("{name}.jsa")),
            mode: Mode::Write {
                dump: dir.join(format!("{name}.part")),
            },
            kind: Kind::DynamicCds,
        };

        let killed = archive("killed");
        std::fs::write(dir.join("killed.part"), b"partial").unwrap();
        killed.finish(false);
        assert!(
            !dir.join("killed.jsa").exists(),
            "a killed run's file is not used"
        );
        assert!(!dir.join("killed.part").exists(), "and is removed");

        let clean = archive("clean");
        assert!(clean.writes());
        assert!(clean.jvm_args()[0].starts_with("-XX:ArchiveClassesAtExit="));
        std::fs::write(dir.join("clean.part"), b"archive").unwrap();
        clean.finish(true);
        assert_eq!(std::fs::read(dir.join("clean.jsa")).unwrap(), b"archive");

        let nothing = archive("nothing");
        nothing.finish(true);
        assert!(!dir.join("nothing.jsa").exists(), "no file, no archive");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_source_file_program_gets_no_archive() {
        let java = JavaRuntime {
            path: PathBuf::from("java"),
            major: 17,
        };
        for program in [
            "/work/tests/java/KeyedProduce.java",
            "KeyedProduce.java",
            "../x",
        ] {
            assert_eq!(
                ClassArchive::for_program("4.4.0", &java, program, WhenToWrite::FirstRun),
                None,
                "{program}"
            );
        }
    }

    #[test]
    fn java_25_maps_an_ahead_of_time_cache_and_older_releases_a_dynamic_archive() {
        let archive = |major: u32, mode: Mode| ClassArchive {
            path: PathBuf::from("/cache/kafka.Kafka"),
            mode,
            kind: Kind::of(&JavaRuntime {
                path: PathBuf::from("java"),
                major,
            }),
        };
        let write = || Mode::Write {
            dump: PathBuf::from("/cache/part"),
        };
        assert_eq!(
            archive(25, Mode::Use).jvm_args()[0],
            "-XX:AOTCache=/cache/kafka.Kafka"
        );
        assert_eq!(
            archive(25, write()).jvm_args()[0],
            "-XX:AOTCacheOutput=/cache/part"
        );
        assert_eq!(
            archive(17, Mode::Use).jvm_args()[0],
            "-XX:SharedArchiveFile=/cache/kafka.Kafka"
        );
        assert_eq!(
            archive(17, write()).jvm_args()[0],
            "-XX:ArchiveClassesAtExit=/cache/part"
        );
    }

    #[test]
    fn a_tool_writes_its_archive_at_its_second_run_only() {
        let release = format!("test-second-run-{}", std::process::id());
        let java = JavaRuntime {
            path: PathBuf::from("/nonexistent/bin/java"),
            major: 25,
        };
        let tool = "org.example.Tool";
        let first = ClassArchive::for_program(&release, &java, tool, WhenToWrite::SecondRun);
        assert_eq!(first, None, "the first run writes nothing");
        let second = ClassArchive::for_program(&release, &java, tool, WhenToWrite::SecondRun)
            .expect("the second run writes");
        assert!(second.writes());
        assert!(second.jvm_args()[0].starts_with("-XX:AOTCacheOutput="));
        let never =
            ClassArchive::for_program(&release, &java, "org.example.Killed", WhenToWrite::Never);
        assert_eq!(never, None);
        std::fs::remove_dir_all(cache_dir().join("jvm-class-archives").join(&release)).unwrap();
    }

    #[test]
    fn the_fingerprint_follows_the_java_binary() {
        let a = java_fingerprint(Path::new("/bin/sh"));
        assert_eq!(a, java_fingerprint(Path::new("/bin/sh")));
        assert_ne!(a, java_fingerprint(Path::new("/definitely/not/java")));
    }
}
