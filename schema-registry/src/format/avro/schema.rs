//! An Avro schema as the serdes use it: parsed (references inlined), with
//! the text the registry stores and the name the record strategies use.

use crate::error::SerdeError;
use crate::schema::{LocalReference, LocalSchema, ResolvedSchema, SchemaType};
use apache_avro::Schema;

/// An Avro schema: parsed with its references, plus the text it is
/// registered under.
///
/// The registered text is the application's text, trimmed, with a bare
/// primitive (`"string"`) wrapped as `{"type":"string"}`: what Confluent's
/// Python serializer registers. The text is not re-rendered, because
/// registries that match a look-up by exact text (Apicurio Registry, by
/// default) find a schema registered from the same `.avsc` file only if
/// the bytes are the same.
///
/// ```
/// use kafka_schema_registry::AvroSchema;
///
/// let address = AvroSchema::parse(
///     r#"{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}"#,
/// )?;
/// let order = AvroSchema::with_references(
///     r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"to","type":"Address"}]}"#,
///     &[address],
/// )?;
/// assert_eq!(order.full_name(), Some("shop.Order"));
/// assert_eq!(order.local().references[0].name, "shop.Address");
/// # Ok::<(), kafka_schema_registry::SerdeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AvroSchema {
    /// The schema with every referenced named type inlined: what values
    /// are encoded and decoded with.
    parsed: Schema,
    /// The text and references as the selector registers or looks them up.
    local: LocalSchema,
    /// The full name of a record, enum or fixed; `None` for primitives,
    /// arrays, maps and unions.
    full_name: Option<String>,
}

impl AvroSchema {
    /// Parses a schema that uses no named types defined elsewhere.
    pub fn parse(text: &str) -> Result<Self, SerdeError> {
        Self::with_references(text, &[])
    }

    /// Parses a schema that uses named types defined in `references` (each
    /// a record, enum or fixed, registered first under its full name, as
    /// Confluent's Avro references are).
    pub fn with_references(text: &str, references: &[AvroSchema]) -> Result<Self, SerdeError> {
        let text = registered_text(text);
        let mut local_refs = Vec::with_capacity(references.len());
        for r in references {
            let name = r.full_name.clone().ok_or_else(|| SerdeError::Schema {
                reason: format!(
                    "an Avro reference must be a record, enum or fixed; {:?} has no name",
                    r.local.schema
                ),
            })?;
            local_refs.push(LocalReference {
                name,
                schema: r.local.clone(),
            });
        }
        // Every schema reachable through the references, each once,
        // dependencies first.
        let mut texts: Vec<(&str, &str)> = Vec::new();
        for r in references {
            collect_texts(&r.local, &mut texts);
            if let Some(name) = &r.full_name
                && !texts.iter().any(|(n, _)| n == name)
            {
                texts.push((name, &r.local.schema));
            }
        }
        let parsed = parse_with(&text, texts.iter().map(|(_, t)| *t))?;
        Ok(Self {
            full_name: full_name(&parsed),
            parsed,
            local: LocalSchema {
                schema_type: SchemaType::Avro,
                schema: text,
                references: local_refs,
            },
        })
    }

    /// Parses a schema fetched from the registry with the schemas it refers
    /// to.
    pub fn from_resolved(resolved: &ResolvedSchema) -> Result<Self, SerdeError> {
        if resolved.schema.schema_type != SchemaType::Avro {
            return Err(SerdeError::Schema {
                reason: format!(
                    "the registry holds a {} schema where an Avro one was expected",
                    resolved.schema.schema_type
                ),
            });
        }
        let parsed = parse_with(
            &registered_text(&resolved.schema.schema),
            resolved.references.iter().map(|(_, s)| s.schema.as_str()),
        )?;
        let references = resolved
            .references
            .iter()
            .map(|(name, s)| LocalReference {
                name: name.clone(),
                schema: LocalSchema {
                    schema_type: s.schema_type,
                    schema: s.schema.clone(),
                    references: Vec::new(),
                },
            })
            .collect();
        Ok(Self {
            full_name: full_name(&parsed),
            parsed,
            local: LocalSchema {
                schema_type: SchemaType::Avro,
                schema: resolved.schema.schema.clone(),
                references,
            },
        })
    }

    /// The parsed schema, every reference inlined.
    pub fn schema(&self) -> &Schema {
        &self.parsed
    }

    /// What a serializer registers or looks up.
    pub fn local(&self) -> &LocalSchema {
        &self.local
    }

    /// The full name of a record, enum or fixed (what
    /// `RecordNameStrategy` names the subject after); `None` otherwise.
    pub fn full_name(&self) -> Option<&str> {
        self.full_name.as_deref()
    }
}

