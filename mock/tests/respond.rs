//! Answers a test writes: a [`Response`] given by an interceptor or a
//! queued fault, or released onto a held request, is what the client
//! reads, at the request's version, and the request changes nothing.
//! Each test waits on conditions, never on time.

use kafka_client::TransactionState;
use kafka_client::requests::describe_transactions::describe_transaction_on;
use kafka_client::{Cluster, ClusterConfig, Connection, CoordinatorType, find_coordinator};
use kafka_mock::{Fault, FaultAction, HoldHandle, MockCluster, MockConfig, Response};
use kafka_proto::ApiKey;
use kafka_proto::messages::{
    DescribeTransactionsResponse, DescribeTransactionsResponseTransactionState, EndTxnResponse,
};
use std::sync::Arc;
use std::time::Duration;

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the awaited condition within 30 s")
}

/// "tx" is open at producer 1000, epoch 5: an answer the mock's
/// coordinator, which has never heard of "tx", would not give.
fn ongoing_at_epoch_5() -> Response {
    Response::new(DescribeTransactionsResponse {
        transaction_states: vec![DescribeTransactionsResponseTransactionState {
            transactional_id: "tx".into(),
            transaction_state: "Ongoing".into(),
            producer_id: 1000,
            producer_epoch: 5,
            ..Default::default()
        }],
        ..Default::default()
    })
}

/// A cluster and a connection to the coordinator of "tx".
async fn coordinator_of_tx() -> (MockCluster, Arc<Connection>) {
    let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let c = find_coordinator(&cluster, CoordinatorType::Transaction, "tx")
        .await
        .unwrap();
    (mock, c.connection)
}

/// The (state, producer id, epoch) the coordinator describes for "tx".
async fn described(conn: &Connection) -> Option<(TransactionState, i64, i16)> {
    bounded(describe_transaction_on(conn, "tx"))
        .await
        .unwrap()
        .map(|t| (t.state, t.producer_id, t.producer_epoch))
}

#[tokio::test]
async fn an_interceptor_answers_with_the_response_it_wrote() {
    let (mock, conn) = coordinator_of_tx().await;
    assert_eq!(described(&conn).await, None, "the broker's own answer");
    let answer = ongoing_at_epoch_5();
    mock.set_interceptor(Arc::new(move |r| {
        (r.api == ApiKey::DescribeTransactions).then(|| FaultAction::Respond(answer.clone()))
    }));
    for _ in 0..2 {
        assert_eq!(
            described(&conn).await,
            Some((TransactionState::Ongoing, 1000, 5))
        );
    }
    assert_eq!(
        mock.transaction_state("tx"),
        None,
        "the request changed nothing"
    );
}

#[tokio::test]
async fn a_queued_response_answers_the_next_matching_requests_only() {
    let (mock, conn) = coordinator_of_tx().await;
    mock.inject(
        Fault::new(FaultAction::Respond(ongoing_at_epoch_5())).api(ApiKey::DescribeTransactions),
    );
    assert_eq!(
        described(&conn).await,
        Some((TransactionState::Ongoing, 1000, 5))
    );
    assert_eq!(mock.pending_faults(), 0);
    assert_eq!(described(&conn).await, None, "then the broker answers");
}

#[tokio::test]
async fn a_held_request_is_released_with_a_response() {
    let (mock, conn) = coordinator_of_tx().await;
    let gate = HoldHandle::new();
    mock.inject(Fault::new(FaultAction::Hold(gate.clone())).api(ApiKey::DescribeTransactions));
    let asked = tokio::spawn(async move { described(&conn).await });
    let held = bounded(gate.wait_held(1)).await;
    assert_eq!(held[0].api, ApiKey::DescribeTransactions);
    gate.release_oldest_with(FaultAction::Respond(ongoing_at_epoch_5()));
    assert_eq!(
        asked.await.unwrap(),
        Some((TransactionState::Ongoing, 1000, 5))
    );
}

#[tokio::test]
async fn a_response_for_another_api_closes_the_connection() {
    let (mock, conn) = coordinator_of_tx().await;
    let end_txn = Response::new(EndTxnResponse::default());
    assert_eq!(end_txn.api(), ApiKey::EndTxn);
    mock.inject(Fault::new(FaultAction::Respond(end_txn)).api(ApiKey::DescribeTransactions));
    let answer = bounded(describe_transaction_on(&conn, "tx")).await;
    assert!(answer.is_err(), "{answer:?}");
}
