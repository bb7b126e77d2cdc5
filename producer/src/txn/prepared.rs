//! Resume after a crash: a [`PreparedTransaction`] persisted by the writer
//! (stable, versioned bytes) and [`commit_prepared`] / [`abort_prepared`],
//! which finish it from another process **without InitProducerId** (which
//! would fence the epoch and abort it): FindCoordinator(TRANSACTION), then
//! EndTxn(transactional id, pid, epoch, committed) at v<=4 for a TV1
//! transaction and v5 for TV2.
//!
//! KIP-939's InitProducerId v6 with `keepPreparedTxn` is not used: no
//! released broker this crate is tested against serves a prepared
//! transaction that way, and its answer would have to be matched against the
//! prepared state rather than guessed.
//!
//! Outcomes are typed ([`ResumeOutcome`]). To tell "committed now" from
//! "already committed" the coordinator's view of the transactional id is read
//! once with DescribeTransactions before the first EndTxn (best effort: the
//! EndTxn answer alone cannot distinguish them).

use super::find_coordinator;
use super::{CoordinatorType, ProducerIdAndEpoch, TransactionState, TransactionVersion};
use crate::Cluster;
use kafka_client::ExponentialBackoff;
use kafka_client::RequestError;
use kafka_client::requests::describe_transactions::{TransactionSnapshot, describe_transaction_on};
use kafka_proto::messages::EndTxnRequest;
use kafka_proto::primitives::Reader;
use kafka_proto::{ApiKey, ErrorCode};
use std::time::{Duration, Instant};

const MAGIC: [u8; 4] = *b"KTXP";
const FORMAT_V1: u8 = 1;

/// A transaction prepared for commit (all records acknowledged, every
/// partition registered, non-empty) that any process holding it can finish.
///
/// ```
/// use kafka_producer::txn::{PreparedTransaction, TransactionVersion};
/// let p = PreparedTransaction {
///     transactional_id: "sink-0".into(),
///     producer_id: 4242,
///     producer_epoch: 7,
///     transaction_version: TransactionVersion::V2,
/// };
/// let bytes = p.encode();
/// assert_eq!(&bytes[..5], b"KTXP\x01");
/// assert_eq!(PreparedTransaction::decode(&bytes).unwrap(), p);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PreparedTransaction {
    /// `transactional.id`.
    pub transactional_id: String,
    /// Producer id of the transaction.
    pub producer_id: i64,
    /// Producer epoch of the transaction.
    pub producer_epoch: i16,
    /// The transaction version it was written with (decides the EndTxn version).
    pub transaction_version: TransactionVersion,
}

/// Why [`PreparedTransaction::decode`] refused bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreparedDecodeError {
    /// Fewer bytes than the format needs.
    #[error("truncated prepared transaction ({0} bytes)")]
    Truncated(usize),
    /// Not starting with `KTXP`.
    #[error("not a prepared transaction (bad magic)")]
    BadMagic,
    /// A format version this build does not know.
    #[error("unknown prepared-transaction format version {0}")]
    UnknownVersion(u8),
    /// A transaction version other than 1 or 2.
    #[error("invalid transaction version {0}")]
    InvalidTransactionVersion(u8),
    /// The transactional id is not UTF-8.
    #[error("transactional id is not UTF-8")]
    InvalidUtf8,
    /// Bytes after the encoded value.
    #[error("{0} trailing bytes after the prepared transaction")]
    TrailingBytes(usize),
}

impl PreparedTransaction {
    /// The pid/epoch pair.
    pub fn producer(&self) -> ProducerIdAndEpoch {
        ProducerIdAndEpoch {
            producer_id: self.producer_id,
            epoch: self.producer_epoch,
        }
    }

    /// Format v1: `KTXP`, format version `1`, transaction version (1|2),
    /// producer id (i64 BE), epoch (i16 BE), id length (u16 BE), id (UTF-8).
    pub fn encode(&self) -> Vec<u8> {
        let id = self.transactional_id.as_bytes();
        let len = u16::try_from(id.len()).expect("transactional id longer than 65535 bytes");
        let mut v = Vec::with_capacity(20 + id.len());
        v.extend_from_slice(&MAGIC);
        v.push(FORMAT_V1);
        v.push(match self.transaction_version {
            TransactionVersion::V1 => 1,
            TransactionVersion::V2 => 2,
        });
        v.extend_from_slice(&self.producer_id.to_be_bytes());
        v.extend_from_slice(&self.producer_epoch.to_be_bytes());
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(id);
        v
    }

