//! What a serializer or deserializer is told about the record.

use kafka_proto::record::RecordHeader;

/// Which part of a record is being (de)serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The record key (subject `<topic>-key`).
    Key,
    /// The record value (subject `<topic>-value`).
    Value,
}

impl Field {
    /// The header that holds this field's schema id in the header form.
    pub fn schema_id_header(self) -> &'static str {
        match self {
            Field::Key => crate::wire::KEY_SCHEMA_ID_HEADER,
            Field::Value => crate::wire::VALUE_SCHEMA_ID_HEADER,
        }
    }
}

/// The record around a key or value: its topic, which field it is, and its
/// headers (Confluent's `SerializationContext`).
#[derive(Debug, Clone, Copy)]
pub struct SerializationContext<'a> {
    /// The topic the record is written to or read from.
    pub topic: &'a str,
    /// Key or value.
    pub field: Field,
    /// The record's headers.
    pub headers: &'a [RecordHeader],
}

impl<'a> SerializationContext<'a> {
    /// The context of a record's value, without headers.
    pub fn value(topic: &'a str) -> Self {
        Self {
            topic,
            field: Field::Value,
            headers: &[],
        }
    }

    /// The context of a record's key, without headers.
    pub fn key(topic: &'a str) -> Self {
        Self {
            topic,
            field: Field::Key,
            headers: &[],
        }
    }

    /// The value of this field's schema-id header (the header form), if the
    /// record has one.
    pub fn schema_id_header(&self) -> Option<&'a [u8]> {
        let name = self.field.schema_id_header();
        self.headers
            .iter()
            .rev()
            .find(|h| h.key == name)
            .and_then(|h| h.value.as_deref())
    }
}
