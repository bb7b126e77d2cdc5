//! The schema formats, one module per format behind its feature.

#[cfg(feature = "avro")]
pub(crate) mod avro;
#[cfg(feature = "protobuf")]
pub(crate) mod protobuf;
