//! The operator commands against `kafka-eos mock --acl-authorizer`: an
//! operator's tooling tested without a broker. One mock process serves the
//! whole scenario; every command is a separate `kafka-eos` process, as an
//! operator runs them: `records delete`, `group reset-offsets` and
//! `group delete-offsets`, `config alter` / `config describe`,
//! `cluster describe`, `acl add/list/remove`. The same commands against
//! real Kafka are in admin_ops.rs; what the mock answers is checked
//! against Kafka 4.4 by the differential suite of kafka-eos-tests.

use crate::common;
use common::{ok, run, start_mock};

/// Each output line after the header, its columns joined by one space.
fn rows(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Invariant: each command changes exactly what it names, as the next
/// command shows: the log start moves to the deleted offset (a read from
/// the beginning starts there), a reset commits its plan and a deleted
/// offset is gone, config overrides appear and disappear, and ACLs are
/// listed, filtered and removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_commands_run_against_the_mock() {
    let (_mock, b) = start_mock(&["--acl-authorizer", "--topic", "ops:2"]).await;
    let b = b.as_str();
    for p in 0..2 {
        let lines: String = (0..6).map(|v| format!("{v}\n")).collect();
        ok(
            b,
            &["produce", "--topic", "ops", "--partition", &p.to_string()],
            Some(lines.as_bytes()),
        )
        .await;
    }

    // records delete, then a read from the beginning.
    ok(
        b,
        &[
            "records",
            "delete",
            "--topic",
            "ops",
            "--partition",
            "0",
            "--offset",
            "4",
        ],
        None,
    )
    .await;
    let read = ok(
        b,
        &[
            "consume",
            "--topic",
            "ops",
            "--partitions",
            "0",
            "-e",
            "--offset",
            "beginning",
        ],
        None,
    )
    .await;
    assert_eq!(read.lines().collect::<Vec<_>>(), ["4", "5"], "{read}");

    // group reset-offsets --execute, then delete-offsets of partition 1.
    ok(
        b,
        &[
            "group",
            "reset-offsets",
            "--group",
            "billing",
            "--topic",
            "ops",
            "--to-earliest",
            "--execute",
        ],
        None,
    )
    .await;
    let described = ok(b, &["group", "describe", "billing"], None).await;
    let committed: Vec<String> = described
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| c.len() >= 4 && c[0] == "billing" && c[1] == "ops")
        .map(|c| format!("{}:{}", c[2], c[3]))
        .collect();
    assert_eq!(committed, ["0:4", "1:0"], "{described}");
    let deleted = ok(
        b,
        &[
            "group",
            "delete-offsets",
            "--group",
            "billing",
            "--topic",
            "ops:1",
        ],
        None,
    )
    .await;
    assert_eq!(rows(&deleted), ["ops 1 Successful"], "{deleted}");

    // config alter / describe.
    ok(
        b,
        &[
            "config",
            "alter",
            "--topic",
            "ops",
            "--set",
            "retention.ms=123456",
            "--append",
            "cleanup.policy=compact",
        ],
        None,
    )
    .await;
    let overrides = ok(
        b,
        &["config", "describe", "--overrides", "--topic", "ops"],
        None,
    )
    .await;
    assert_eq!(
        rows(&overrides)
            .iter()
            .map(|r| r.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        ["cleanup.policy delete,compact", "retention.ms 123456"],
        "{overrides}"
    );
    let refused = run(
        b,
        &[
            "config",
            "alter",
            "--topic",
            "ops",
            "--set",
            "retention.ms=soon",
        ],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("INVALID_CONFIG"), "{stderr}");

    // cluster describe.
    let cluster = ok(b, &["cluster", "describe"], None).await;
    assert!(
        cluster.starts_with("Cluster: kafka-mock\tController: 1\n"),
        "{cluster}"
    );

    // acl add / list / remove.
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
    assert_eq!(
        rows(&ok(b, &["acl", "list"], None).await),
        [
            "User:billing * READ ALLOW TOPIC LITERAL orders",
            "User:billing * DESCRIBE ALLOW TOPIC LITERAL orders",
            "User:billing * READ DENY GROUP PREFIXED billing-",
        ]
    );
    let matching = ok(
        b,
        &[
            "acl",
            "list",
            "--group",
            "billing-app",
            "--resource-pattern-type",
            "match",
        ],
        None,
    )
    .await;
    assert_eq!(
        rows(&matching),
        ["User:billing * READ DENY GROUP PREFIXED billing-"]
    );
    let removed = ok(
        b,
        &[
            "acl",
            "remove",
            "--principal",
            "User:billing",
            "--topic",
            "orders",
            "--operation",
            "describe",
        ],
        None,
    )
    .await;
    assert_eq!(
        rows(&removed),
        ["User:billing * DESCRIBE ALLOW TOPIC LITERAL orders"]
    );
    assert_eq!(
        rows(&ok(b, &["acl", "list", "--topic", "orders"], None).await),
        ["User:billing * READ ALLOW TOPIC LITERAL orders"]
    );
}