/// The text Confluent's Python serializer registers: trimmed, a bare
/// primitive wrapped in an object.
fn registered_text(text: &str) -> String {
    let t = text.trim();
    if t.starts_with('{') || t.starts_with('[') {
        t.to_owned()
    } else {
        format!("{{\"type\":{t}}}")
    }
}

/// The texts of `local`'s references, transitively, dependencies first.
fn collect_texts<'a>(local: &'a LocalSchema, out: &mut Vec<(&'a str, &'a str)>) {
    for r in &local.references {
        collect_texts(&r.schema, out);
        if !out.iter().any(|(n, _)| *n == r.name) {
            out.push((&r.name, &r.schema.schema));
        }
    }
}

/// Parses `text` with the named schemas in `references`, and inlines them.
fn parse_with<'a>(
    text: &str,
    references: impl ExactSizeIterator<Item = &'a str>,
) -> Result<Schema, SerdeError> {
    let schema_error = |e: apache_avro::Error| SerdeError::Schema {
        reason: format!("Avro schema does not parse: {e}"),
    };
    if references.len() == 0 {
        return Schema::parse_str(text).map_err(schema_error);
    }
    let (mut schema, named) =
        Schema::parse_str_with_list(text, references).map_err(schema_error)?;
    schema.denormalize(&named).map_err(schema_error)?;
    Ok(schema)
}

fn full_name(schema: &Schema) -> Option<String> {
    schema.name().map(|n| n.fullname(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Schema as RegistrySchema;

    #[test]
    fn primitives_are_wrapped_and_have_no_name() {
        let s = AvroSchema::parse(" \"string\"\n").unwrap();
        assert_eq!(s.local().schema, r#"{"type":"string"}"#);
        assert_eq!(s.full_name(), None);
        assert_eq!(s.schema(), &Schema::String);
    }

    #[test]
    fn text_is_registered_as_given_but_trimmed() {
        let text =
            "{ \"type\": \"record\", \"name\": \"R\", \"namespace\": \"a.b\",\n \"fields\": [] }";
        let s = AvroSchema::parse(&format!("  {text}\n")).unwrap();
        assert_eq!(s.local().schema, text);
        assert_eq!(s.full_name(), Some("a.b.R"));
        assert!(s.local().references.is_empty());
    }

    #[test]
    fn references_nest_and_are_inlined() {
        let kind = AvroSchema::parse(
            r#"{"type":"enum","name":"Kind","namespace":"x","symbols":["A","B"]}"#,
        )
        .unwrap();
        let inner = AvroSchema::with_references(
            r#"{"type":"record","name":"Inner","namespace":"x","fields":[{"name":"k","type":"Kind"}]}"#,
            std::slice::from_ref(&kind),
        )
        .unwrap();
        let outer = AvroSchema::with_references(
            r#"{"type":"record","name":"Outer","namespace":"y","fields":[{"name":"i","type":"x.Inner"},{"name":"k2","type":"x.Kind"}]}"#,
            &[inner, kind],
        )
        .unwrap();
        let refs: Vec<_> = outer
            .local()
            .references
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(refs, ["x.Inner", "x.Kind"]);
        assert_eq!(
            outer.local().references[0].schema.references[0].name,
            "x.Kind"
        );
        // Inlined: the schema resolves on its own.
        apache_avro::schema::ResolvedSchema::new(outer.schema()).unwrap();
    }

    #[test]
    fn an_unnamed_reference_is_a_schema_error() {
        let prim = AvroSchema::parse("\"int\"").unwrap();
        let err =
            AvroSchema::with_references(r#"{"type":"array","items":"int"}"#, &[prim]).unwrap_err();
        assert!(matches!(err, SerdeError::Schema { .. }), "{err}");
    }

    #[test]
    fn a_missing_reference_is_a_schema_error() {
        let err = AvroSchema::parse(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"Missing"}]}"#,
        )
        .unwrap_err();
        assert!(matches!(err, SerdeError::Schema { .. }), "{err}");
    }

    #[test]
    fn from_resolved_parses_references() {
        let resolved = ResolvedSchema {
            schema: RegistrySchema {
                schema_type: SchemaType::Avro,
                schema: r#"{"type":"record","name":"R","fields":[{"name":"f","type":"F"}]}"#.into(),
                references: Vec::new(),
            },
            references: vec![(
                "F".into(),
                RegistrySchema {
                    schema_type: SchemaType::Avro,
                    schema: r#"{"type":"fixed","name":"F","size":2}"#.into(),
                    references: Vec::new(),
                },
            )],
        };
        let s = AvroSchema::from_resolved(&resolved).unwrap();
        assert_eq!(s.full_name(), Some("R"));
        apache_avro::schema::ResolvedSchema::new(s.schema()).unwrap();
    }
}
