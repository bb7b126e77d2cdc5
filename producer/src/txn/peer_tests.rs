//! The coordinator driver and the resume path against a scripted in-memory
//! peer (two "brokers" on 127.0.0.1:0): coordinator moves, timeouts of each
//! coordinator RPC, CONCURRENT_TRANSACTIONS with escalating backoff, fencing,
//! the transaction-timeout check and every resume outcome.

use super::*;
use bytes::BytesMut;
use kafka_client::{Cluster, ClusterConfig, ConnectionConfig};
use kafka_proto::frame::{
    FrameDecoder, RequestHeaderStart, decode_request_frame, encode_response_frame,
    peek_request_header,
};
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode as E};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Debug, Clone, Copy)]
enum Act {
    Error(E),
    /// Never answer (the client times out).
    Hold,
}

#[derive(Default)]
struct Script {
    addrs: Vec<(i32, String)>,
    coordinator: i32,
    acts: HashMap<ApiKey, VecDeque<Act>>,
    max_timeout: String,
    /// (node, api, epoch of EndTxn/InitProducerId, at)
    log: Vec<(i32, ApiKey, i16, Instant)>,
}

type Shared = Arc<Mutex<Script>>;

fn versions() -> ApiVersionsResponse {
    let keys = [
        (ApiKey::Produce, 3, 13),
        (ApiKey::Metadata, 0, 13),
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::FindCoordinator, 0, 6),
        (ApiKey::InitProducerId, 0, 5),
        (ApiKey::EndTxn, 0, 5),
        (ApiKey::TxnOffsetCommit, 0, 5),
        (ApiKey::DescribeConfigs, 1, 4),
        (ApiKey::DescribeTransactions, 0, 0),
    ];
    ApiVersionsResponse {
        finalized_features_epoch: 1,
        finalized_features: vec![FinalizedFeatureKey {
            name: "transaction.version".into(),
            max_version_level: 2,
            min_version_level: 2,
            ..Default::default()
        }],
        ..ApiVersionsResponse::listing(&keys)
    }
}

