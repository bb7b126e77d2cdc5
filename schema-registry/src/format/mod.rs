//! The schema formats, one module per format behind its feature.

#[cfg(feature = "avro")]
pub(crate) mod avro;
#[cfg(feature = "json")]
pub(crate) mod json;
#[cfg(feature = "protobuf")]
pub(crate) mod protobuf;
