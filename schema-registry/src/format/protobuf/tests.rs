//! The Protobuf format without a registry: schemas, indexes, registered
//! form, framing, decoding of good and bad bytes.

use super::schema::ProtobufSchema;
use super::serde::{decode_typed, decode_with, frame, parse_registered};
use crate::error::SerdeError;
use crate::format::ParsedSchemas;
use crate::schema::{ResolvedSchema, Schema, SchemaType};
use crate::wire::{self, SchemaId};
use crate::{LocalSchema, MessageIndexError};
use proptest::prelude::*;
use prost::Message as _;
use prost_reflect::prost_types::Timestamp;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use std::sync::Arc;

const CURRENCY: &str = r#"syntax = "proto3";
package shop;
message Currency { string code = 1; }
"#;

const MONEY: &str = r#"syntax = "proto3";
package shop;
import "currency.proto";
message Money { int64 units = 1; Currency currency = 2; }
"#;

const SHOP: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "money.proto";

message Customer { string name = 1; }
message Order {
  message Line { Money price = 1; int32 qty = 2; }
  enum Status { NEW = 0; PAID = 1; }
  repeated Line lines = 1;
  map<string, string> tags = 2;
  Status status = 3;
  google.protobuf.Timestamp at = 4;
  oneof payment { string card = 5; int64 voucher = 6; }
  message Audit { string by = 1; }
}
message Deep {
  message A {
    message X0 {}
    message X1 {}
    message X2 {}
    message X3 { string leaf = 1; }
  }
  message B {}
}
"#;

fn shop() -> ProtobufSchema {
    ProtobufSchema::from_proto(
        SHOP,
        &[("money.proto", MONEY), ("currency.proto", CURRENCY)],
    )
    .expect("the shop schema compiles")
}

/// Message indexes are the index among the message types at each level, in
/// file order (Confluent's `toMessageIndexes`); the synthesized map entry
/// counts where its field is declared.
#[test]
fn message_indexes_follow_declaration_order() {
    let s = shop();
    let cases: &[(&str, &[i32])] = &[
        ("shop.Customer", &[0]),
        ("shop.Order", &[1]),
        ("shop.Order.Line", &[1, 0]),
        ("shop.Order.TagsEntry", &[1, 1]),
        ("shop.Order.Audit", &[1, 2]),
        ("shop.Deep", &[2]),
        ("shop.Deep.A", &[2, 0]),
        ("shop.Deep.A.X3", &[2, 0, 3]),
        ("shop.Deep.B", &[2, 1]),
    ];
    for &(name, indexes) in cases {
        assert_eq!(s.message_indexes(name).as_deref(), Some(indexes), "{name}");
        let back = s.message_by_indexes(indexes).unwrap();
        assert_eq!(back.full_name(), name);
    }
    // Every message of the root file round-trips.
    let mut all = Vec::new();
    let mut stack: Vec<_> = s.root_file().messages().collect();
    while let Some(m) = stack.pop() {
        stack.extend(m.child_messages());
        all.push(m);
    }
    assert_eq!(all.len(), 12);
    for m in all {
        let ix = s.message_indexes(m.full_name()).unwrap();
        assert_eq!(s.message_by_indexes(&ix).unwrap(), m);
    }
}

/// A message of an imported file, or no message at all, has no indexes in
/// the root file.
#[test]
fn messages_outside_the_root_file_have_no_indexes() {
    let s = shop();
    assert!(s.message("shop.Money").is_some());
    assert_eq!(s.message_indexes("shop.Money"), None);
    assert_eq!(s.message_indexes("google.protobuf.Timestamp"), None);
    assert_eq!(s.message_indexes("shop.Nope"), None);
}

/// An index path naming no message is a typed error saying where it left
/// the file.
#[test]
fn index_paths_naming_no_message_are_typed_errors() {
    let s = shop();
    assert_eq!(s.message_by_indexes(&[]), Err(MessageIndexError::Empty));
    assert_eq!(
        s.message_by_indexes(&[3]),
        Err(MessageIndexError::OutOfRange {
            indexes: vec![3],
            depth: 0,
            index: 3,
            within: "the schema's file".into(),
            available: 3,
        })
    );
    assert_eq!(
        s.message_by_indexes(&[2, 0, 4]),
        Err(MessageIndexError::OutOfRange {
            indexes: vec![2, 0, 4],
            depth: 2,
            index: 4,
            within: "shop.Deep.A".into(),
            available: 4,
        })
    );
    assert!(matches!(
        s.message_by_indexes(&[0, 0]),
        Err(MessageIndexError::OutOfRange { available: 0, .. })
    ));
    assert!(matches!(
        s.message_by_indexes(&[-1]),
        Err(MessageIndexError::OutOfRange { index: -1, .. })
    ));
}