fn respond(s: &Shared, node: i32, frame: &[u8]) -> Option<BytesMut> {
    let RequestHeaderStart {
        api_key: api,
        api_version: v,
        correlation_id: cid,
    } = peek_request_header(frame).expect("a request header");
    let mut st = s.lock().unwrap();
    let act = st.acts.get_mut(&api).and_then(|q| q.pop_front());
    let mut epoch = -1;
    if api == ApiKey::EndTxn {
        epoch = decode_request_frame::<EndTxnRequest>(frame)
            .unwrap()
            .1
            .producer_epoch;
    }
    st.log.push((node, api, epoch, Instant::now()));
    if matches!(act, Some(Act::Hold)) {
        return None;
    }
    let err = match act {
        Some(Act::Error(e)) => e,
        _ => E::None,
    };
    if err == E::NotCoordinator {
        // The coordinator moved to the other node.
        st.coordinator = 3 - node;
    }
    Some(match api {
        ApiKey::ApiVersions => encode_response_frame(&versions(), v, cid).unwrap(),
        ApiKey::Metadata => {
            let brokers = st
                .addrs
                .iter()
                .map(|(id, a)| {
                    let (h, p) = a.rsplit_once(':').unwrap();
                    MetadataResponseBroker {
                        node_id: *id,
                        host: h.into(),
                        port: p.parse().unwrap(),
                        ..Default::default()
                    }
                })
                .collect();
            encode_response_frame(
                &MetadataResponse {
                    brokers,
                    controller_id: 1,
                    ..Default::default()
                },
                v,
                cid,
            )
            .unwrap()
        }
        ApiKey::FindCoordinator => {
            let req = decode_request_frame::<FindCoordinatorRequest>(frame)
                .unwrap()
                .1;
            let (id, addr) = st
                .addrs
                .iter()
                .find(|(id, _)| *id == st.coordinator)
                .cloned()
                .unwrap();
            let (h, p) = addr.rsplit_once(':').unwrap();
            let resp = FindCoordinatorResponse {
                coordinators: vec![FindCoordinatorResponseCoordinator {
                    key: req.coordinator_keys.first().cloned().unwrap_or_default(),
                    node_id: id,
                    host: h.into(),
                    port: p.parse().unwrap(),
                    error_code: err.code(),
                    ..Default::default()
                }],
                ..Default::default()
            };
            encode_response_frame(&resp, v, cid).unwrap()
        }
        ApiKey::DescribeConfigs => {
            let resp = DescribeConfigsResponse {
                results: vec![DescribeConfigsResponseDescribeConfigsResult {
                    resource_type: 4,
                    resource_name: node.to_string(),
                    configs: vec![DescribeConfigsResponseDescribeConfigsResourceResult {
                        name: "transaction.max.timeout.ms".into(),
                        value: Some(st.max_timeout.clone()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
            encode_response_frame(&resp, v, cid).unwrap()
        }
        ApiKey::InitProducerId => encode_response_frame(
            &InitProducerIdResponse {
                error_code: err.code(),
                producer_id: 1000,
                producer_epoch: 5,
                ..Default::default()
            },
            v,
            cid,
        )
        .unwrap(),
        ApiKey::EndTxn => encode_response_frame(
            &EndTxnResponse {
                error_code: err.code(),
                producer_id: 1000,
                producer_epoch: 6,
                ..Default::default()
            },
            v,
            cid,
        )
        .unwrap(),
        ApiKey::DescribeTransactions => encode_response_frame(
            &DescribeTransactionsResponse {
                transaction_states: vec![DescribeTransactionsResponseTransactionState {
                    transactional_id: "tx".into(),
                    transaction_state: "Ongoing".into(),
                    producer_id: 1000,
                    producer_epoch: 5,
                    ..Default::default()
                }],
                ..Default::default()
            },
            v,
            cid,
        )
        .unwrap(),
        other => panic!("unexpected {other:?}"),
    })
}

async fn serve(s: Shared, node: i32, listener: TcpListener) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let s = s.clone();
        tokio::spawn(async move {
            let mut dec = FrameDecoder::default();
            let mut buf = BytesMut::new();
            loop {
                while let Some(frame) = dec.decode(&mut buf).unwrap() {
                    if let Some(out) = respond(&s, node, &frame)
                        && sock.write_all(&out).await.is_err()
                    {
                        return;
                    }
                }
                match sock.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        });
    }
}

async fn cluster(script: Script) -> (Arc<Cluster>, Shared) {
    let s: Shared = Arc::new(Mutex::new(script));
    for node in [1, 2] {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        s.lock()
            .unwrap()
            .addrs
            .push((node, l.local_addr().unwrap().to_string()));
        tokio::spawn(serve(s.clone(), node, l));
    }
    let mut cfg = ClusterConfig::new(&s.lock().unwrap().addrs[0].1.clone());
    cfg.connection = ConnectionConfig {
        request_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    (Cluster::connect(cfg).await.unwrap(), s)
}

fn script(coordinator: i32, acts: &[(ApiKey, &[Act])]) -> Script {
    Script {
        coordinator,
        max_timeout: "900000".into(),
        acts: acts
            .iter()
            .map(|(k, a)| (*k, a.iter().copied().collect()))
            .collect(),
        ..Default::default()
    }
}

fn calls(s: &Shared, api: ApiKey) -> Vec<(i32, i16, Instant)> {
    s.lock()
        .unwrap()
        .log
        .iter()
        .filter(|l| l.1 == api)
        .map(|l| (l.0, l.2, l.3))
        .collect()
}

fn prepared() -> PreparedTransaction {
    PreparedTransaction {
        transactional_id: "tx".into(),
        producer_id: 1000,
        producer_epoch: 5,
        transaction_version: TransactionVersion::V2,
    }
}

/// A client with a resumed (started) transaction, ready to commit.
fn resumed_client(cluster: Arc<Cluster>) -> TxnDriver {
    let client = TxnDriver::new(cluster, TxnConfig::new("tx"));
    client.lock().set_jitter_factor(1.0);
    client.lock().resume_prepared(&prepared()).unwrap();
    client
}

#[tokio::test]
async fn coordinator_moves_and_an_end_txn_timeout_retries_the_same_end_txn() {
    // EndTxn on node 1: NOT_COORDINATOR (coordinator moved to node 2); on
    // node 2 the first EndTxn times out (outcome unknown) and the retry is
    // answered NONE (the coordinator's answer to a retry of a completed commit).
    let (cluster, s) = cluster(script(
        1,
        &[(ApiKey::EndTxn, &[Act::Error(E::NotCoordinator), Act::Hold])],
    ))
    .await;
    let client = resumed_client(cluster);
    client
        .commit_transaction(Duration::from_secs(10))
        .await
        .unwrap();
    let ends = calls(&s, ApiKey::EndTxn);
    assert_eq!(
        ends.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        vec![(1, 5), (2, 5), (2, 5)],
        "same EndTxn, new coordinator"
    );
    assert!(
        calls(&s, ApiKey::FindCoordinator).len() >= 3,
        "rediscovered after NOT_COORDINATOR and after the timeout"
    );
    assert!(
        calls(&s, ApiKey::InitProducerId).is_empty(),
        "a resumed transaction never calls InitProducerId"
    );
    let m = client.lock();
    assert_eq!(m.state(), State::Ready);
    assert_eq!(
        m.producer_id_and_epoch(),
        ProducerIdAndEpoch {
            producer_id: 1000,
            epoch: 6
        },
        "TV2: adopted from EndTxn v5"
    );
}

#[tokio::test]
async fn timeouts_of_find_coordinator_and_init_producer_id_are_retried() {
    let (cluster, s) = cluster(script(
        1,
        &[
            (ApiKey::FindCoordinator, &[Act::Hold]),
            (ApiKey::InitProducerId, &[Act::Hold]),
        ],
    ))
    .await;
    let client = TxnDriver::new(cluster, TxnConfig::new("tx"));
    client
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(calls(&s, ApiKey::InitProducerId).len(), 2);
    let m = client.lock();
    assert_eq!(m.state(), State::Ready);
    assert_eq!(m.transaction_version(), TransactionVersion::V2);
}

#[tokio::test]
async fn concurrent_transactions_is_retried_with_escalating_backoff() {
    let cc = Act::Error(E::ConcurrentTransactions);
    let (cluster, s) = cluster(script(1, &[(ApiKey::EndTxn, &[cc, cc, cc])])).await;
    let client = resumed_client(cluster);
    client
        .commit_transaction(Duration::from_secs(10))
        .await
        .unwrap();
    let ends = calls(&s, ApiKey::EndTxn);
    assert_eq!(ends.len(), 4);
    let gaps: Vec<u128> = ends
        .windows(2)
        .map(|w| (w[1].2 - w[0].2).as_millis())
        .collect();
    for (gap, min) in gaps.iter().zip([100, 200, 400]) {
        assert!(*gap >= min && *gap < min + 250, "gaps {gaps:?}");
    }
}

#[tokio::test]
async fn producer_fenced_is_fatal() {
    let (cluster, _s) = cluster(script(
        1,
        &[(ApiKey::EndTxn, &[Act::Error(E::ProducerFenced)])],
    ))
    .await;
    let client = resumed_client(cluster);
    let e = client
        .commit_transaction(Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        TransactionError::Fenced {
            api: TxnApi::EndTxn,
            version: 5,
            error: E::ProducerFenced
        }
    );
    assert_eq!(client.lock().state(), State::FatalError);
    assert!(client.begin_transaction().is_err());
}

#[tokio::test]
async fn transaction_timeout_is_checked_against_the_broker_maximum() {
    let mut sc = script(2, &[]);
    sc.max_timeout = "1000".into();
    let (cluster, s) = cluster(sc).await;
    let client = TxnDriver::new(cluster, TxnConfig::new("tx"));
    let e = client
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        TransactionError::TransactionTimeoutTooLarge {
            requested_ms: 60_000,
            broker_max_ms: 1000
        }
    );
    assert!(
        e.to_string().contains("60000") && e.to_string().contains("1000"),
        "{e}"
    );
    assert!(calls(&s, ApiKey::InitProducerId).is_empty());
    assert_eq!(
        calls(&s, ApiKey::DescribeConfigs)[0].0,
        2,
        "asked the coordinator"
    );
}

#[tokio::test]
async fn resume_outcomes_against_the_peer() {
    let cases: Vec<(Vec<Act>, ResumeOutcome)> = vec![
        (vec![], ResumeOutcome::Committed),
        (
            vec![Act::Error(E::InvalidTxnState)],
            ResumeOutcome::AbortedByBroker {
                error: E::InvalidTxnState,
                state: Some(TransactionState::Ongoing),
            },
        ),
        (
            vec![Act::Error(E::ProducerFenced)],
            ResumeOutcome::Fenced {
                error: E::ProducerFenced,
                state: Some(TransactionState::Ongoing),
            },
        ),
        (
            vec![
                Act::Error(E::ConcurrentTransactions),
                Act::Error(E::ConcurrentTransactions),
            ],
            ResumeOutcome::Committed,
        ),
        (vec![Act::Hold], ResumeOutcome::Committed),
        (
            vec![Act::Error(E::NotCoordinator)],
            ResumeOutcome::Committed,
        ),
    ];
    for (acts, want) in cases {
        let (cluster, s) = cluster(script(1, &[(ApiKey::EndTxn, &acts)])).await;
        let got = commit_prepared(&cluster, &prepared(), &ResumeOptions::default())
            .await
            .unwrap();
        assert_eq!(got, want, "{acts:?}");
        let ends = calls(&s, ApiKey::EndTxn);
        assert_eq!(
            ends.len(),
            acts.len()
                + usize::from(!matches!(
                    want,
                    ResumeOutcome::AbortedByBroker { .. } | ResumeOutcome::Fenced { .. }
                )),
            "{acts:?}"
        );
        assert!(ends.iter().all(|e| e.1 == 5), "always the prepared epoch");
        assert!(
            calls(&s, ApiKey::InitProducerId).is_empty(),
            "never InitProducerId"
        );
    }
}

/// EndTxn never overtakes a batch: a record appended (and the commit begun)
/// between the driver's look at the producer's incomplete batches and its
/// pick of the next request must hold the EndTxn until that batch is done.
#[tokio::test]
async fn end_txn_waits_for_a_batch_appended_while_the_driver_probes() {
    use std::sync::atomic::{AtomicU8, Ordering};
    let (cluster, s) = cluster(script(1, &[])).await;
    let mut client = TxnDriver::new(cluster, TxnConfig::new("tx"));
    let manager = client.manager().clone();
    // 0: the user has not appended yet; 1: appended, batch incomplete;
    // 2: batch acknowledged.
    let batch = Arc::new(AtomicU8::new(0));
    let probe_batch = batch.clone();
    client.set_incomplete_batches_probe(Arc::new(move || {
        let b = probe_batch.load(Ordering::SeqCst);
        let mut m = manager.lock().unwrap();
        if b == 0 && m.state() == State::InTransaction {
            // The probe read "nothing incomplete"; before the driver picks
            // its request, the user appends a record and commits.
            m.on_partition_used(&crate::TopicPartition::new("t", 0))
                .unwrap();
            m.commit_transaction().unwrap();
            probe_batch.store(1, Ordering::SeqCst);
        }
        b == 1
    }));
    client
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    client.begin_transaction().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(!client.run_once(deadline).await, "EndTxn held");
    assert_eq!(client.lock().state(), State::CommittingTransaction);
    assert!(
        !client.run_once(deadline).await,
        "still held: batch incomplete"
    );
    assert!(calls(&s, ApiKey::EndTxn).is_empty());
    batch.store(2, Ordering::SeqCst);
    assert!(client.run_once(deadline).await, "EndTxn sent");
    assert_eq!(calls(&s, ApiKey::EndTxn).len(), 1);
    assert_eq!(client.lock().state(), State::Ready);
}

/// A caller that gives up on `init_transactions` while its InitProducerId is
/// in flight (dropping the future) leaves no request stuck "in flight": the
/// request is put back, and calling `init_transactions` again completes.
#[tokio::test]
async fn an_abandoned_request_is_retried_not_left_in_flight() {
    let (cluster, s) = cluster(script(1, &[(ApiKey::InitProducerId, &[Act::Hold])])).await;
    let client = TxnDriver::new(cluster, TxnConfig::new("tx"));
    {
        let init = client.init_transactions(Duration::from_secs(10));
        tokio::pin!(init);
        let sent = async {
            while calls(&s, ApiKey::InitProducerId).is_empty() {
                tokio::task::yield_now().await;
            }
        };
        tokio::select! {
            r = &mut init => panic!("the held InitProducerId cannot complete: {r:?}"),
            () = sent => {} // in flight: the caller gives up (drops `init`)
        }
    }
    assert!(
        !client.lock().has_in_flight_request(),
        "the abandoned request was put back"
    );
    client
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(client.lock().state(), State::Ready);
    assert_eq!(calls(&s, ApiKey::InitProducerId).len(), 2, "sent again");
}
