//! The operator commands against real Kafka 4.4 (the harness's shared
//! single-node cluster; the ACL test starts one with `StandardAuthorizer`),
//! one scenario per test, each on topics and groups of its own:
//!
//! - `group reset-offsets`: the dry run (the default) prints the plan and
//!   commits nothing; `--execute` commits exactly the plan.
//! - every reset spec lands inside [log start, high watermark]: to-offset
//!   above the end, shift-by below a log start moved by `records delete`,
//!   to-datetime after every record (the end), before every record and
//!   by-duration (the log start).
//! - a reset of a group with a live member is refused (exit 1, naming the
//!   member) and leaves its offsets alone.
//! - `group delete-offsets` removes the chosen partition's offset only.
//! - `records delete` moves the log start (reads begin there); an offset
//!   above the high watermark is refused (exit 1, OFFSET_OUT_OF_RANGE).
//! - `config alter` sets, appends to and deletes a topic's configs, and a
//!   broker's dynamic config, as `config describe` then shows.
//! - `cluster describe` names the cluster's id and its broker.
//! - `acl add/list/remove` on an authorizing broker; `acl list` on one
//!   without an authorizer fails with SECURITY_DISABLED.

use crate::common;
use common::{bin, kafka, ok, run, wait_for};
use kafka_testcontainers::{KafkaCluster, unique_name};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs the CLI; panics unless it exits 1; returns stderr.
async fn fails(bootstrap: &str, args: &[&str]) -> String {
    let out = run(bootstrap, args, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "kafka-eos {args:?}: {stderr}");
    stderr
}

/// A topic with `partitions` partitions holding records 0..`per_partition`
/// in each.
async fn topic_with_records(b: &str, prefix: &str, partitions: u32, per_partition: u32) -> String {
    let topic = unique_name(prefix);
    ok(
        b,
        &[
            "topic",
            "create",
            &topic,
            "--partitions",
            &partitions.to_string(),
        ],
        None,
    )
    .await;
    for p in 0..partitions {
        let lines: String = (0..per_partition).map(|v| format!("{v}\n")).collect();
        ok(
            b,
            &["produce", "--topic", &topic, "--partition", &p.to_string()],
            Some(lines.as_bytes()),
        )
        .await;
    }
    topic
}

/// The committed offset of each partition of `topic` as `group describe`
/// prints it (`None` for `-`).
async fn committed(b: &str, group: &str, topic: &str) -> BTreeMap<i32, Option<i64>> {
    let out = run(b, &["group", "describe", group], None).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| c.len() >= 4 && c[0] == group && c[1] == topic)
        .map(|c| (c[2].parse().unwrap(), c[3].parse().ok()))
        .collect()
}

/// The NEW-OFFSET column of a printed plan, by partition.
fn plan(out: &str) -> BTreeMap<i32, i64> {
    out.lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .map(|c| (c[2].parse().unwrap(), c[3].parse().unwrap()))
        .collect()
}

/// Dry run vs execute: the plan of a dry run is printed and nothing is
/// committed; `--execute` commits the same plan. Invariant: a dry run never
/// changes a group's offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_offsets_dry_run_commits_nothing_and_execute_commits_the_plan() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = topic_with_records(b, "reset-dry", 2, 10).await;
    let group = unique_name("reset-dry-g");
    let reset = |spec: &'static [&'static str], execute: bool| {
        let (topic, group) = (topic.clone(), group.clone());
        async move {
            let mut args = vec![
                "group",
                "reset-offsets",
                "--group",
                &group,
                "--topic",
                &topic,
            ];
            args.extend_from_slice(spec);
            if execute {
                args.push("--execute");
            }
            ok(b, &args, None).await
        }
    };
    let out = reset(&["--to-latest"], true).await;
    assert_eq!(plan(&out), BTreeMap::from([(0, 10), (1, 10)]), "{out}");
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(10)), (1, Some(10))])
    );

    let out = reset(&["--to-offset", "4"], false).await;
    assert!(out.starts_with("GROUP"), "{out}");
    assert_eq!(plan(&out), BTreeMap::from([(0, 4), (1, 4)]));
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(10)), (1, Some(10))])
    );

    let out = reset(&["--to-offset", "4", "--dry-run"], false).await;
    assert_eq!(plan(&out), BTreeMap::from([(0, 4), (1, 4)]));
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(10)), (1, Some(10))])
    );

    reset(&["--to-offset", "4"], true).await;
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(4)), (1, Some(4))])
    );
}

