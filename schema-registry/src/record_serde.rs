//! The traits the typed producer, consumer, sink and pipeline layers use:
//! one serializer or deserializer per format, chosen by the application.

use crate::context::SerializationContext;
use crate::error::SerdeError;
use bytes::Bytes;
use std::future::Future;

/// Turns an application value into the bytes of a record's key or value.
///
/// Registry serializers are asynchronous: the first value of a schema may
/// register it or look it up; later ones hit the cache.
///
/// ```
/// use bytes::Bytes;
/// use kafka_schema_registry::{RecordSerializer, SerdeError, SerializationContext};
///
/// /// Writes UTF-8 strings unframed.
/// struct Utf8;
///
/// impl RecordSerializer<str> for Utf8 {
///     async fn serialize(&self, _ctx: &SerializationContext<'_>, value: &str) -> Result<Bytes, SerdeError> {
///         Ok(Bytes::copy_from_slice(value.as_bytes()))
///     }
/// }
/// ```
pub trait RecordSerializer<T: ?Sized>: Send + Sync {
    /// Serializes one value. A `null` key or value never reaches a
    /// serializer: it stays null and registers nothing.
    fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &T,
    ) -> impl Future<Output = Result<Bytes, SerdeError>> + Send;
}

/// Turns the bytes of a record's key or value back into a value.
///
/// ```
/// use kafka_schema_registry::{RecordDeserializer, SerdeError, SerializationContext};
///
/// /// Reads UTF-8 strings written unframed.
/// struct Utf8;
///
/// impl RecordDeserializer for Utf8 {
///     type Value = String;
///     async fn deserialize(&self, _ctx: &SerializationContext<'_>, bytes: &[u8]) -> Result<String, SerdeError> {
///         String::from_utf8(bytes.to_vec()).map_err(|e| SerdeError::Decode { schema: "utf-8".into(), reason: e.to_string() })
///     }
/// }
/// ```
pub trait RecordDeserializer: Send + Sync {
    /// What the bytes decode to.
    type Value: Send;

    /// Deserializes one non-null key or value.
    fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> impl Future<Output = Result<Self::Value, SerdeError>> + Send;
}

/// Keys or values that are bytes already, written and read as they are
/// (no registry frame): Kafka's `ByteArraySerializer` and
/// `ByteArrayDeserializer`, for the side of a record that no schema
/// describes.
///
/// ```
/// use bytes::Bytes;
/// use kafka_schema_registry::{RawBytes, RecordDeserializer, RecordSerializer, SerializationContext};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ctx = SerializationContext::key("orders");
/// let bytes = RawBytes.serialize(&ctx, &Bytes::from("k")).await.unwrap();
/// assert_eq!(RawBytes.deserialize(&ctx, &bytes).await.unwrap(), "k");
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RawBytes;

impl RecordSerializer<Bytes> for RawBytes {
    async fn serialize(
        &self,
        _ctx: &SerializationContext<'_>,
        value: &Bytes,
    ) -> Result<Bytes, SerdeError> {
        Ok(value.clone())
    }
}

impl RecordDeserializer for RawBytes {
    type Value = Bytes;

    async fn deserialize(
        &self,
        _ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<Bytes, SerdeError> {
        Ok(Bytes::copy_from_slice(bytes))
    }
}
