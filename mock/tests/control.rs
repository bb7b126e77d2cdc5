//! The control calls a test makes on a [`MockCluster`]: what a fresh
//! cluster reports, what each call changes, and the errors it returns.
//! Each test is one scenario, named for its invariant.

use kafka_mock::{
    CLIENT_APIS, CoordinatorKind, Fault, FaultAction, HoldHandle, KafkaRelease, MockConfig,
    MockError, Nemesis, NemesisConfig, NemesisFault, NemesisReport, TransactionVersion, TxnState,
};
use kafka_proto::ApiKey;
use std::time::Duration;

use crate::common::cluster;

#[test]
fn errors_name_what_is_missing() {
    assert_eq!(
        MockError::UnknownBroker(9).to_string(),
        "no broker 9 in the cluster"
    );
}

#[test]
fn kafka_3_9_has_transaction_version_1_whatever_is_configured() {
    let old = MockConfig {
        release: KafkaRelease::V3_9,
        transaction_version: TransactionVersion::V2,
        ..MockConfig::default()
    };
    assert_eq!(old.effective_transaction_version(), TransactionVersion::V1);
    let new = MockConfig {
        transaction_version: TransactionVersion::V1,
        ..MockConfig::default()
    };
    assert_eq!(new.effective_transaction_version(), TransactionVersion::V1);
}

#[test]
fn transaction_states_are_named_as_kafka_admin_apis_spell_them() {
    assert_eq!(TxnState::PrepareCommit.name(), "PrepareCommit");
    assert_eq!(TxnState::CompleteAbort.name(), "CompleteAbort");
}

#[tokio::test]
async fn brokers_are_numbered_from_1_on_loopback() {
    assert_eq!(cluster(1).await.broker_ids(), vec![1]);
    let three = cluster(3).await;
    assert_eq!(three.broker_ids(), vec![1, 2, 3]);
    let addrs: Vec<std::net::SocketAddr> = three
        .bootstrap()
        .split(',')
        .map(|a| a.parse().unwrap())
        .collect();
    assert_eq!(addrs.len(), 3);
    assert!(addrs.iter().all(|a| a.ip().is_loopback()));
}

#[tokio::test]
async fn a_topic_name_is_created_once() {
    let cluster = cluster(1).await;
    cluster.create_topic("t", 3).unwrap();
    assert!(matches!(
        cluster.create_topic("t", 3),
        Err(MockError::Refused(_))
    ));
}

#[tokio::test]
async fn a_new_partition_is_empty_and_led_by_its_broker() {
    let cluster = cluster(1).await;
    cluster.create_topic("t", 1).unwrap();
    assert_eq!(cluster.leader("t", 0), Some(1));
    assert_eq!(cluster.offsets("t", 0), Some((0, 0)));
    assert!(cluster.batches("t", 0).unwrap().is_empty());
    assert!(cluster.batches("t", 1).is_none(), "no partition 1");
    assert!(cluster.describe().starts_with("t-0 (leader 1"));
}

#[tokio::test]
async fn a_fresh_cluster_knows_no_transaction_and_no_request() {
    let cluster = cluster(1).await;
    assert_eq!(cluster.transaction_state("nobody"), None);
    assert!(cluster.requests().is_empty());
    assert_eq!(cluster.pending_faults(), 0);
}

#[tokio::test]
async fn a_single_broker_coordinates_every_group() {
    let cluster = cluster(1).await;
    assert_eq!(cluster.coordinator(CoordinatorKind::Group, "g"), Some(1));
}

#[tokio::test]
async fn pending_faults_for_an_api_leave_out_faults_for_any_api() {
    let cluster = cluster(1).await;
    cluster.inject(Fault::new(FaultAction::DropResponse).api(ApiKey::EndTxn));
    cluster.inject(Fault::new(FaultAction::DisconnectBefore));
    assert_eq!(cluster.pending_faults(), 2);
    assert_eq!(cluster.pending_faults_for(ApiKey::EndTxn), 1);
    assert_eq!(cluster.pending_faults_for(ApiKey::Produce), 0);
}