/// Every spec lands inside [log start, high watermark], as Java's tool
/// clamps; one partition at a time (`topic:partition`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_specs_stay_inside_the_log() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = topic_with_records(b, "reset-specs", 2, 10).await;
    let group = unique_name("reset-specs-g");
    // The log of partition 0 now starts at 3.
    ok(
        b,
        &[
            "records",
            "delete",
            "--topic",
            &topic,
            "--partition",
            "0",
            "--offset",
            "3",
        ],
        None,
    )
    .await;
    let p0 = format!("{topic}:0");
    let new_offset = |spec: Vec<String>| {
        let (p0, group) = (p0.clone(), group.clone());
        async move {
            let mut args: Vec<&str> = vec![
                "group",
                "reset-offsets",
                "--group",
                &group,
                "--topic",
                &p0,
                "--execute",
            ];
            args.extend(spec.iter().map(String::as_str));
            let out = ok(b, &args, None).await;
            let p = plan(&out);
            assert_eq!(p.len(), 1, "{out}");
            p[&0]
        }
    };
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(new_offset(s(&["--to-earliest"])).await, 3);
    assert_eq!(new_offset(s(&["--to-offset", "99"])).await, 10);
    assert_eq!(new_offset(s(&["--shift-by", "-5"])).await, 5);
    assert_eq!(new_offset(s(&["--shift-by", "-5"])).await, 3);
    assert_eq!(new_offset(s(&["--to-offset", "1"])).await, 3);
    assert_eq!(new_offset(s(&["--shift-by", "+4"])).await, 7);
    assert_eq!(
        new_offset(s(&["--to-datetime", "2999-01-01T00:00:00Z"])).await,
        10
    );
    assert_eq!(
        new_offset(s(&["--to-datetime", "2000-01-01T00:00:00.000+01:00"])).await,
        3
    );
    assert_eq!(new_offset(s(&["--by-duration", "P1D"])).await, 3);
    // Partition 1 was never reset.
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(3))])
    );
    // A bad date is a usage error.
    let out = run(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            &group,
            "--topic",
            &p0,
            "--to-datetime",
            "yesterday",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
}

/// A group with a live member is refused, naming the member, and keeps its
/// offsets. Invariant: offsets never change under a running consumer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_of_a_group_with_members_is_refused() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = topic_with_records(b, "reset-live", 1, 5).await;
    let group = unique_name("reset-live-g");
    ok(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-offset",
            "2",
            "--execute",
        ],
        None,
    )
    .await;
    let mut member = std::process::Command::new(bin())
        .args([
            "--bootstrap",
            b,
            "consume",
            "--topic",
            &topic,
            "--group",
            &group,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a group member");
    // Wait until the coordinator lists the member.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = ok(b, &["group", "describe", &group], None).await;
        if !out.contains("Members: 0") {
            break;
        }
        assert!(Instant::now() < deadline, "the member never joined: {out}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stderr = fails(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
            "--execute",
        ],
    )
    .await;
    assert!(
        stderr.contains("no members") && stderr.contains("stop its consumers"),
        "{stderr}"
    );
    let stderr = fails(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
        ],
    )
    .await;
    assert!(stderr.contains("members"), "{stderr}");
    member.kill().unwrap();
    member.wait().unwrap();
}

/// `group delete-offsets` removes only the chosen partition's offset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_offsets_removes_only_the_chosen_partition() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = topic_with_records(b, "del-offsets", 2, 3).await;
    let group = unique_name("del-offsets-g");
    ok(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-latest",
            "--execute",
        ],
        None,
    )
    .await;
    let out = ok(
        b,
        &[
            "group",
            "delete-offsets",
            "--group",
            &group,
            "--topic",
            &format!("{topic}:1"),
        ],
        None,
    )
    .await;
    assert_eq!(
        out.lines()
            .nth(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec![topic.as_str(), "1", "Successful"]),
        "{out}"
    );
    assert_eq!(
        committed(b, &group, &topic).await,
        BTreeMap::from([(0, Some(3))])
    );
}

