//! The registry serdes on kafka-eos's paths, each behind its feature:
//!
//! - `producer`: [`SerializingProducer`] serializes typed records before a
//!   [`Producer`](kafka_producer::Producer) or
//!   [`TransactionalProducer`](kafka_producer::TransactionalProducer)
//!   enqueues them;
//! - `consumer`: [`RecordDecoder`] decodes what a
//!   [`Reader`](kafka_consumer::Reader) or a
//!   [`GroupConsumer`](kafka_consumer::GroupConsumer) polls, one typed
//!   result per record;
//! - `sink`: [`RegistrySinkSchema`] is the Kafka sink's asynchronous,
//!   fallible serialization schema, and [`RegistryTransform`] re-encodes
//!   records inside kafka-sink's exactly-once `ConsumeTransformProduce`.
//!
//! The invariant on every path: a value that cannot be serialized fails
//! that record before it enters a batch (nothing half-written reaches the
//! log, a transaction stays abortable); a record that cannot be
//! deserialized is a typed per-record error, never silently dropped.

#[cfg(feature = "consumer")]
pub(crate) mod consumer;
#[cfg(feature = "producer")]
pub(crate) mod producer;
#[cfg(feature = "sink")]
pub(crate) mod sink;
#[cfg(feature = "sink")]
pub(crate) mod transform;

#[cfg(feature = "consumer")]
pub use consumer::{
    DecodeErrorPolicy, DecodedEvent, DecodedRecords, DeserializedRecord, PartitionStop,
    RecordDecoder,
};
#[cfg(feature = "producer")]
pub use producer::{RecordSender, SerializeRecordError, SerializingProducer, TypedRecord};
#[cfg(feature = "sink")]
pub use sink::RegistrySinkSchema;
#[cfg(feature = "sink")]
pub use transform::{RegistryTransform, RegistryTransformError};
