//! Consumer groups from the command line against the harness's shared Kafka
//! 4.4 cluster (one node, KIP-848 groups with 500 ms heartbeats), one
//! scenario per test, each with topics, groups and transactional ids of its
//! own (group listings are checked for the test's own group only):
//!
//! - `consume --group`: two members split a 4-partition topic (each gets
//!   some partitions) and together print every record exactly once; a later
//!   member of the same group, after both stopped, prints only records
//!   produced after it joined (the group's committed offsets).
//! - `copy`: two copiers, one SIGKILLed mid-way and restarted; a
//!   read_committed read of the output holds every input value exactly once.
//! - `group list/describe/delete` on a group of two live `consume --group`
//!   members: listed as type consumer; described with every partition's
//!   committed offset at the log end (lag 0) and an owner; its deletion
//!   refused while members remain, accepted once they left.

use crate::common;
use common::{bin, kafka, ok, run, wait_for};
use kafka_testcontainers::unique_name;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PARTITIONS: i32 = 4;

async fn create_topic(bootstrap: &str, topic: &str) {
    ok(
        bootstrap,
        &[
            "topic",
            "create",
            topic,
            "--partitions",
            &PARTITIONS.to_string(),
        ],
        None,
    )
    .await;
}

/// Produces `values` to `topic`, spread over the partitions by value
/// (value % PARTITIONS).
async fn produce(bootstrap: &str, topic: &str, values: std::ops::Range<u32>) {
    for p in 0..PARTITIONS as u32 {
        let lines: String = values
            .clone()
            .filter(|v| v % PARTITIONS as u32 == p)
            .map(|v| format!("{v}\n"))
            .collect();
        ok(
            bootstrap,
            &["produce", "--topic", topic, "--partition", &p.to_string()],
            Some(lines.as_bytes()),
        )
        .await;
    }
}

/// A long-running kafka-eos process whose stdout lines are collected.
struct Running {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    stderr: tempfile::NamedTempFile,
}