/// `records delete` moves the log start: a read from the beginning starts
/// there. Above the high watermark it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_delete_moves_the_log_start() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = topic_with_records(b, "del-records", 1, 6).await;
    let out = ok(
        b,
        &[
            "records",
            "delete",
            "--topic",
            &topic,
            "--partition",
            "0",
            "--offset",
            "4",
        ],
        None,
    )
    .await;
    assert_eq!(
        out,
        format!(
            "TOPIC{}  PARTITION  LOW-WATERMARK\n{topic}  0          4\n",
            " ".repeat(topic.len() - 5)
        )
    );
    let read = ok(
        b,
        &["consume", "--topic", &topic, "-e", "--offset", "beginning"],
        None,
    )
    .await;
    assert_eq!(read, "4\n5\n");
    let stderr = fails(
        b,
        &[
            "records",
            "delete",
            "--topic",
            &topic,
            "--partition",
            "0",
            "--offset",
            "7",
        ],
    )
    .await;
    assert!(stderr.contains("OFFSET_OUT_OF_RANGE"), "{stderr}");
}

/// `config alter` changes only the named configs, as `config describe`
/// shows: set, append, delete on a topic; set and delete on a broker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_alter_changes_the_named_configs() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let topic = unique_name("cfg");
    ok(b, &["topic", "create", &topic, "--partitions", "1"], None).await;
    let overrides = |res: Vec<String>| async move {
        let mut args: Vec<&str> = vec!["config", "describe", "--overrides"];
        args.extend(res.iter().map(String::as_str));
        let out = ok(b, &args, None).await;
        out.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                (c[0].to_string(), c[1].to_string())
            })
            .collect::<BTreeMap<String, String>>()
    };
    let t = vec!["--topic".to_string(), topic.clone()];
    // The broker answering `describe` applies a topic's change once it
    // reaches its metadata image (the controller committed it first): wait
    // for (retention.ms, cleanup.policy) to show; the test fails if they
    // never do.
    let topic_values = |expected: (Option<&'static str>, Option<&'static str>)| {
        let t = t.clone();
        wait_for("the topic's overrides", move || {
            let t = t.clone();
            async move {
                let o = overrides(t).await;
                let seen = (o.get("retention.ms"), o.get("cleanup.policy"));
                (seen.0.map(String::as_str) == expected.0
                    && seen.1.map(String::as_str) == expected.1)
                    .then_some(())
            }
        })
    };
    ok(
        b,
        &[
            "config",
            "alter",
            "--topic",
            &topic,
            "--set",
            "retention.ms=123456",
            "--append",
            "cleanup.policy=compact",
        ],
        None,
    )
    .await;
    topic_values((Some("123456"), Some("delete,compact"))).await;
    ok(
        b,
        &[
            "config",
            "alter",
            "--topic",
            &topic,
            "--delete",
            "retention.ms",
            "--subtract",
            "cleanup.policy=delete",
        ],
        None,
    )
    .await;
    topic_values((None, Some("compact"))).await;
    let stderr = fails(
        b,
        &[
            "config",
            "alter",
            "--topic",
            &topic,
            "--set",
            "retention.ms=soon",
        ],
    )
    .await;
    assert!(stderr.contains("INVALID_CONFIG"), "{stderr}");

    let br = vec!["--broker".to_string(), "1".to_string()];
    ok(
        b,
        &[
            "config",
            "alter",
            "--broker",
            "1",
            "--set",
            "log.cleaner.backoff.ms=15001",
        ],
        None,
    )
    .await;
    // A broker applies a dynamic config once the change reaches its
    // metadata image: wait for it to show.
    let broker_value = |expected: Option<&'static str>| {
        let br = br.clone();
        wait_for("the broker's log.cleaner.backoff.ms override", move || {
            let br = br.clone();
            async move {
                let seen = overrides(br).await.get("log.cleaner.backoff.ms").cloned();
                (seen.as_deref() == expected).then_some(seen)
            }
        })
    };
    assert_eq!(broker_value(Some("15001")).await.as_deref(), Some("15001"));
    ok(
        b,
        &[
            "config",
            "alter",
            "--broker",
            "1",
            "--delete",
            "log.cleaner.backoff.ms",
        ],
        None,
    )
    .await;
    assert_eq!(broker_value(None).await, None);
}