    /// Decodes bytes written by [`Self::encode`] of any known format version.
    pub fn decode(bytes: &[u8]) -> Result<Self, PreparedDecodeError> {
        let truncated = |_| PreparedDecodeError::Truncated(bytes.len());
        let mut r = Reader::new(bytes);
        // The magic and the format version are read together, so that fewer
        // than 5 bytes are truncated whatever they hold.
        let magic = r.take(MAGIC.len(), "magic").map_err(truncated)?;
        let format = r.i8("format_version").map_err(truncated)? as u8;
        if magic != MAGIC {
            return Err(PreparedDecodeError::BadMagic);
        }
        if format != FORMAT_V1 {
            return Err(PreparedDecodeError::UnknownVersion(format));
        }
        // Format v1's fixed part is read whole before any of it is judged:
        // a short input is truncated, whatever its transaction version byte.
        let transaction_version = r.i8("transaction_version").map_err(truncated)? as u8;
        let producer_id = r.i64("producer_id").map_err(truncated)?;
        let producer_epoch = r.i16("producer_epoch").map_err(truncated)?;
        let len = r.u16("transactional_id_length").map_err(truncated)?;
        let transaction_version = match transaction_version {
            1 => TransactionVersion::V1,
            2 => TransactionVersion::V2,
            other => return Err(PreparedDecodeError::InvalidTransactionVersion(other)),
        };
        let id = r
            .take(usize::from(len), "transactional_id")
            .map_err(truncated)?;
        if r.finish().is_err() {
            return Err(PreparedDecodeError::TrailingBytes(r.remaining()));
        }
        let transactional_id = std::str::from_utf8(id)
            .map_err(|_| PreparedDecodeError::InvalidUtf8)?
            .to_string();
        Ok(Self {
            transactional_id,
            producer_id,
            producer_epoch,
            transaction_version,
        })
    }
}

/// How a resumed transaction ended.
///
/// ```
/// use kafka_producer::txn::ResumeOutcome;
/// use kafka_producer::kafka_proto::ErrorCode;
/// fn records_kept(o: &ResumeOutcome) -> Option<bool> {
///     match o {
///         ResumeOutcome::Committed | ResumeOutcome::AlreadyCommitted => Some(true),
///         ResumeOutcome::Aborted | ResumeOutcome::AlreadyAborted => Some(false),
///         ResumeOutcome::AbortedByBroker { .. } => Some(false), // lost: alert
///         ResumeOutcome::Fenced { .. } => None, // unknowable
///     }
/// }
/// let lost = ResumeOutcome::AbortedByBroker { error: ErrorCode::InvalidTxnState, state: None };
/// assert_eq!(records_kept(&lost), Some(false));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeOutcome {
    /// `commit_prepared`: committed by this call.
    Committed,
    /// `commit_prepared`: it had been committed before (a repeat is harmless);
    /// also `abort_prepared` on a transaction that was committed (cannot abort).
    AlreadyCommitted,
    /// `abort_prepared`: aborted by this call.
    Aborted,
    /// `abort_prepared`: it had been aborted before (by a previous call, by the
    /// coordinator after `transaction.timeout.ms`, or it was empty).
    AlreadyAborted,
    /// `commit_prepared`: the coordinator aborted it (it outlived
    /// `transaction.timeout.ms`, or was empty): **its records are lost**.
    AbortedByBroker {
        /// What EndTxn answered (INVALID_TXN_STATE, or PRODUCER_FENCED after a
        /// TV1 timeout fenced the epoch).
        error: ErrorCode,
        /// The coordinator's state seen before EndTxn, if read.
        state: Option<TransactionState>,
    },
    /// The transactional id moved on (re-initialised, reused, or fenced): the
    /// outcome is no longer knowable from the coordinator. Treat as lost
    /// unless it is known to have committed.
    Fenced {
        /// PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING or INVALID_PRODUCER_EPOCH.
        error: ErrorCode,
        /// The coordinator's state seen before EndTxn, if read.
        state: Option<TransactionState>,
    },
}

