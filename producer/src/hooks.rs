//! The hooks through which the transaction manager steers the send path
//! ([`SendHooks`]): the accumulator calls the append hooks under its lock,
//! the sender the drain and failure hooks on each pass.

use crate::record::{ProduceError, TopicPartition};
use kafka_client::ProducerIdAndEpoch;
use kafka_proto::ErrorCode;
use std::fmt;

/// What the send path asks of a transactional producer: which partitions
/// may be drained ("partition not yet added to the transaction"), the
/// transactional id for Produce requests, what to do with records and
/// batches that fail, and the producer id to install. Only `may_drain` is
/// required; the defaults are those of a producer without transactions, and
/// the transactional producer implements every hook.
///
/// The accumulator calls the `on_append*` / `on_enqueue` / `record_failed`
/// hooks under its lock, so they must not block; the sender calls the
/// others once per pass.
///
/// ```
/// use kafka_producer::internals::SendHooks;
/// use kafka_producer::{ProduceError, TopicPartition};
/// use std::collections::BTreeSet;
/// use std::sync::Mutex;
///
/// /// Drains only the partitions registered with a coordinator, and
/// /// registers each partition once per batch, not once per record.
/// #[derive(Debug, Default)]
/// struct Registered(Mutex<BTreeSet<TopicPartition>>);
///
/// impl SendHooks for Registered {
///     fn may_drain(&self, tp: &TopicPartition) -> bool {
///         self.0.lock().unwrap().contains(tp)
///     }
///     fn on_append_to_batch(&self, tp: &TopicPartition, memo: &mut u64) -> Result<(), ProduceError> {
///         if *memo == 0 {
///             self.0.lock().unwrap().insert(tp.clone());
///             *memo = 1;
///         }
///         Ok(())
///     }
/// }
///
/// let hooks = Registered::default();
/// let tp = TopicPartition::new("orders", 3);
/// assert!(!hooks.may_drain(&tp));
/// let mut memo = 0; // a new batch
/// hooks.on_append_to_batch(&tp, &mut memo).unwrap();
/// assert!(hooks.may_drain(&tp));
/// // The defaults are a producer's without transactions.
/// assert_eq!(hooks.transactional_id(), None);
/// assert_eq!(hooks.on_enqueue().unwrap(), 0);
/// ```
pub trait SendHooks: Send + Sync + fmt::Debug {
    /// May batches of `tp` be drained now?
    fn may_drain(&self, tp: &TopicPartition) -> bool;
    /// The transactional id for Produce requests and batch headers.
    fn transactional_id(&self) -> Option<String> {
        None
    }
    /// Called (under the accumulator lock) before a record is appended to a
    /// batch of `tp`; an error fails the send (Java `maybeAddPartition`).
    fn on_append(&self, _tp: &TopicPartition) -> Result<(), ProduceError> {
        Ok(())
    }
    /// [`Self::on_append`] for a record about to join a batch of `tp`, with
    /// the batch's `memo` (0 for a new batch): what the hooks remember of
    /// the batch between its records, so that work done for the batch's
    /// first record need not be done for every record (the transactional
    /// producer adds a partition to its transaction once per transaction,
    /// not once per record). Each call still decides for its own record.
    fn on_append_to_batch(&self, tp: &TopicPartition, _memo: &mut u64) -> Result<(), ProduceError> {
        self.on_append(tp)
    }
    /// Called (under the accumulator lock) when a record cannot be appended
    /// at `send` time and the producer queues it (waiting for buffer memory
    /// or its topic's metadata). Returns the serial number of the
    /// transaction the record belongs to — fixed now, at `send` time — or an
    /// error that fails the send at once (as [`Self::on_append`] would).
    fn on_enqueue(&self) -> Result<u64, ProduceError> {
        Ok(0)
    }
    /// Called (under the accumulator lock) before a queued record of
    /// transaction `serial` is appended to a batch of `tp`; an error fails
    /// the record (it must never join a later transaction).
    fn on_append_queued(&self, tp: &TopicPartition, _serial: u64) -> Result<(), ProduceError> {
        self.on_append(tp)
    }
    /// A record the application sent will never be written (`serial`: its
    /// transaction when it was queued; `None` when `send` itself failed).
    /// The transactional producer makes the transaction abortable, as Java's
    /// `KafkaProducer.send` does (`maybeTransitionToErrorState`), so that a
    /// commit can never succeed without it.
    fn record_failed(&self, _serial: Option<u64>, _error: &ProduceError) {}
    /// When `Some((serial, error))`, every queued record of transaction
    /// `serial` fails with `error` (the transaction is being aborted; read
    /// together so that a record of a later transaction is never failed).
    fn undrained_queued(&self) -> Option<(u64, ProduceError)> {
        None
    }
    /// True while no produce data may be sent in this pass (a coordinator
    /// request is in flight: Java's `maybeSendAndPollTransactionalRequest`).
    /// The hooks wake the sender when this turns false.
    fn hold_produce(&self) -> bool {
        false
    }
    /// When `Some`, every undrained batch fails with this error (the
    /// transaction must be or is being aborted).
    fn undrained_error(&self) -> Option<ProduceError> {
        None
    }
    /// The next producer id/epoch to install (and whether every sequence
    /// restarts at 0), if the producer id is owned by the hooks.
    fn producer_change(&self) -> Option<(ProducerIdAndEpoch, bool)> {
        None
    }
    /// A batch of `tp` failed for good: `error` from the broker, `None` for a
    /// timeout/expiry; `outcome_unknown` when it may have been written.
    fn batch_failed(
        &self,
        _tp: &TopicPartition,
        _error: Option<ErrorCode>,
        _outcome_unknown: bool,
    ) {
    }
    /// The highest Produce version to use (`Some(11)` under transaction
    /// version 1: v12+ would register partitions implicitly).
    fn max_produce_version(&self) -> Option<i16> {
        None
    }
}