/// `cluster describe` names the cluster's id and its one broker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_describe_names_the_cluster_and_its_broker() {
    let k = kafka().await;
    let out = ok(&k.bootstrap(), &["cluster", "describe"], None).await;
    assert!(
        out.starts_with(&format!("Cluster: {}\tController: 1\n", k.cluster_id())),
        "{out}"
    );
    let broker: Vec<&str> = out.lines().nth(3).unwrap().split_whitespace().collect();
    assert_eq!((broker[0], broker[4]), ("1", "false"), "{out}");
}

/// ACLs on a broker with `StandardAuthorizer` (the test's principal,
/// `User:ANONYMOUS` on PLAINTEXT, is a super user): bindings added are
/// listed, filtered, and removed; the shared broker, without an authorizer,
/// refuses with SECURITY_DISABLED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_are_added_listed_and_removed() {
    let shared = kafka().await.bootstrap();
    let stderr = fails(&shared, &["acl", "list"]).await;
    assert!(stderr.contains("SECURITY_DISABLED"), "{stderr}");

    let k = KafkaCluster::builder()
        .broker_config(
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        )
        .broker_config("super.users", "User:ANONYMOUS")
        .fast_jvm(true)
        .start()
        .await
        .expect("a Kafka with StandardAuthorizer");
    let b = k.bootstrap();
    let b = b.as_str();
    ok(
        b,
        &[
            "acl",
            "add",
            "--principal",
            "User:billing",
            "--operation",
            "read",
            "--operation",
            "describe",
            "--topic",
            "orders",
        ],
        None,
    )
    .await;
    ok(
        b,
        &[
            "acl",
            "add",
            "--principal",
            "User:billing",
            "--operation",
            "read",
            "--group",
            "billing-",
            "--resource-pattern-type",
            "prefixed",
            "--permission",
            "deny",
        ],
        None,
    )
    .await;
    acls_listed(
        b,
        &[],
        &[
            "User:billing * READ ALLOW TOPIC LITERAL orders",
            "User:billing * DESCRIBE ALLOW TOPIC LITERAL orders",
            "User:billing * READ DENY GROUP PREFIXED billing-",
        ],
    )
    .await;
    acls_listed(
        b,
        &["--group", "billing-app", "--resource-pattern-type", "match"],
        &["User:billing * READ DENY GROUP PREFIXED billing-"],
    )
    .await;
    assert_eq!(
        acl_rows(
            ok(
                b,
                &[
                    "acl",
                    "remove",
                    "--principal",
                    "User:billing",
                    "--topic",
                    "orders",
                    "--operation",
                    "describe"
                ],
                None
            )
            .await
        ),
        ["User:billing * DESCRIBE ALLOW TOPIC LITERAL orders"]
    );
    acls_listed(
        b,
        &["--topic", "orders"],
        &["User:billing * READ ALLOW TOPIC LITERAL orders"],
    )
    .await;
}

/// The bindings of an `acl list` or `acl remove` output, one line each with
/// single spaces (the header left out).
fn acl_rows(out: String) -> Vec<String> {
    out.lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Waits until `acl list FILTER` shows exactly `expected`. The controller
/// commits an ACL change before it answers; a broker's authorizer, which
/// answers the list, applies it when it replays the metadata log, so a list
/// right after the change may still show the bindings before it (as with
/// Java's `kafka-acls.sh`).
async fn acls_listed(b: &str, filter: &[&str], expected: &[&str]) {
    let mut args = vec!["acl", "list"];
    args.extend_from_slice(filter);
    let args = &args;
    wait_for(
        &format!("acl list {filter:?} to show {expected:?}"),
        || async move { (acl_rows(ok(b, args, None).await) == expected).then_some(()) },
    )
    .await;
}
