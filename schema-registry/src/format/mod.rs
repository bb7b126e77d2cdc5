//! The schema formats, one module per format behind its feature.

#[cfg(feature = "avro")]
pub(crate) mod avro;
#[cfg(feature = "json")]
pub(crate) mod json;
#[cfg(any(feature = "avro", feature = "json", feature = "protobuf"))]
mod parsed;
#[cfg(feature = "protobuf")]
pub(crate) mod protobuf;

#[cfg(any(feature = "json", feature = "protobuf"))]
pub(crate) use parsed::naming;
#[cfg(any(feature = "avro", feature = "json", feature = "protobuf"))]
pub(crate) use parsed::{PARSED_SCHEMAS, ParsedSchemas};