/// The registered form: the root's text, its imports as references under
/// their import paths, depth first, each with its own text; the well-known
/// import left out unless `skip.known.types` is off, then registered as a
/// base64 descriptor (no text was given for it).
#[test]
fn registered_form_has_imports_as_references_under_their_paths() {
    let s = shop();
    let local = s.local_schema(true);
    assert_eq!(local.schema_type, SchemaType::Protobuf);
    assert_eq!(local.schema, SHOP);
    assert_eq!(local.references.len(), 1);
    let money = &local.references[0];
    assert_eq!(money.name, "money.proto");
    assert_eq!(money.schema.schema, MONEY);
    assert_eq!(money.schema.references.len(), 1);
    assert_eq!(money.schema.references[0].name, "currency.proto");
    assert_eq!(money.schema.references[0].schema.schema, CURRENCY);
    assert!(money.schema.references[0].schema.references.is_empty());

    let all = s.local_schema(false);
    let names: Vec<_> = all.references.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["google/protobuf/timestamp.proto", "money.proto"]);
    let timestamp = ProtobufSchema::from_resolved(&resolved(&all.references[0].schema, &[]))
        .expect("the base64 descriptor of timestamp.proto parses");
    assert!(timestamp.message("google.protobuf.Timestamp").is_some());
}

/// A `ResolvedSchema` as a reader gets it: the references flattened,
/// dependencies first.
fn resolved(local: &LocalSchema, extra: &[(&str, &LocalSchema)]) -> ResolvedSchema {
    fn flatten(local: &LocalSchema, out: &mut Vec<(String, Schema)>) {
        for r in &local.references {
            flatten(&r.schema, out);
            if !out.iter().any(|(n, _)| *n == r.name) {
                out.push((r.name.clone(), schema_of(&r.schema)));
            }
        }
    }
    let mut references = Vec::new();
    for (name, schema) in extra {
        references.push((name.to_string(), schema_of(schema)));
    }
    flatten(local, &mut references);
    ResolvedSchema {
        schema: schema_of(local),
        references,
    }
}

fn schema_of(local: &LocalSchema) -> Schema {
    Schema {
        schema_type: local.schema_type,
        schema: local.schema.clone(),
        references: Vec::new(),
    }
}

/// A schema read back from its registered form (text) names the same
/// messages at the same indexes.
#[test]
fn fetched_text_schema_parses_to_the_same_messages() {
    let s = shop();
    let back = ProtobufSchema::from_resolved(&resolved(&s.local_schema(true), &[])).unwrap();
    for name in ["shop.Order.Line", "shop.Deep.A.X3", "shop.Customer"] {
        assert_eq!(back.message_indexes(name), s.message_indexes(name));
    }
}

/// A generated type's schema registers base64 descriptors (root and
/// imports), and a reader parses them back, here a descriptor whose file
/// imports another.
#[test]
fn descriptor_schemas_register_as_base64_and_parse_back() {
    // A pool standing in for prost-generated code: compiled elsewhere.
    let compiled = shop();
    let order = compiled.message("shop.Order").unwrap();
    let generated = ProtobufSchema::from_file(order.parent_file());
    let local = generated.local_schema(true);
    assert!(
        !local.schema.contains(' '),
        "base64, not text: {}",
        local.schema
    );
    assert_eq!(local.references[0].name, "money.proto");
    assert_eq!(
        local.references[0].schema.references[0].name,
        "currency.proto"
    );
    let back = ProtobufSchema::from_resolved(&resolved(&local, &[])).unwrap();
    assert_eq!(back.message_indexes("shop.Deep.A.X3"), Some(vec![2, 0, 3]));
    assert!(back.message("shop.Currency").is_some());

    // A well-known generated type: google.protobuf.Timestamp is its own
    // file's first message.
    let ts = ProtobufSchema::from_message::<Timestamp>();
    assert_eq!(
        ts.message_indexes("google.protobuf.Timestamp"),
        Some(vec![0])
    );
}