impl Running {
    fn start(bootstrap: &str, args: &[&str]) -> Running {
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let mut child = std::process::Command::new(bin())
            .arg("--bootstrap")
            .arg(bootstrap)
            .args(args)
            .arg("-v")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr.reopen().unwrap())
            .spawn()
            .expect("spawn kafka-eos");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                match line {
                    Ok(l) => sink.lock().unwrap().push(l),
                    Err(_) => break,
                }
            }
        });
        Running {
            child,
            lines,
            stderr,
        }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap_or_default()
    }

    fn signal(&self, sig: &str) {
        let status = std::process::Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {sig} {}", self.child.id());
    }

    /// Sends `sig` and waits for the exit; returns the exit code (None when
    /// killed by a signal).
    async fn stop(self, sig: &str) -> (Option<i32>, Vec<String>, String) {
        self.signal(sig);
        self.exited().await
    }

    /// Waits for the process to exit on its own (at most 120 s).
    async fn exited(mut self) -> (Option<i32>, Vec<String>, String) {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let status = loop {
            assert!(
                std::time::Instant::now() < deadline,
                "kafka-eos did not exit:\n{}",
                self.log()
            );
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        // The reader thread ends at EOF; take what it collected.
        let lines = loop {
            let done = Arc::strong_count(&self.lines) == 1;
            if done {
                break self.lines();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        (status.code(), lines, self.log())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One partition line of `group describe`.
#[derive(Debug, Clone)]
struct Row {
    topic: String,
    partition: i32,
    current: String,
    end: String,
    lag: String,
    consumer: String,
}

/// The partition lines of `group describe GROUP` (after the header line
/// that starts with GROUP); None while the group does not exist yet.
async fn describe(bootstrap: &str, group: &str) -> Option<Vec<Row>> {
    let out = run(bootstrap, &["group", "describe", group], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(1) && stderr.contains("does not exist") {
        return None;
    }
    assert!(out.status.success(), "group describe {group}: {stderr}");
    let out = String::from_utf8_lossy(&out.stdout);
    let rows = out
        .lines()
        .skip_while(|l| !l.starts_with("GROUP "))
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(c.len(), 9, "describe line {l:?}");
            assert_eq!(c[0], group);
            Row {
                topic: c[1].into(),
                partition: c[2].parse().unwrap(),
                current: c[3].into(),
                end: c[4].into(),
                lag: c[5].into(),
                consumer: c[6].into(),
            }
        })
        .collect();
    Some(rows)
}

/// Waits until the group's `members` members share every partition of the
/// topic, each owning at least one.
async fn wait_for_split(bootstrap: &str, group: &str, members: usize) -> Vec<Row> {
    wait_for(
        &format!("{members} members to share the partitions"),
        || async {
            let rows = describe(bootstrap, group).await?;
            let owners: BTreeSet<&str> = rows
                .iter()
                .map(|r| r.consumer.as_str())
                .filter(|c| *c != "-")
                .collect();
            let owned = rows.iter().filter(|r| r.consumer != "-").count();
            (owners.len() == members && owned == PARTITIONS as usize).then_some(rows.clone())
        },
    )
    .await
}

/// `consume --group GROUP` printing `PARTITION VALUE` lines.
fn member(bootstrap: &str, topic: &str, group: &str) -> Running {
    Running::start(
        bootstrap,
        &[
            "consume",
            "--topic",
            topic,
            "--group",
            group,
            "-o",
            "beginning",
            "--format",
            "%p %s\\n",
        ],
    )
}

/// (partition, value) of `PARTITION VALUE` lines.
fn parse(lines: &[String]) -> Vec<(i32, u32)> {
    lines
        .iter()
        .map(|l| {
            let (p, v) = l.split_once(' ').unwrap_or_else(|| panic!("line {l:?}"));
            (p.parse().unwrap(), v.parse().unwrap())
        })
        .collect()
}

/// Two `consume --group` members split the partitions (each gets some,
/// none gets a partition the other has) and together print every record
/// once, each from its partition; a later member of the group, after both
/// stopped with Ctrl-C (exit 130), prints only the records produced after
/// it joined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_group_members_split_partitions_and_resume_at_committed_offsets() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let (topic, group) = (unique_name("orders"), unique_name("printers"));
    let (topic, group) = (topic.as_str(), group.as_str());
    create_topic(b, topic).await;

    let m1 = member(b, topic, group);
    let m2 = member(b, topic, group);
    wait_for_split(b, group, 2).await;
    produce(b, topic, 0..400).await;
    wait_for("both members to print 400 records", || async {
        (m1.lines().len() + m2.lines().len() >= 400).then_some(())
    })
    .await;
    let (code1, lines1, log1) = m1.stop("-INT").await;
    let (code2, lines2, log2) = m2.stop("-INT").await;
    assert_eq!(code1, Some(130), "member 1 after Ctrl-C:\n{log1}");
    assert_eq!(code2, Some(130), "member 2 after Ctrl-C:\n{log2}");

    let (r1, r2) = (parse(&lines1), parse(&lines2));
    let p1: BTreeSet<i32> = r1.iter().map(|(p, _)| *p).collect();
    let p2: BTreeSet<i32> = r2.iter().map(|(p, _)| *p).collect();
    assert!(!p1.is_empty() && !p2.is_empty(), "{p1:?} {p2:?}");
    assert!(
        p1.is_disjoint(&p2),
        "a partition read by both: {p1:?} {p2:?}"
    );
    let mut values: Vec<u32> = r1.iter().chain(&r2).map(|(_, v)| *v).collect();
    values.sort_unstable();
    assert_eq!(values, (0..400).collect::<Vec<_>>(), "every record once");
    for (p, v) in r1.iter().chain(&r2) {
        assert_eq!(
            *p as u32,
            v % PARTITIONS as u32,
            "record {v} from its partition"
        );
    }

    // A later member resumes at the committed offsets: only new records.
    let m3 = member(b, topic, group);
    wait_for_split(b, group, 1).await;
    produce(b, topic, 400..500).await;
    wait_for("the third member to print 100 records", || async {
        (m3.lines().len() >= 100).then_some(())
    })
    .await;
    let (code3, lines3, log3) = m3.stop("-INT").await;
    assert_eq!(code3, Some(130), "member 3 after Ctrl-C:\n{log3}");
    let mut values: Vec<u32> = parse(&lines3).into_iter().map(|(_, v)| v).collect();
    values.sort_unstable();
    assert_eq!(
        values,
        (400..500).collect::<Vec<_>>(),
        "only the new records"
    );
}

/// The topics and group of a `copy` test (unique on the shared cluster).
struct CopyNames {
    input: String,
    output: String,
    group: String,
}

/// `copy` from `names.input` to `names.output` on `names.group`, with
/// transactional ids starting with `prefix`.
fn copier(bootstrap: &str, names: &CopyNames, prefix: &str) -> Running {
    Running::start(
        bootstrap,
        &[
            "copy",
            "--from",
            &names.input,
            "--to",
            &names.output,
            "--group",
            &names.group,
            "--transactional-id-prefix",
            prefix,
            "--transaction-timeout-ms",
            "3000",
        ],
    )
}

/// The values of `topic` as a read_committed reader sees them now.
async fn output(bootstrap: &str, topic: &str) -> Vec<u32> {
    ok(bootstrap, &["consume", "--topic", topic, "-e"], None)
        .await
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Two `copy` processes of one group, one SIGKILLed while input is still
/// arriving and restarted with the same transactional id prefix: once both
/// stopped on SIGTERM (exit 0), a read_committed read of the output holds
/// every input value exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_with_a_copier_killed_and_restarted_copies_every_record_once() {
    const N: u32 = 2000;
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let names = CopyNames {
        input: unique_name("in"),
        output: unique_name("out"),
        group: unique_name("copiers"),
    };
    let (prefix_a, prefix_c) = (unique_name("copier-a"), unique_name("copier-c"));
    let out = names.output.as_str();
    create_topic(b, &names.input).await;
    create_topic(b, out).await;
    produce(b, &names.input, 0..N / 2).await;

    let a = copier(b, &names, &prefix_a);
    let c = copier(b, &names, &prefix_c);
    wait_for("the copiers to commit output", || async {
        (!output(b, out).await.is_empty()).then_some(())
    })
    .await;
    // Kill one copier with its second half of input on the way: it may die
    // with an open transaction, which the broker aborts after its timeout.
    let more = tokio::spawn({
        let (b, input) = (b.to_string(), names.input.clone());
        async move { produce(&b, &input, N / 2..N).await }
    });
    let (code, _, _) = a.stop("-KILL").await;
    assert_eq!(code, None, "killed by SIGKILL");
    let a = copier(b, &names, &prefix_a);
    more.await.unwrap();

    wait_for("every input value in the output", || async {
        let seen: BTreeSet<u32> = output(b, out).await.into_iter().collect();
        (seen.len() == N as usize).then_some(())
    })
    .await;
    let (code_a, _, log_a) = a.stop("-TERM").await;
    let (code_c, _, log_c) = c.stop("-TERM").await;
    assert_eq!(code_a, Some(0), "restarted copier after SIGTERM:\n{log_a}");
    assert_eq!(code_c, Some(0), "copier after SIGTERM:\n{log_c}");

    let mut values = output(b, out).await;
    values.sort_unstable();
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for v in &values {
        *counts.entry(*v).or_default() += 1;
    }
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "values copied more than once: {twice:?}");
    assert_eq!(values, (0..N).collect::<Vec<_>>(), "every value once");
}

/// Two `copy --exit-at-end` processes of one group on input written before
/// they start: each exits 0 by itself once the group committed the whole
/// input, a read_committed read of the output holds every input value
/// exactly once, and each prints its counts with the time taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_with_exit_at_end_stops_once_the_input_is_copied() {
    const N: u32 = 2000;
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let names = CopyNames {
        input: unique_name("in"),
        output: unique_name("out"),
        group: unique_name("copiers"),
    };
    create_topic(b, &names.input).await;
    create_topic(b, &names.output).await;
    produce(b, &names.input, 0..N).await;
    let with_exit = |prefix: &str| {
        Running::start(
            b,
            &[
                "copy",
                "--from",
                &names.input,
                "--to",
                &names.output,
                "--group",
                &names.group,
                "--transactional-id-prefix",
                prefix,
                "--exit-at-end",
            ],
        )
    };
    let a = with_exit(&unique_name("end-a"));
    let c = with_exit(&unique_name("end-c"));
    let (code_a, _, log_a) = a.exited().await;
    let (code_c, _, log_c) = c.exited().await;
    assert_eq!(code_a, Some(0), "copier a:\n{log_a}");
    assert_eq!(code_c, Some(0), "copier c:\n{log_c}");
    for log in [&log_a, &log_c] {
        assert!(
            log.contains("\"elapsed_ms\":")
                && log.contains("\"committed_records_per_second\":")
                && log.contains("\"commit_ms_mean\":")
                && log.contains("\"commit_ms_max\":"),
            "the counts carry their timing:\n{log}"
        );
    }
    let mut values = output(b, &names.output).await;
    values.sort_unstable();
    assert_eq!(values, (0..N).collect::<Vec<_>>(), "every value once");
}