/// Why finishing a prepared transaction failed (the outcome is unknown; the
/// call may be repeated).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster, prepared: &kafka_producer::txn::PreparedTransaction) {
/// use kafka_producer::txn::{commit_prepared, ResumeError, ResumeOptions};
/// loop {
///     match commit_prepared(cluster, prepared, &ResumeOptions::default()).await {
///         Ok(outcome) => break println!("{outcome:?}"),
///         // Nothing is lost yet: the transaction stays prepared; try again.
///         Err(ResumeError::Timeout { last, .. }) => eprintln!("retrying: {last}"),
///         Err(e) => break eprintln!("cannot finish: {e}"),
///     }
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// Coordinator lookup or a request failed for good.
    #[error(transparent)]
    Coordinator(#[from] RequestError),
    /// The coordinator does not support the transaction's EndTxn version.
    #[error(
        "the coordinator does not support EndTxn v{needed} for this {tv:?} transaction (broker max {broker:?})"
    )]
    UnsupportedVersion {
        /// Version needed.
        needed: i16,
        /// The transaction version.
        tv: TransactionVersion,
        /// The broker's highest EndTxn version.
        broker: Option<i16>,
    },
    /// Retriable failures until the deadline.
    #[error("could not finish the transaction within {after:?}; last error: {last}")]
    Timeout {
        /// The deadline.
        after: Duration,
        /// The last retriable failure.
        last: String,
    },
}

/// Options of [`commit_prepared`] / [`abort_prepared`].
#[derive(Debug, Clone)]
pub struct ResumeOptions {
    /// Overall deadline (default 60 s).
    pub timeout: Duration,
    /// Backoff between retries (CONCURRENT_TRANSACTIONS, coordinator errors,
    /// timeouts): 100 ms ×2 up to 1 s.
    pub backoff: ExponentialBackoff,
    /// Read the coordinator's state first (DescribeTransactions) to report
    /// `AlreadyCommitted`/`AlreadyAborted` (default true).
    pub describe_first: bool,
}

impl Default for ResumeOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            backoff: ExponentialBackoff {
                initial: Duration::from_millis(100),
                multiplier: 2.0,
                max: Duration::from_secs(1),
                jitter: 0.2,
            },
            describe_first: true,
        }
    }
}

/// What to do after one EndTxn answer (sans IO).
///
/// ```
/// use kafka_producer::internals::{resume_step, ResumeStep};
/// use kafka_producer::txn::{PreparedTransaction, TransactionVersion};
/// use kafka_producer::kafka_proto::ErrorCode;
/// let p = PreparedTransaction { transactional_id: "t".into(), producer_id: 1, producer_epoch: 3, transaction_version: TransactionVersion::V1 };
/// assert_eq!(resume_step(&p, true, None, ErrorCode::NotCoordinator), ResumeStep::Rediscover);
/// assert_eq!(resume_step(&p, true, None, ErrorCode::ConcurrentTransactions), ResumeStep::Retry);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeStep {
    /// Finished.
    Done(ResumeOutcome),
    /// Retry after a backoff.
    Retry,
    /// Look the coordinator up again, then retry.
    Rediscover,
    /// Unexpected error: give up.
    Fail(ErrorCode),
}

