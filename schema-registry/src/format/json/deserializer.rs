//! Confluent JSON Schema frames back to values.

use super::FAIL_INVALID_SCHEMA;
use super::schema::JsonSchema;
use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::format::{PARSED_SCHEMAS, ParsedSchemas, naming};
use crate::record_serde::RecordDeserializer;
use crate::registry::SchemaRegistryClient;
use crate::wire::{self, SchemaId};
use kafka_client::Properties;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// Deserializes Confluent JSON Schema frames as Confluent's
/// `KafkaJsonSchemaDeserializer` does: the schema id comes from the
/// field's schema-id header (`__value_schema_id` / `__key_schema_id`) when
/// the record has one, else from the `00` prefix; the writer's schema is
/// fetched by id (so an id the registry does not know is an error, as in
/// Confluent's); with `json.fail.invalid.schema=true` it is compiled and
/// the document checked against it; then the document is read into `T` (a `serde_json::Value` by
/// default, or any `serde::de::DeserializeOwned` type).
///
/// Compiled schemas are cached by id (at most 1000). Malformed frames and
/// documents are typed errors ([`SerdeError::Wire`],
/// [`SerdeError::Decode`]); nothing panics.
pub struct JsonDeserializer<T = Value> {
    /// Fetches writer schemas by id.
    client: SchemaRegistryClient,
    /// `json.fail.invalid.schema`: refuse a document its schema rejects.
    validate: bool,
    /// Writer schemas, compiled, by id.
    compiled: ParsedSchemas<JsonSchema>,
    /// What documents are read into.
    _value: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for JsonDeserializer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonDeserializer")
            .field("client", &self.client)
            .field("validate", &self.validate)
            .field("value", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: DeserializeOwned + Send> JsonDeserializer<T> {
    /// A deserializer fetching writer schemas with `client`; validation off
    /// (Confluent's default).
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{
    ///     JsonDeserializer, RecordDeserializer, SchemaRegistryClient, SerializationContext,
    /// };
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Order {
    ///     id: u64,
    /// }
    ///
    /// # async fn run(record_value: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://localhost:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let orders = JsonDeserializer::<Order>::new(client).with_validation(true);
    /// let order = orders.deserialize(&SerializationContext::value("orders"), record_value).await?;
    /// println!("order {}", order.id);
    /// # Ok(()) }
    /// ```
    pub fn new(client: SchemaRegistryClient) -> Self {
        Self {
            client,
            validate: false,
            compiled: ParsedSchemas::new(PARSED_SCHEMAS),
            _value: PhantomData,
        }
    }

    /// A deserializer configured from `props`: the registry client's keys
    /// and `json.fail.invalid.schema` (default `false`). The keys read are
    /// marked read; the caller's `Properties::finish` reports the others.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::JsonDeserializer;
    ///
    /// # fn run() -> Result<(), kafka_schema_registry::SerdeError> {
    /// let mut props = Properties::new([
    ///     ("schema.registry.url", "http://localhost:8081"),
    ///     ("json.fail.invalid.schema", "true"),
    /// ]);
    /// let values = JsonDeserializer::<serde_json::Value>::from_properties(&mut props)?;
    /// props.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, SerdeError> {
        let validate = props.bool(FAIL_INVALID_SCHEMA)?.unwrap_or(false);
        let client = SchemaRegistryClient::from_properties(props)?;
        Ok(Self::new(client).with_validation(validate))
    }

    /// Turns validation on or off (`json.fail.invalid.schema`).
    pub fn with_validation(mut self, validate: bool) -> Self {
        self.validate = validate;
        self
    }

    /// The writer schema a frame names by id or GUID, compiled (cached).
    async fn writer_schema(&self, id: SchemaId) -> Result<JsonSchema, SerdeError> {
        self.compiled
            .fetch(&self.client, id, |r| {
                JsonSchema::from_resolved(r).map_err(naming(id))
            })
            .await
    }
}

impl<T: DeserializeOwned + Send> RecordDeserializer for JsonDeserializer<T> {
    type Value = T;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        let frame = wire::read_frame(bytes, ctx.schema_id_header(), false)?;
        let id = frame.id;
        if self.validate {
            let schema = self.writer_schema(id).await?;
            decode(id, frame.payload, Some(&schema))
        } else {
            // The id must name a registered schema, as in Confluent's
            // deserializers; the document itself needs no schema to read,
            // so the schema is not compiled.
            self.client.resolved(id).await?;
            decode(id, frame.payload, None)
        }
    }
}

/// Reads the JSON document `payload` (written with schema `id`) into `T`,
/// checking it against `schema` first when given.
pub(crate) fn decode<T: DeserializeOwned>(
    id: SchemaId,
    payload: &[u8],
    schema: Option<&JsonSchema>,
) -> Result<T, SerdeError> {
    let failed = |reason: String| SerdeError::Decode {
        schema: id.to_string(),
        reason,
    };
    match schema {
        None => serde_json::from_slice(payload).map_err(|e| failed(e.to_string())),
        Some(schema) => {
            let document: Value =
                serde_json::from_slice(payload).map_err(|e| failed(e.to_string()))?;
            schema
                .violations(&document)
                .map_err(|v| failed(format!("the schema rejects the document: {v}")))?;
            serde_json::from_value(document).map_err(|e| failed(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> JsonSchema {
        JsonSchema::new(r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#).unwrap()
    }

    /// Without validation any JSON reads; with it, the schema decides.
    #[test]
    fn validation_is_optional() {
        let bad = br#"{"n": "x"}"#;
        let v: Value = decode(SchemaId::Id(3), bad, None).unwrap();
        assert_eq!(v["n"], "x");
        let e = decode::<Value>(SchemaId::Id(3), bad, Some(&schema())).unwrap_err();
        let SerdeError::Decode { schema, reason } = e else {
            panic!("{e:?}")
        };
        assert_eq!(schema, "id 3");
        assert!(reason.contains("\"/n\""), "{reason}");
    }

    /// Not JSON, trailing bytes, invalid UTF-8, too deep, the wrong shape
    /// for `T`: Decode errors, never panics.
    #[test]
    fn malformed_documents_are_decode_errors() {
        let deep = "[".repeat(10_000);
        for payload in [&b""[..], b"{", b"{} x", b"\"\xff\"", deep.as_bytes()] {
            for s in [None, Some(&schema())] {
                let e = decode::<Value>(SchemaId::Id(1), payload, s).unwrap_err();
                assert!(matches!(e, SerdeError::Decode { .. }), "{e:?}");
            }
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct N {
            n: i64,
        }
        let e = decode::<N>(SchemaId::Id(1), br#"{"n": 1.5}"#, None).unwrap_err();
        assert!(matches!(e, SerdeError::Decode { .. }), "{e:?}");
    }

    /// What the deserializer does with a record's bytes before the
    /// registry: the frame (header first), the id, then the document.
    fn read_without_registry(
        bytes: &[u8],
        header: Option<&[u8]>,
        schema: Option<&JsonSchema>,
    ) -> Result<Value, SerdeError> {
        let frame = wire::read_frame(bytes, header, false)?;
        decode(frame.id, frame.payload, schema)
    }

    /// Truncated and unframed frames: typed Wire errors; a GUID header reads.
    #[test]
    fn malformed_frames_are_typed() {
        let cases: &[(&[u8], Option<&[u8]>)] = &[
            (b"", None),
            (b"\x00\x00\x01", None),
            (b"{\"a\":1}", None),
            (b"\x02\x00\x00\x00\x01{}", None),
            (b"{}", Some(b"\x00\x00")),
        ];
        for &(bytes, header) in cases {
            let e = read_without_registry(bytes, header, None).unwrap_err();
            assert!(matches!(e, SerdeError::Wire(_)), "{bytes:?}: {e:?}");
        }
        // A GUID names the schema as well as an id does.
        let mut guid_header = vec![1u8];
        guid_header.extend_from_slice(&[7; 16]);
        let v = read_without_registry(b"{\"a\":2}", Some(&guid_header), None).unwrap();
        assert_eq!(v["a"], 2);
        // The header form: the payload is bare JSON.
        let v = read_without_registry(b"{\"a\":1}", Some(b"\x00\x00\x00\x00\x05"), None).unwrap();
        assert_eq!(v["a"], 1);
    }

    proptest::proptest! {
        /// Arbitrary bytes (and arbitrary headers) never panic: a value or
        /// a typed error, with and without validation.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            header in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..24)),
            framed in proptest::bool::ANY,
        ) {
            let mut input = bytes;
            if framed {
                // Give most cases a valid prefix so the JSON reader is exercised.
                let mut f = vec![0, 0, 0, 0, 1];
                f.extend_from_slice(&input);
                input = f;
            }
            let schema = schema();
            let _ = read_without_registry(&input, header.as_deref(), None);
            let _ = read_without_registry(&input, header.as_deref(), Some(&schema));
        }

        /// Arbitrary JSON text inside a valid frame never panics either.
        #[test]
        fn arbitrary_json_text_never_panics(text in "[\\[\\]{}\":,0-9a-z.eE+\\-\\\\ ]{0,64}") {
            let mut input = vec![0, 0, 0, 0, 1];
            input.extend_from_slice(text.as_bytes());
            let schema = schema();
            let _ = read_without_registry(&input, None, Some(&schema));
            let _ = decode::<Vec<u8>>(SchemaId::Id(1), text.as_bytes(), None);
        }
    }
}