/// A group of two live `consume --group` members: `group list` shows it as
/// a KIP-848 consumer group (type and protocol type `consumer`); `group
/// describe` shows every partition's committed offset at the log end (lag
/// 0) and an owner; `group delete` is refused (exit 1) while members
/// remain and accepted once they left, after which the group is neither
/// listed nor described.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_list_describe_and_delete_a_consume_group() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let (topic, group) = (unique_name("orders"), unique_name("printers"));
    let (topic, group) = (topic.as_str(), group.as_str());
    create_topic(b, topic).await;
    let m1 = member(b, topic, group);
    let m2 = member(b, topic, group);
    wait_for_split(b, group, 2).await;
    produce(b, topic, 0..400).await;

    // list: the group, a KIP-848 consumer group.
    let list = ok(b, &["group", "list"], None).await;
    let line = list
        .lines()
        .find(|l| l.split_whitespace().next() == Some(group))
        .unwrap_or_else(|| panic!("{group} not listed:\n{list}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1], "consumer", "{list}");
    assert_eq!(cols[3], "consumer", "protocol type: {list}");

    // describe: once each partition's committed offset reached the 100
    // records produced to it, the log end is there too and the lag is 0.
    let rows = wait_for("every record committed", || async {
        let rows = describe(b, group).await?;
        (rows.len() == PARTITIONS as usize && rows.iter().all(|r| r.current == "100"))
            .then_some(rows)
    })
    .await;
    for r in &rows {
        assert_eq!(r.topic, topic);
        assert_eq!(r.end, "100", "{r:?}");
        assert_eq!(r.lag, "0", "{r:?}");
        assert_ne!(r.consumer, "-", "{r:?} has an owner");
    }
    assert_eq!(
        rows.iter().map(|r| r.partition).collect::<Vec<_>>(),
        (0..PARTITIONS).collect::<Vec<_>>()
    );

    // delete: refused while members remain.
    let out = run(b, &["group", "delete", group], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not empty"), "{stderr}");

    // ... and accepted once they left.
    m1.stop("-INT").await;
    m2.stop("-INT").await;
    let out = ok(b, &["group", "delete", group], None).await;
    assert_eq!(out.trim(), format!("deleted group {group}"));
    let list = ok(b, &["group", "list"], None).await;
    assert!(
        !list
            .lines()
            .any(|l| l.split_whitespace().next() == Some(group)),
        "{list}"
    );
    let out = run(b, &["group", "describe", group], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
}