/// Decides the outcome of EndTxn `error` for `prepared`, given the
/// coordinator's view seen before the first EndTxn (DescribeTransactions;
/// the coordinator's answers, checked against 3.9 and 4.4 brokers in
/// `tests/txn_resume_broker.rs`).
///
/// ```
/// use kafka_client::requests::describe_transactions::TransactionSnapshot;
/// use kafka_producer::internals::{resume_step, ResumeStep};
/// use kafka_producer::txn::{PreparedTransaction, ResumeOutcome, TransactionState, TransactionVersion};
/// use kafka_proto::ErrorCode;
/// let p = PreparedTransaction { transactional_id: "t".into(), producer_id: 1, producer_epoch: 3, transaction_version: TransactionVersion::V1 };
/// let before = TransactionSnapshot {
///     transactional_id: "t".into(),
///     state: TransactionState::CompleteCommit,
///     timeout_ms: 60_000,
///     start_time_ms: -1,
///     producer_id: 1,
///     producer_epoch: 3,
///     partitions: vec![],
/// };
/// assert_eq!(resume_step(&p, true, Some(&before), ErrorCode::None), ResumeStep::Done(ResumeOutcome::AlreadyCommitted));
/// assert_eq!(resume_step(&p, true, None, ErrorCode::ConcurrentTransactions), ResumeStep::Retry);
/// ```
pub fn resume_step(
    prepared: &PreparedTransaction,
    commit: bool,
    before: Option<&TransactionSnapshot>,
    error: ErrorCode,
) -> ResumeStep {
    use ErrorCode as E;
    let state = before.map(|b| &b.state);
    let state_owned = before.map(|b| b.state.clone());
    let committed_before = state.is_some_and(TransactionState::is_committing);
    let aborted_before = state.is_some_and(TransactionState::is_aborting);
    // The coordinator aborted it and bumped (fenced) the epoch once: a
    // timeout abort of this very transaction.
    let timeout_aborted = before.is_some_and(|b| {
        b.producer_id == prepared.producer_id
            && aborted_before
            && b.producer_epoch == prepared.producer_epoch.wrapping_add(1)
    });
    match error {
        E::None => ResumeStep::Done(match (commit, committed_before, aborted_before) {
            (true, true, _) => ResumeOutcome::AlreadyCommitted,
            (true, false, _) => ResumeOutcome::Committed,
            (false, _, true) => ResumeOutcome::AlreadyAborted,
            (false, _, false) => ResumeOutcome::Aborted,
        }),
        E::NotCoordinator | E::CoordinatorNotAvailable => ResumeStep::Rediscover,
        E::InvalidTxnState => ResumeStep::Done(if commit {
            if committed_before {
                ResumeOutcome::Fenced {
                    error,
                    state: state_owned,
                }
            } else {
                tracing::error!(transactional_id = %prepared.transactional_id, producer_id = prepared.producer_id,
                    epoch = prepared.producer_epoch, state = ?state,
                    "POSSIBLE DATA LOSS: the prepared transaction was aborted by the coordinator (timed out or empty)");
                ResumeOutcome::AbortedByBroker {
                    error,
                    state: state_owned,
                }
            }
        } else if committed_before {
            ResumeOutcome::AlreadyCommitted
        } else {
            ResumeOutcome::AlreadyAborted
        }),
        E::ProducerFenced | E::InvalidProducerIdMapping | E::InvalidProducerEpoch => {
            ResumeStep::Done(if timeout_aborted && commit {
                tracing::error!(transactional_id = %prepared.transactional_id, producer_id = prepared.producer_id,
                    epoch = prepared.producer_epoch, state = ?state,
                    "POSSIBLE DATA LOSS: the prepared transaction timed out and the coordinator aborted it");
                ResumeOutcome::AbortedByBroker {
                    error,
                    state: state_owned,
                }
            } else if timeout_aborted {
                ResumeOutcome::AlreadyAborted
            } else {
                tracing::error!(transactional_id = %prepared.transactional_id, ?error, state = ?state,
                    "prepared transaction fenced: its outcome is unknowable");
                ResumeOutcome::Fenced {
                    error,
                    state: state_owned,
                }
            })
        }
        e if e.is_retriable() => ResumeStep::Retry,
        e => ResumeStep::Fail(e),
    }
}

/// Commits `prepared` from any process (see the module docs).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::txn::{commit_prepared, PreparedTransaction, ResumeOptions, ResumeOutcome};
/// use kafka_client::{Cluster, ClusterConfig};
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
/// let prepared = PreparedTransaction::decode(&std::fs::read("checkpoint/txn")?)?;
/// match commit_prepared(&cluster, &prepared, &ResumeOptions::default()).await? {
///     ResumeOutcome::Committed | ResumeOutcome::AlreadyCommitted => {}
///     lost => eprintln!("the records of {} are lost: {lost:?}", prepared.transactional_id),
/// }
/// # Ok(()) }
/// ```
pub async fn commit_prepared(
    cluster: &Cluster,
    prepared: &PreparedTransaction,
    options: &ResumeOptions,
) -> Result<ResumeOutcome, ResumeError> {
    finish(cluster, prepared, true, options).await
}

/// Aborts `prepared` from any process (see the module docs).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::txn::{abort_prepared, PreparedTransaction, ResumeOptions, ResumeOutcome};
/// use kafka_client::{Cluster, ClusterConfig};
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
/// let prepared = PreparedTransaction::decode(&std::fs::read("checkpoint/txn")?)?;
/// let outcome = abort_prepared(&cluster, &prepared, &ResumeOptions::default()).await?;
/// assert!(matches!(outcome, ResumeOutcome::Aborted | ResumeOutcome::AlreadyAborted));
/// # Ok(()) }
/// ```
pub async fn abort_prepared(
    cluster: &Cluster,
    prepared: &PreparedTransaction,
    options: &ResumeOptions,
) -> Result<ResumeOutcome, ResumeError> {
    finish(cluster, prepared, false, options).await
}