#[tokio::test]
async fn clear_faults_drops_every_queued_fault() {
    let cluster = cluster(1).await;
    cluster.inject(Fault::new(FaultAction::DisconnectBefore).times(3));
    cluster.clear_faults();
    assert_eq!(cluster.pending_faults(), 0);
}

#[test]
fn a_fault_hits_one_request_of_any_api_at_any_broker_unless_narrowed() {
    let any = Fault::new(FaultAction::DisconnectBefore);
    assert_eq!((any.api, any.broker, any.times), (None, None, 1));
    let narrowed = any.api(ApiKey::Produce).broker(2).times(3);
    assert_eq!(
        (narrowed.api, narrowed.broker, narrowed.times),
        (Some(ApiKey::Produce), Some(2), 3)
    );
}

#[test]
fn a_new_hold_handle_holds_and_releases_nothing() {
    let gate = HoldHandle::new();
    assert!(gate.held().is_empty());
    assert_eq!(gate.release_oldest(), None);
    assert_eq!(
        gate.release_oldest_with(FaultAction::DisconnectBefore),
        None
    );
    assert_eq!(gate.release_all(), 0);
}

#[tokio::test]
async fn a_stopped_broker_hands_its_partitions_over_and_keeps_its_id() {
    let cluster = cluster(2).await;
    cluster.create_topic("t", 1).unwrap();
    cluster.stop_broker(1).await.unwrap();
    assert_eq!(cluster.leader("t", 0), Some(2));
    cluster.start_broker(1).unwrap();
    assert_eq!(cluster.broker_ids(), vec![1, 2]);
}

#[tokio::test]
async fn control_calls_on_an_unknown_broker_fail() {
    let cluster = cluster(1).await;
    cluster.create_topic("t", 1).unwrap();
    assert!(matches!(
        cluster.set_reachable(9, false),
        Err(MockError::UnknownBroker(9))
    ));
    assert!(matches!(
        cluster.cut_connections(9),
        Err(MockError::UnknownBroker(9))
    ));
    assert!(matches!(
        cluster.move_leader("t", 0, 9),
        Err(MockError::UnknownBroker(9))
    ));
    assert!(matches!(
        cluster.move_leader("t", 5, 1),
        Err(MockError::UnknownPartition(_, 5))
    ));
}

#[tokio::test]
async fn moved_leaders_and_coordinators_are_reported_where_they_went() {
    let cluster = cluster(3).await;
    cluster.create_topic("t", 1).unwrap();
    cluster.move_leader("t", 0, 2).unwrap();
    assert_eq!(cluster.leader("t", 0), Some(2));
    cluster
        .move_coordinator(CoordinatorKind::Transaction, "txn-1", 3)
        .unwrap();
    assert_eq!(
        cluster.coordinator(CoordinatorKind::Transaction, "txn-1"),
        Some(3)
    );
}

#[test]
fn the_nemesis_draws_every_kind_at_every_client_api_by_default() {
    let config = NemesisConfig::default();
    assert_eq!(config.kinds, NemesisFault::ALL.to_vec());
    assert_eq!(NemesisFault::ALL.len(), 10);
    assert_eq!(config.apis, CLIENT_APIS.to_vec());
    assert_eq!(NemesisReport::default().skipped, 0);
}

#[tokio::test]
async fn a_nemesis_stopped_before_it_runs_returns_at_once_with_nothing_done() {
    let cluster = cluster(1).await;
    let nemesis = Nemesis::new(NemesisConfig {
        seed: 1,
        ..NemesisConfig::default()
    });
    nemesis.stop();
    let report = nemesis.run(&cluster).await;
    assert!(report.log.is_empty());
}

#[tokio::test]
async fn a_nemesis_leaves_no_fault_queued_when_it_stops() {
    let cluster = cluster(2).await;
    let nemesis = Nemesis::new(NemesisConfig {
        seed: 3,
        pause: (Duration::from_millis(1), Duration::from_millis(2)),
        ..NemesisConfig::default()
    });
    let stop_after_five = async {
        nemesis.drawn_at_least(5).await;
        nemesis.stop();
    };
    let (report, ()) = tokio::join!(nemesis.run(&cluster), stop_after_five);
    assert!(report.log.len() as u64 + report.skipped >= 5);
    assert_eq!(cluster.pending_faults(), 0, "healed");
}
