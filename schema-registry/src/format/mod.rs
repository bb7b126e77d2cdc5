//! The schema formats, one module per format behind its feature.

#[cfg(feature = "protobuf")]
pub(crate) mod protobuf;