async fn finish(
    cluster: &Cluster,
    prepared: &PreparedTransaction,
    commit: bool,
    options: &ResumeOptions,
) -> Result<ResumeOutcome, ResumeError> {
    let started = Instant::now();
    let deadline = started + options.timeout;
    let mut attempts = 0u32;
    let mut before: Option<TransactionSnapshot> = None;
    let mut described = !options.describe_first;
    let mut last = String::new();
    loop {
        if attempts > 0 {
            if Instant::now() >= deadline {
                return Err(ResumeError::Timeout {
                    after: options.timeout,
                    last,
                });
            }
            let delay = options.backoff.backoff(attempts - 1);
            tokio::time::sleep(delay.min(deadline.saturating_duration_since(Instant::now()))).await;
        }
        attempts += 1;
        let coord = match find_coordinator(
            cluster,
            CoordinatorType::Transaction,
            &prepared.transactional_id,
        )
        .await
        {
            Ok(c) => c,
            Err(e) if e.is_retriable() => {
                last = e.to_string();
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let conn = &coord.connection;
        if !described {
            described = true;
            match describe_transaction_on(conn, &prepared.transactional_id).await {
                Ok(s) => before = s,
                Err(e) => {
                    tracing::warn!(error = %e, "DescribeTransactions failed; outcome detail reduced")
                }
            }
            tracing::info!(transactional_id = %prepared.transactional_id, ?before, "resuming prepared transaction");
        }
        let broker_max = conn.negotiated_version(ApiKey::EndTxn);
        let version = match (prepared.transaction_version, broker_max) {
            (TransactionVersion::V1, Some(v)) => v.min(4),
            (TransactionVersion::V2, Some(v)) if v >= 5 => 5,
            (tv, broker) => {
                return Err(ResumeError::UnsupportedVersion {
                    needed: tv.end_txn_max_version(),
                    tv,
                    broker,
                });
            }
        };
        let req = EndTxnRequest {
            transactional_id: prepared.transactional_id.clone(),
            producer_id: prepared.producer_id,
            producer_epoch: prepared.producer_epoch,
            committed: commit,
            ..Default::default()
        };
        let resp = match conn.send(&req, version).await {
            Ok(r) => r,
            Err(e) if e.is_retriable() => {
                // Unknown outcome: retry the same EndTxn (idempotent).
                last = e.to_string();
                continue;
            }
            Err(e) => return Err(RequestError::from(e).into()),
        };
        let error = ErrorCode::from(resp.error_code);
        tracing::info!(transactional_id = %prepared.transactional_id, version, ?error,
            next_pid = resp.producer_id, next_epoch = resp.producer_epoch, commit, "EndTxn (resume)");
        match resume_step(prepared, commit, before.as_ref(), error) {
            ResumeStep::Done(o) => return Ok(o),
            ResumeStep::Retry | ResumeStep::Rediscover => {
                last = format!("EndTxn v{version}: {}", error.name());
            }
            ResumeStep::Fail(error) => {
                return Err(RequestError::Broker {
                    api: ApiKey::EndTxn,
                    version,
                    error,
                    message: None,
                }
                .into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded() -> Vec<u8> {
        PreparedTransaction {
            transactional_id: "orders-1".into(),
            producer_id: 4000,
            producer_epoch: 12,
            transaction_version: TransactionVersion::V2,
        }
        .encode()
    }

    /// Every strict prefix of a valid encoding is truncated, reporting its
    /// own length: never a bad magic, version or transaction version.
    #[test]
    fn every_prefix_is_truncated() {
        let bytes = encoded();
        for n in 0..bytes.len() {
            assert_eq!(
                PreparedTransaction::decode(&bytes[..n]),
                Err(PreparedDecodeError::Truncated(n)),
                "{n} bytes"
            );
        }
    }

    /// Fewer than five bytes are truncated even when they are not the magic;
    /// five or more with another magic are not a prepared transaction.
    #[test]
    fn short_input_is_truncated_before_the_magic_is_judged() {
        assert_eq!(
            PreparedTransaction::decode(b"JSON"),
            Err(PreparedDecodeError::Truncated(4))
        );
        assert_eq!(
            PreparedTransaction::decode(b"JSON{"),
            Err(PreparedDecodeError::BadMagic)
        );
    }

    /// A short fixed part is truncated even with an invalid transaction
    /// version byte: the fixed part is read whole before it is judged.
    #[test]
    fn short_fixed_part_is_truncated_whatever_its_transaction_version() {
        let mut bytes = encoded();
        bytes[5] = 9;
        assert_eq!(
            PreparedTransaction::decode(&bytes[..10]),
            Err(PreparedDecodeError::Truncated(10))
        );
        assert_eq!(
            PreparedTransaction::decode(&bytes),
            Err(PreparedDecodeError::InvalidTransactionVersion(9))
        );
    }

    /// Bytes after the transactional id are counted, not ignored.
    #[test]
    fn trailing_bytes_are_counted() {
        let mut bytes = encoded();
        bytes.extend_from_slice(&[0, 0, 0]);
        assert_eq!(
            PreparedTransaction::decode(&bytes),
            Err(PreparedDecodeError::TrailingBytes(3))
        );
    }

    /// An id that is not UTF-8 is refused after the length checks.
    #[test]
    fn non_utf8_id_is_refused() {
        let mut bytes = encoded();
        let last = bytes.len() - 1;
        bytes[last] = 0xff;
        assert_eq!(
            PreparedTransaction::decode(&bytes),
            Err(PreparedDecodeError::InvalidUtf8)
        );
    }

    /// A file too short is truncated; one not starting with the magic is refused as such.
    #[test]
    fn a_short_or_foreign_file_is_refused_by_kind() {
        use crate::txn::{PreparedDecodeError, PreparedTransaction};
        assert_eq!(
            PreparedTransaction::decode(b"KT"),
            Err(PreparedDecodeError::Truncated(2))
        );
        assert_eq!(
            PreparedTransaction::decode(b"JSON{}"),
            Err(PreparedDecodeError::BadMagic)
        );
    }

    /// `producer` pairs the stored producer id and epoch.
    #[test]
    fn producer_pairs_the_id_and_epoch() {
        use crate::txn::{PreparedTransaction, ProducerIdAndEpoch, TransactionVersion};
        let p = PreparedTransaction {
            transactional_id: "orders-1".into(),
            producer_id: 4000,
            producer_epoch: 12,
            transaction_version: TransactionVersion::V2,
        };
        assert_eq!(
            p.producer(),
            ProducerIdAndEpoch {
                producer_id: 4000,
                epoch: 12
            }
        );
    }

    /// The encoding is the magic, the version, the fixed fields, then the transactional id.
    #[test]
    fn the_encoding_is_magic_version_fields_then_the_id() {
        use crate::txn::{PreparedTransaction, TransactionVersion};
        let p = PreparedTransaction {
            transactional_id: "orders-1".into(),
            producer_id: 4000,
            producer_epoch: 12,
            transaction_version: TransactionVersion::V2,
        };
        let bytes = p.encode();
        assert_eq!(&bytes[..4], b"KTXP");
        assert_eq!(bytes.len(), 4 + 1 + 1 + 8 + 2 + 2 + "orders-1".len());
    }

    /// A round trip decodes; a byte after the end is refused.
    #[test]
    fn decode_refuses_trailing_bytes() {
        use crate::txn::{PreparedDecodeError, PreparedTransaction, TransactionVersion};
        let p = PreparedTransaction {
            transactional_id: "orders-1".into(),
            producer_id: 4000,
            producer_epoch: 12,
            transaction_version: TransactionVersion::V2,
        };
        let mut bytes = p.encode();
        assert_eq!(PreparedTransaction::decode(&bytes), Ok(p));
        bytes.push(0);
        assert_eq!(
            PreparedTransaction::decode(&bytes),
            Err(PreparedDecodeError::TrailingBytes(1))
        );
    }

    /// Resuming describes the transaction first by default.
    #[test]
    fn resume_options_describe_first_by_default() {
        use crate::txn::ResumeOptions;
        use std::time::Duration;
        let opts = ResumeOptions {
            timeout: Duration::from_secs(10),
            ..Default::default()
        };
        assert!(opts.describe_first);
    }
}