/// Schemas that cannot be used are `SerdeError::Schema` with the reason.
#[test]
fn unusable_schemas_are_schema_errors() {
    let err = ProtobufSchema::from_proto("syntax = \"proto3\"; message {", &[]).unwrap_err();
    assert!(matches!(err, SerdeError::Schema { .. }), "{err}");
    let err = ProtobufSchema::from_proto(SHOP, &[("money.proto", MONEY)]).unwrap_err();
    let SerdeError::Schema { reason } = err else {
        panic!("{err}")
    };
    assert!(reason.contains("currency.proto"), "{reason}");
    let avro = ResolvedSchema {
        schema: Schema {
            schema_type: SchemaType::Avro,
            schema: "\"string\"".into(),
            references: vec![],
        },
        references: vec![],
    };
    assert!(matches!(
        ProtobufSchema::from_resolved(&avro),
        Err(SerdeError::Schema { .. })
    ));
    // Base64 that is no descriptor.
    let junk = ResolvedSchema {
        schema: Schema {
            schema_type: SchemaType::Protobuf,
            schema: "////".into(),
            references: vec![],
        },
        references: vec![],
    };
    assert!(matches!(
        ProtobufSchema::from_resolved(&junk),
        Err(SerdeError::Schema { .. })
    ));
}

fn order_message(s: &ProtobufSchema) -> DynamicMessage {
    let order = s.message("shop.Order").unwrap();
    let line = s.message("shop.Order.Line").unwrap();
    let money = s.message("shop.Money").unwrap();
    let mut price = DynamicMessage::new(money);
    price.set_field_by_name("units", Value::I64(1250));
    let mut l = DynamicMessage::new(line);
    l.set_field_by_name("price", Value::Message(price));
    l.set_field_by_name("qty", Value::I32(3));
    let mut o = DynamicMessage::new(order);
    o.set_field_by_name("lines", Value::List(vec![Value::Message(l)]));
    o.set_field_by_name("status", Value::EnumNumber(1));
    o.set_field_by_name("voucher", Value::I64(7));
    o
}

/// A frame is the prefix, the indexes and the payload; decoding it with the
/// schema gives the message back.
#[test]
fn framed_messages_decode_back() {
    let s = shop();
    let o = order_message(&s);
    let bytes = frame(42, &s.message_indexes("shop.Order").unwrap(), &o);
    assert_eq!(&bytes[..7], &[0, 0, 0, 0, 42, 0x02, 0x02]);
    assert_eq!(&bytes[7..], o.encode_to_vec().as_slice());
    let f = wire::read_frame(&bytes, None, true).unwrap();
    let back = decode_with(
        &s,
        SchemaId::Id(42),
        f.indexes.as_deref().unwrap(),
        f.payload,
    )
    .unwrap();
    assert_eq!(back, o);

    // The first message writes the single index byte 00.
    let c = DynamicMessage::new(s.message("shop.Customer").unwrap());
    let bytes = frame(7, &s.message_indexes("shop.Customer").unwrap(), &c);
    assert_eq!(&bytes[..], &[0, 0, 0, 0, 7, 0]);
}

/// The typed reader checks the frame's message against the type's full
/// name before decoding.
#[test]
fn typed_decoding_checks_the_message_name() {
    let ts_schema = ProtobufSchema::from_message::<Timestamp>();
    let ts = Timestamp {
        seconds: 1_700_000_000,
        nanos: 5,
    };
    let bytes = frame(3, &[0], &ts);
    let f = wire::read_frame(&bytes, None, true).unwrap();
    let back: Timestamp = decode_typed(
        &ts_schema,
        SchemaId::Id(3),
        &[0],
        f.payload,
        "google.protobuf.Timestamp",
    )
    .unwrap();
    assert_eq!(back, ts);

    let s = shop();
    let err = decode_typed::<Timestamp>(
        &s,
        SchemaId::Id(9),
        &[1],
        f.payload,
        "google.protobuf.Timestamp",
    )
    .unwrap_err();
    let SerdeError::Decode { schema, reason } = err else {
        panic!("{err}")
    };
    assert_eq!(schema, "id 9");
    assert!(reason.contains("shop.Order"), "{reason}");
    assert_eq!(ts.descriptor().full_name(), "google.protobuf.Timestamp");
}

