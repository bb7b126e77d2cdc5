//! Java programs given as one source file (the tests' Java clients), compiled
//! once instead of at every run.
//!
//! `java Program.java` (the source launcher) compiles the file in memory at
//! every start: about 1.3 CPU seconds before `main` runs. The harness
//! compiles it with the runtime's `javac` against the distribution's jars
//! into `<cache>/java-programs/<release>/<name>-<key>/`, the key hashing
//! the source, the runtime and the release, and runs the class from there.
//! A concurrent first compilation races harmlessly: each writes a directory
//! of its own and renames it into place; the loser removes its copy. Where
//! `javac` is missing or fails, the source launcher runs the file as
//! before (a compile error is then reported by the run itself).

use crate::dist::{Distribution, cache_dir};
use crate::java::JavaRuntime;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A source file's compiled classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompiledSource {
    /// The directory holding the classes (a class path entry).
    pub(crate) classes: PathBuf,
    /// The public class the file declares (its name), the main class.
    pub(crate) main_class: String,
}

/// Whether `program` names a source file rather than a class.
pub(crate) fn is_source_file(program: &str) -> bool {
    program.ends_with(".java")
}

/// The compiled classes of the source file `source`, compiling it on first
/// use; `None` when it cannot be compiled (the caller runs the source file
/// itself).
pub(crate) fn compiled(
    dist: &Distribution,
    java: &JavaRuntime,
    source: &Path,
) -> Option<CompiledSource> {
    let main_class = source.file_stem()?.to_str()?.to_string();
    let text = std::fs::read(source).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    java.path.hash(&mut hasher);
    java.major.hash(&mut hasher);
    dist.version.as_str().hash(&mut hasher);
    let dir = cache_dir()
        .join("java-programs")
        .join(dist.version.as_str());
    let classes = dir.join(format!("{main_class}-{:016x}", hasher.finish()));
    if classes.join(format!("{main_class}.class")).is_file() {
        return Some(CompiledSource {
            classes,
            main_class,
        });
    }
    std::fs::create_dir_all(&dir).ok()?;
    let work = dir.join(format!(
        ".{main_class}-{}-{:?}.part",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&work);
    let javac = java.path.with_file_name("javac");
    let compiled = Command::new(&javac)
        .arg("-J-XX:TieredStopAtLevel=1")
        .arg("-J-XX:+UseSerialGC")
        .arg("-nowarn")
        .arg("-cp")
        .arg(dist.classpath())
        .arg("-d")
        .arg(&work)
        .arg(source)
        .env_remove("JAVA_TOOL_OPTIONS")
        .env_remove("CLASSPATH")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !compiled || !work.join(format!("{main_class}.class")).is_file() {
        let _ = std::fs::remove_dir_all(&work);
        return None;
    }
    if std::fs::rename(&work, &classes).is_err() {
        // Another run put its copy in place first.
        let _ = std::fs::remove_dir_all(&work);
    }
    classes
        .join(format!("{main_class}.class"))
        .is_file()
        .then_some(CompiledSource {
            classes,
            main_class,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_source_files_are_compiled() {
        assert!(is_source_file("/work/tests/java/KeyedProduce.java"));
        assert!(!is_source_file("kafka.Kafka"));
        assert!(!is_source_file(
            "org.apache.kafka.tools.ProducerPerformance"
        ));
    }

    #[test]
    fn a_file_that_does_not_exist_is_left_to_the_source_launcher() {
        let dist = Distribution {
            version: crate::KafkaVersion::parse("4.4.0"),
            dir: PathBuf::from("/nonexistent"),
        };
        let java = JavaRuntime {
            path: PathBuf::from("/nonexistent/bin/java"),
            major: 25,
        };
        assert_eq!(
            compiled(&dist, &java, Path::new("/nonexistent/Program.java")),
            None
        );
    }
}
