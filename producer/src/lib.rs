//! Async producer for kafka-eos. Built in a later issue; today it only re-exports the codec.
pub use kafka_proto;