/// Truncated and corrupt payloads, and indexes naming no message, are
/// `SerdeError::Decode` naming the schema id.
#[test]
fn corrupt_payloads_are_decode_errors() {
    let s = shop();
    let payload = order_message(&s).encode_to_vec();
    for cut in 1..payload.len() {
        // Some prefixes are themselves valid messages; none may panic, and
        // an error is always the typed one.
        if let Err(e) = decode_with(&s, SchemaId::Id(5), &[1], &payload[..cut]) {
            assert!(matches!(e, SerdeError::Decode { .. }), "{e}");
        }
    }
    // A truncated length-delimited field.
    let err = decode_with(&s, SchemaId::Id(5), &[1], &[0x0a, 0x10, 0x01]).unwrap_err();
    assert!(
        matches!(&err, SerdeError::Decode { schema, .. } if schema == "id 5"),
        "{err}"
    );
    // Wire type 7 does not exist.
    assert!(decode_with(&s, SchemaId::Id(5), &[0], &[0x0f]).is_err());
    // Indexes naming no message.
    let err = decode_with(&s, SchemaId::Id(5), &[9, 9], &[]).unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
}

/// The parsed-schema cache keeps at most its capacity.
#[test]
fn schema_cache_is_bounded() {
    let cache: ParsedSchemas<Arc<ProtobufSchema>> = ParsedSchemas::new(2);
    let parse = |id| move |r: &ResolvedSchema| parse_registered(id, r);
    let r = resolved(&shop().local_schema(true), &[]);
    for id in 1..=5 {
        cache
            .parse(SchemaId::Id(id), &r, parse(SchemaId::Id(id)))
            .unwrap();
    }
    assert_eq!(cache.len(), 2);
    let again = cache
        .parse(SchemaId::Id(5), &r, parse(SchemaId::Id(5)))
        .unwrap();
    assert!(Arc::ptr_eq(
        &again,
        &cache
            .parse(SchemaId::Id(5), &r, parse(SchemaId::Id(5)))
            .unwrap()
    ));
    let err = cache
        .parse(
            SchemaId::Id(6),
            &ResolvedSchema {
                schema: Schema {
                    schema_type: SchemaType::Protobuf,
                    schema: "message {".into(),
                    references: vec![],
                },
                references: vec![],
            },
            parse(SchemaId::Id(6)),
        )
        .unwrap_err();
    assert!(err.to_string().contains("schema id 6"), "{err}");
}

proptest! {
    /// Decoding arbitrary bytes, framed or not, never panics: every failure
    /// is a typed error.
    #[test]
    fn decoding_arbitrary_bytes_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..96),
        header in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..24)),
    ) {
        let s = shop_cached();
        if let Ok(f) = wire::read_frame(&bytes, header.as_deref(), true) {
            let ix = f.indexes.unwrap_or_else(|| vec![0]);
            let _ = decode_with(&s, SchemaId::Id(1), &ix, f.payload);
            let _ = decode_typed::<Timestamp>(&s, SchemaId::Id(1), &ix, f.payload, "shop.Order");
        }
        for ix in [&[0][..], &[1], &[1, 0], &[2, 0, 3], &[1, 1]] {
            let _ = decode_with(&s, SchemaId::Id(1), ix, &bytes);
        }
    }
}

fn shop_cached() -> ProtobufSchema {
    static SHOP_SCHEMA: std::sync::OnceLock<ProtobufSchema> = std::sync::OnceLock::new();
    SHOP_SCHEMA.get_or_init(shop).clone()
}

/// Map entries sit among the nested types where their field is declared,
/// as `protoc` places them (`protoc` 3.21 gives `Line, TagsEntry, Audit,
/// MoreEntry, Z` for this file), so descriptor-derived indexes agree with
/// those of code generated by `protoc`.
#[test]
fn map_entries_sit_where_protoc_puts_them() {
    let s = ProtobufSchema::from_proto(
        r#"syntax = "proto3";
package shop;
message Order {
  message Line { int32 qty = 2; }
  repeated Line lines = 1;
  map<string, string> tags = 2;
  message Audit { string by = 1; }
  map<int32, Line> more = 3;
  message Z {}
}"#,
        &[],
    )
    .unwrap();
    let order = s.message("shop.Order").unwrap();
    let nested: Vec<_> = order
        .child_messages()
        .map(|m| m.name().to_owned())
        .collect();
    assert_eq!(nested, ["Line", "TagsEntry", "Audit", "MoreEntry", "Z"]);
    assert_eq!(s.message_indexes("shop.Order.Z"), Some(vec![0, 4]));
}
