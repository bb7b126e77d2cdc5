//! The errors of the serdes, by blame.

use crate::registry::RegistryError;
use crate::wire::WireError;
use kafka_client::ConfigError;

/// Why a key or value could not be serialized or deserialized. The record
/// is not lost: a serializer fails before the record enters a batch, a
/// deserializer hands the raw record back with the error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SerdeError {
    /// The registry refused or could not be reached; see the inner error
    /// for whether retrying can help.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The bytes are not a well-formed registry frame.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A schema cannot be used: the application's does not parse, one
    /// fetched from the registry does not, or it has no name where a record
    /// name strategy needs one. Fix the schema.
    #[error("unusable schema: {reason}")]
    Schema {
        /// What is wrong with it.
        reason: String,
    },
    /// The value does not fit the schema (a missing field, a wrong type, a
    /// JSON document the schema rejects). Fix the value or the schema.
    #[error("value does not match the schema: {reason}")]
    Encode {
        /// What did not match.
        reason: String,
    },
    /// The payload does not decode with the schema its frame names: the
    /// writer used another schema than it registered, or the bytes are
    /// corrupt.
    #[error("payload does not decode with {schema}: {reason}")]
    Decode {
        /// The schema the frame names (`id 42`).
        schema: String,
        /// What failed.
        reason: String,
    },
    /// The local schema may not be written as the registered schema the
    /// serializer is told to use (`use.schema.id` with
    /// `id.compatibility.strict`, `use.latest.version` with
    /// `latest.compatibility.strict`): the registry found them
    /// incompatible. Evolve the local schema, or turn the check off.
    #[error(
        "the local schema is incompatible with schema id {id} of subject {subject:?}: {messages:?}; evolve the schema or set id.compatibility.strict / latest.compatibility.strict to false"
    )]
    Incompatible {
        /// The subject.
        subject: String,
        /// The registered schema's id.
        id: i32,
        /// The registry's reasons.
        messages: Vec<String>,
    },
    /// A serde setting is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
}
