//! DescribeTransactions of one transactional id on its coordinator: the
//! coordinator's view of the transaction (state, timeout, start, producer
//! id and epoch, partitions). The admin client describes transactions with
//! it; the transactional producer reads it before finishing a prepared
//! transaction from another process.
//!
//! ```no_run
//! # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
//! use kafka_client::requests::describe_transactions::describe_transaction_on;
//! use kafka_client::{CoordinatorType, find_coordinator};
//! let c = find_coordinator(cluster, CoordinatorType::Transaction, "orders-sink-0").await?;
//! if let Some(t) = describe_transaction_on(&c.connection, "orders-sink-0").await? {
//!     println!("{}: {} partitions", t.state, t.partitions.len());
//! }
//! # Ok(()) }
//! ```

use crate::error::RequestError;
use crate::{Connection, TopicPartition, TransactionState};
use kafka_proto::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
use kafka_proto::{ApiKey, ErrorCode};

/// The coordinator's view of one transactional id (DescribeTransactions;
/// Java's `TransactionDescription` without the coordinator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionSnapshot {
    /// The transactional id.
    pub transactional_id: String,
    /// The coordinator's state of the transaction.
    pub state: TransactionState,
    /// `transaction.timeout.ms` the producer registered.
    pub timeout_ms: i32,
    /// Start of the open transaction (ms since the epoch; -1 if none).
    pub start_time_ms: i64,
    /// The current producer id of the transactional id.
    pub producer_id: i64,
    /// The current producer epoch.
    pub producer_epoch: i16,
    /// The partitions in the transaction (while it is being completed, only
    /// those still without a marker).
    pub partitions: Vec<TopicPartition>,
}

/// DescribeTransactions of `transactional_id` on `conn` (its transaction
/// coordinator), once. `None` when the coordinator does not know the id
/// (TRANSACTIONAL_ID_NOT_FOUND, or no entry in the answer); any other error
/// code is a [`RequestError::Broker`] whose message is the id.
///
/// ```no_run
/// # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// use kafka_client::requests::describe_transactions::describe_transaction_on;
/// let before = describe_transaction_on(conn, "orders-sink-0").await?;
/// println!("{:?}", before.map(|t| (t.producer_id, t.producer_epoch)));
/// # Ok(()) }
/// ```
pub async fn describe_transaction_on(
    conn: &Connection,
    transactional_id: &str,
) -> Result<Option<TransactionSnapshot>, RequestError> {
    let version = conn
        .versions()
        .version_for::<DescribeTransactionsRequest>()?;
    let resp = conn.send(&request(transactional_id), version).await?;
    snapshot(version, transactional_id, resp)
}

/// The request for one transactional id.
fn request(transactional_id: &str) -> DescribeTransactionsRequest {
    DescribeTransactionsRequest {
        transactional_ids: vec![transactional_id.to_string()],
        ..Default::default()
    }
}

/// The answer for `transactional_id` in `resp` (its first entry).
fn snapshot(
    version: i16,
    transactional_id: &str,
    resp: DescribeTransactionsResponse,
) -> Result<Option<TransactionSnapshot>, RequestError> {
    let Some(s) = resp.transaction_states.into_iter().next() else {
        return Ok(None);
    };
    match ErrorCode::from(s.error_code) {
        ErrorCode::None => Ok(Some(TransactionSnapshot {
            state: TransactionState::parse(&s.transaction_state),
            timeout_ms: s.transaction_timeout_ms,
            start_time_ms: s.transaction_start_time_ms,
            producer_id: s.producer_id,
            producer_epoch: s.producer_epoch,
            partitions: s
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| TopicPartition::new(t.topic.as_str(), *p))
                })
                .collect(),
            transactional_id: s.transactional_id,
        })),
        ErrorCode::TransactionalIdNotFound => Ok(None),
        error => Err(RequestError::Broker {
            api: ApiKey::DescribeTransactions,
            version,
            error,
            message: Some(transactional_id.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::Message;
    use kafka_proto::messages::{
        DescribeTransactionsResponseTopicData, DescribeTransactionsResponseTransactionState,
    };

    /// v0 (the only version): the request carries exactly the one id.
    #[test]
    fn v0_request_names_the_one_transactional_id() {
        let bytes = request("tx").encode_to_vec(0).unwrap();
        assert_eq!(bytes, [2, 3, b't', b'x', 0]);
    }

    /// The kafka-proto v0 response fixture (an ongoing transaction over
    /// partitions 0 and 2 of "t") becomes the snapshot field for field.
    #[test]
    fn v0_response_fixture_becomes_a_snapshot() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // transaction_states: 1 element
            0, 0, // error_code
            3, b't', b'x', // transactional_id "tx"
            8, b'O', b'n', b'g', b'o', b'i', b'n', b'g', // "Ongoing"
            0, 0, 0xea, 0x60, // transaction_timeout_ms 60000
            0, 0, 0, 0, 0, 0, 0x03, 0xe8, // transaction_start_time_ms 1000
            0, 0, 0, 0, 0, 0, 0x0f, 0xa0, // producer_id 4000
            0, 7, // producer_epoch 7
            2, // topics: 1 element
            2, b't', // topic "t"
            3, 0, 0, 0, 0, 0, 0, 0, 2, // partitions [0, 2]
            0, 0, 0, // tags
        ];
        let resp = DescribeTransactionsResponse::decode(bytes, 0).unwrap();
        assert_eq!(
            snapshot(0, "tx", resp).unwrap(),
            Some(TransactionSnapshot {
                transactional_id: "tx".into(),
                state: TransactionState::Ongoing,
                timeout_ms: 60_000,
                start_time_ms: 1000,
                producer_id: 4000,
                producer_epoch: 7,
                partitions: vec![TopicPartition::new("t", 0), TopicPartition::new("t", 2)],
            })
        );
    }

    fn answer(error: ErrorCode) -> DescribeTransactionsResponse {
        DescribeTransactionsResponse {
            transaction_states: vec![DescribeTransactionsResponseTransactionState {
                error_code: error.code(),
                transactional_id: "tx".into(),
                topics: vec![DescribeTransactionsResponseTopicData::default()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// An id the coordinator does not know is `None`, not an error.
    #[test]
    fn unknown_transactional_id_is_none() {
        let unknown = snapshot(0, "tx", answer(ErrorCode::TransactionalIdNotFound));
        assert_eq!(unknown.unwrap(), None);
        let empty = snapshot(0, "tx", DescribeTransactionsResponse::default());
        assert_eq!(empty.unwrap(), None, "no entry in the answer");
    }

    /// Any other error code is the broker's error, with the API, version and
    /// the id, and keeps its retriability.
    #[test]
    fn other_error_codes_are_broker_errors() {
        let e = snapshot(0, "tx", answer(ErrorCode::CoordinatorLoadInProgress)).unwrap_err();
        assert!(e.is_retriable());
        assert!(matches!(
            e,
            RequestError::Broker { api: ApiKey::DescribeTransactions, version: 0, error: ErrorCode::CoordinatorLoadInProgress, message: Some(ref m) } if m == "tx"
        ));
        let fatal = snapshot(
            0,
            "tx",
            answer(ErrorCode::TransactionalIdAuthorizationFailed),
        );
        assert!(!fatal.unwrap_err().is_retriable());
    }
}
