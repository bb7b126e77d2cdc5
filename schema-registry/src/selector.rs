//! Which schema id a serializer writes: Confluent's choice, in order.
//!
//! SKELETON: the signatures the formats build on; the bodies are written
//! by the registry-client work.
#![allow(clippy::unimplemented)]

use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::registry::SchemaRegistryClient;
use crate::schema::{LocalSchema, ResolvedSchema};
use kafka_client::{ConfigError, Properties};
use std::sync::Arc;

/// How a serializer names the subject a schema is registered under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubjectNameStrategy {
    /// `<topic>-key` / `<topic>-value` (Confluent's `TopicNameStrategy`).
    #[default]
    TopicName,
    /// The record's full name (`RecordNameStrategy`).
    RecordName,
    /// `<topic>-<record full name>` (`TopicRecordNameStrategy`).
    TopicRecordName,
}

/// A serializer's settings, with Confluent's names and defaults.
#[derive(Debug, Clone)]
pub struct SerializerConfig {
    _private: (),
}

impl SerializerConfig {
    /// Takes the serializer keys from `props`.
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let _ = props;
        unimplemented!()
    }
}

/// A deserializer's settings, with Confluent's names and defaults.
#[derive(Debug, Clone)]
pub struct DeserializerConfig {
    _private: (),
}

impl DeserializerConfig {
    /// Takes the deserializer keys from `props`.
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let _ = props;
        unimplemented!()
    }
}

/// The schema a serializer writes with.
#[derive(Debug, Clone)]
pub struct SelectedSchema {
    /// The id the frame carries.
    pub id: i32,
    /// The registered schema to encode with when it is not the local one
    /// (`use.latest.version`, `use.schema.id`); `None` when the local
    /// schema was registered or found.
    pub schema: Option<Arc<ResolvedSchema>>,
}

/// Picks and caches the schema id a serializer writes, as Confluent's
/// serializers do.
#[derive(Debug, Clone)]
pub struct SchemaIdSelector {
    client: SchemaRegistryClient,
    config: SerializerConfig,
}

impl SchemaIdSelector {
    /// A selector over `client` with `config`.
    pub fn new(client: SchemaRegistryClient, config: SerializerConfig) -> Self {
        Self { client, config }
    }

    /// The registry client.
    pub fn client(&self) -> &SchemaRegistryClient {
        &self.client
    }

    /// The settings.
    pub fn config(&self) -> &SerializerConfig {
        &self.config
    }

    /// The id to write for a value of `local` (whose record name, for the
    /// record strategies, is `record_name`).
    pub async fn select(
        &self,
        ctx: &SerializationContext<'_>,
        local: &LocalSchema,
        record_name: Option<&str>,
    ) -> Result<SelectedSchema, SerdeError> {
        let _ = (ctx, local, record_name);
        unimplemented!()
    }
}
