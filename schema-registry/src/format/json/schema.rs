//! A JSON Schema with its references, compiled for validation.

use crate::error::SerdeError;
use crate::schema::{LocalReference, LocalSchema, ResolvedSchema, SchemaType};
use jsonschema::{Draft, Retrieve, Uri, Validator};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// How many validation errors a refusal lists.
const REPORTED_ERRORS: usize = 5;

/// A JSON Schema: the application's (with the schemas it refers to) or one
/// fetched from the registry, parsed and compiled once. Cheap to clone.
///
/// - **Draft**: the one its `$schema` names (drafts 4, 6, 7, 2019-09 and
///   2020-12); without `$schema`, draft 7, as Confluent's serializers
///   assume.
/// - **References** (Confluent's JSON Schema references): each schema a
///   `$ref` points to outside this one is given under the name the `$ref`
///   uses (`"address.json"`, `"https://example.com/address.json"`); a
///   serializer registers it first under that name as its subject. A
///   `$ref` resolves against this set only: nothing is fetched from the
///   network or the file system.
/// - **Record name** (for the record name strategies): its `title`, as
///   Confluent's `JsonSchema.name()`.
#[derive(Clone)]
pub struct JsonSchema {
    inner: Arc<Inner>,
}

struct Inner {
    /// What a serializer registers: the text and the reference tree.
    local: LocalSchema,
    /// The `title`, if a string.
    title: Option<String>,
    /// Every schema referred to, transitively, dependencies first: the
    /// schemas a `$ref` may reach.
    referenced: Vec<(String, Value)>,
    /// The compiled schema.
    validator: Validator,
}

impl fmt::Debug for JsonSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonSchema")
            .field("title", &self.inner.title)
            .field("schema", &self.inner.local.schema)
            .field(
                "references",
                &self
                    .inner
                    .referenced
                    .iter()
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl JsonSchema {
    /// A schema that refers to no other registered schema.
    ///
    /// ```
    /// use kafka_schema_registry::JsonSchema;
    /// use serde_json::json;
    ///
    /// let schema = JsonSchema::new(r#"{
    ///     "title": "Order",
    ///     "type": "object",
    ///     "properties": {"id": {"type": "integer"}},
    ///     "required": ["id"]
    /// }"#)?;
    /// assert_eq!(schema.title(), Some("Order"));
    /// assert!(schema.validate(&json!({"id": 7})).is_ok());
    /// assert!(schema.validate(&json!({"id": "seven"})).is_err());
    /// # Ok::<(), kafka_schema_registry::SerdeError>(())
    /// ```
    pub fn new(schema: &str) -> Result<Self, SerdeError> {
        Self::with_references(schema, Vec::<(String, JsonSchema)>::new())
    }

    /// A schema whose `$ref`s reach other registered schemas, each given
    /// under the name the `$ref` uses (itself with its own references).
    ///
    /// ```
    /// use kafka_schema_registry::JsonSchema;
    /// use serde_json::json;
    ///
    /// let address = JsonSchema::new(r#"{
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string"}},
    ///     "required": ["city"]
    /// }"#)?;
    /// let customer = JsonSchema::with_references(
    ///     r#"{"title": "Customer", "type": "object",
    ///         "properties": {"address": {"$ref": "address.json"}}}"#,
    ///     [("address.json", address)],
    /// )?;
    /// // A serializer registers `address.json` first, under that subject.
    /// assert_eq!(customer.local().references[0].name, "address.json");
    /// assert!(customer.validate(&json!({"address": {"city": "Oslo"}})).is_ok());
    /// assert!(customer.validate(&json!({"address": {}})).is_err());
    /// # Ok::<(), kafka_schema_registry::SerdeError>(())
    /// ```
    pub fn with_references<N: Into<String>>(
        schema: &str,
        references: impl IntoIterator<Item = (N, JsonSchema)>,
    ) -> Result<Self, SerdeError> {
        let mut local_refs = Vec::new();
        let mut referenced: Vec<(String, Value)> = Vec::new();
        for (name, reference) in references {
            let name = name.into();
            for (n, v) in &reference.inner.referenced {
                if !referenced.iter().any(|(seen, _)| seen == n) {
                    referenced.push((n.clone(), v.clone()));
                }
            }
            let root = parse(&reference.inner.local.schema, &name)?;
            if !referenced.iter().any(|(seen, _)| *seen == name) {
                referenced.push((name.clone(), root));
            }
            local_refs.push(LocalReference {
                name,
                schema: reference.inner.local.clone(),
            });
        }
        let local = LocalSchema {
            schema_type: SchemaType::Json,
            schema: schema.to_string(),
            references: local_refs,
        };
        Self::compile(local, referenced)
    }

    /// A schema fetched from the registry, with the schemas it refers to
    /// (what `SchemaRegistryClient::resolved_by_id` returns).
    ///
    /// ```
    /// use kafka_schema_registry::{JsonSchema, ResolvedSchema, Schema, SchemaType};
    ///
    /// let fetched = ResolvedSchema {
    ///     schema: Schema {
    ///         schema_type: SchemaType::Json,
    ///         schema: r#"{"$ref": "name.json"}"#.into(),
    ///         references: vec![],
    ///     },
    ///     references: vec![(
    ///         "name.json".into(),
    ///         Schema { schema_type: SchemaType::Json, schema: r#"{"type":"string"}"#.into(), references: vec![] },
    ///     )],
    /// };
    /// let schema = JsonSchema::from_resolved(&fetched)?;
    /// assert!(schema.validate(&"Ada".into()).is_ok());
    /// assert!(schema.validate(&7.into()).is_err());
    /// # Ok::<(), kafka_schema_registry::SerdeError>(())
    /// ```
    pub fn from_resolved(resolved: &ResolvedSchema) -> Result<Self, SerdeError> {
        let not_json = |what: &str, t: SchemaType| SerdeError::Schema {
            reason: format!("{what} is a {t} schema, not JSON Schema"),
        };
        if resolved.schema.schema_type != SchemaType::Json {
            return Err(not_json("the schema", resolved.schema.schema_type));
        }
        let mut local_refs = Vec::new();
        let mut referenced = Vec::new();
        for (name, schema) in &resolved.references {
            if schema.schema_type != SchemaType::Json {
                return Err(not_json(&format!("reference {name:?}"), schema.schema_type));
            }
            referenced.push((name.clone(), parse(&schema.schema, name)?));
            local_refs.push(LocalReference {
                name: name.clone(),
                schema: LocalSchema {
                    schema_type: SchemaType::Json,
                    schema: schema.schema.clone(),
                    references: Vec::new(),
                },
            });
        }
        let local = LocalSchema {
            schema_type: SchemaType::Json,
            schema: resolved.schema.schema.clone(),
            references: local_refs,
        };
        Self::compile(local, referenced)
    }

    fn compile(local: LocalSchema, referenced: Vec<(String, Value)>) -> Result<Self, SerdeError> {
        let root = parse(&local.schema, "the schema")?;
        if !root.is_object() && !root.is_boolean() {
            return Err(SerdeError::Schema {
                reason: "a JSON Schema is an object or a boolean".into(),
            });
        }
        let draft = Draft::Draft7.detect(&root);
        if draft == Draft::Unknown {
            return Err(SerdeError::Schema {
                reason: format!(
                    "unknown $schema {}: expected draft 4, 6, 7, 2019-09 or 2020-12",
                    root["$schema"]
                ),
            });
        }
        let retriever = References::new(&root, &referenced);
        let mut options = jsonschema::options()
            .with_draft(draft)
            .with_retriever(retriever);
        if id_of(&root).is_none() {
            // Relative `$ref`s ("address.json") resolve against the
            // default base, where the references are keyed.
            options = options.with_base_uri(DEFAULT_BASE);
        }
        let validator = options.build(&root).map_err(|e| SerdeError::Schema {
            reason: e.to_string(),
        })?;
        let title = root
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(Self {
            inner: Arc::new(Inner {
                local,
                title,
                referenced,
                validator,
            }),
        })
    }

    /// What a serializer registers: the text, and each reference under its
    /// name.
    pub fn local(&self) -> &LocalSchema {
        &self.inner.local
    }

    /// The schema's `title`, if it has one.
    pub fn title(&self) -> Option<&str> {
        self.inner.title.as_deref()
    }

    /// The record name the record name strategies use: the `title`
    /// (Confluent's `JsonSchema.name()`); a [`SerdeError::Schema`] when the
    /// schema has none.
    pub fn record_name(&self) -> Result<&str, SerdeError> {
        self.title().ok_or_else(|| SerdeError::Schema {
            reason: "the schema has no \"title\": the record name strategies name the subject \
                     after it; add one or use TopicNameStrategy"
                .into(),
        })
    }

    /// Checks `value` against the schema: a refusal is
    /// [`SerdeError::Encode`] listing the first errors, each at its JSON
    /// pointer in the value.
    pub fn validate(&self, value: &Value) -> Result<(), SerdeError> {
        self.violations(value)
            .map_err(|reason| SerdeError::Encode { reason })
    }

    /// The first errors of `value` against the schema, as one line.
    pub(crate) fn violations(&self, value: &Value) -> Result<(), String> {
        let mut errors = self.inner.validator.iter_errors(value);
        let Some(first) = errors.next() else {
            return Ok(());
        };
        let mut listed = vec![first];
        listed.extend(errors.by_ref().take(REPORTED_ERRORS - 1));
        let more = errors.count();
        let mut reason = listed
            .iter()
            .map(|e| format!("at {:?}: {e}", e.instance_path().as_str()))
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            reason.push_str(&format!("; and {more} more"));
        }
        Err(reason)
    }
}

/// Parses schema text; an error names `what` it is.
fn parse(text: &str, what: &str) -> Result<Value, SerdeError> {
    serde_json::from_str(text).map_err(|e| SerdeError::Schema {
        reason: format!("{what} is not valid JSON: {e}"),
    })
}

/// Resolves a `$ref` from the schemas given with the root, never from the
/// network or the file system.
struct References {
    /// Each reference under every URI a `$ref` to its name may resolve to:
    /// the name as given, resolved against the default base
    /// (`json-schema:///name`), and against the root's `$id`.
    by_uri: HashMap<String, Value>,
    /// The names, for the error.
    names: Vec<String>,
}

impl References {
    fn new(root: &Value, referenced: &[(String, Value)]) -> Self {
        let base = id_of(root).and_then(|id| jsonschema::uri::from_str(id).ok());
        let mut by_uri = HashMap::new();
        for (name, schema) in referenced {
            let mut keys = vec![name.clone()];
            if let Ok(uri) = jsonschema::uri::from_str(name) {
                keys.push(uri.as_str().to_string());
            }
            if let Some(base) = &base
                && let Ok(uri) = jsonschema::uri::resolve_against(&base.borrow(), name)
            {
                keys.push(uri.as_str().to_string());
            }
            for key in keys {
                by_uri
                    .entry(without_fragment(&key).to_string())
                    .or_insert_with(|| schema.clone());
            }
        }
        Self {
            by_uri,
            names: referenced.iter().map(|(n, _)| n.clone()).collect(),
        }
    }
}

impl Retrieve for References {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let key = without_fragment(uri.as_str());
        self.by_uri.get(key).cloned().ok_or_else(|| {
            format!(
                "{key} is not among the schema's references ({:?}); references are \
                 resolved from the registered set only, never fetched",
                self.names
            )
            .into()
        })
    }
}

/// The base a schema without `$id` resolves relative `$ref`s against
/// (the `referencing` crate's default).
const DEFAULT_BASE: &str = "json-schema:///";

/// The root's `$id` (`id` in draft 4).
fn id_of(root: &Value) -> Option<&str> {
    root.get("$id")
        .or_else(|| root.get("id"))
        .and_then(Value::as_str)
}

fn without_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(before, _)| before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn encode_reason(r: Result<(), SerdeError>) -> String {
        match r {
            Err(SerdeError::Encode { reason }) => reason,
            other => panic!("expected an Encode error, got {other:?}"),
        }
    }

    /// Without `$schema` the draft is 7: `prefixItems` (2020-12) means
    /// nothing, `items` as an array is a tuple.
    #[test]
    fn default_draft_is_7() {
        let s = JsonSchema::new(
            r#"{"items": [{"type": "string"}], "prefixItems": [{"type": "integer"}]}"#,
        )
        .unwrap();
        assert!(s.validate(&json!(["a", 1])).is_ok());
        assert!(s.validate(&json!([1])).is_err());
    }

    /// `$schema` 2020-12 switches to `prefixItems`.
    #[test]
    fn draft_2020_12_from_schema_keyword() {
        let s = JsonSchema::new(
            r#"{"$schema": "https://json-schema.org/draft/2020-12/schema",
                "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}"#,
        )
        .unwrap();
        assert!(s.validate(&json!([1, "a"])).is_ok());
        assert!(s.validate(&json!(["a"])).is_err());
        assert!(s.validate(&json!([1, 2])).is_err());
    }

    /// Draft 7 named explicitly, with its `#` form.
    #[test]
    fn draft_7_by_name() {
        let s = JsonSchema::new(
            r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}"#,
        )
        .unwrap();
        assert!(s.validate(&json!(1)).is_ok());
    }

    /// An unknown `$schema`, text that is not JSON, a schema that is not
    /// an object, and one the meta-schema refuses: typed Schema errors.
    #[test]
    fn unusable_schemas_are_schema_errors() {
        for text in [
            r#"{"$schema": "https://example.com/my-draft", "type": "string"}"#,
            r#"{"type": "#,
            "[1, 2]",
            r#"{"type": 12}"#,
            r#"{"minLength": "three"}"#,
        ] {
            let e = JsonSchema::new(text).unwrap_err();
            assert!(matches!(e, SerdeError::Schema { .. }), "{text}: {e:?}");
        }
    }

    /// A `$ref` to a schema not given is refused when compiling, naming
    /// it; nothing is fetched (an http URI to a closed port fails the same
    /// way; the `jsonschema` build has no HTTP client at all).
    #[test]
    fn missing_reference_is_a_schema_error_without_fetching() {
        for r in ["other.json", "http://127.0.0.1:9/other.json"] {
            let text = format!(r#"{{"properties": {{"a": {{"$ref": "{r}"}}}}}}"#);
            let e = JsonSchema::new(&text).unwrap_err();
            let SerdeError::Schema { reason } = e else {
                panic!("{e:?}")
            };
            assert!(reason.contains(r), "{reason}");
        }
    }

    /// References resolve by name, transitively, and with a root `$id`.
    #[test]
    fn references_resolve_transitively() {
        let country = JsonSchema::new(r#"{"type": "string", "enum": ["NO", "SE"]}"#).unwrap();
        let address = JsonSchema::with_references(
            r#"{"type": "object", "properties": {"country": {"$ref": "country.json"}}, "required": ["country"]}"#,
            [("country.json", country)],
        )
        .unwrap();
        let customer = JsonSchema::with_references(
            r#"{"$id": "https://example.com/schemas/customer.json", "title": "Customer",
                "properties": {"address": {"$ref": "address.json"}}}"#,
            [("address.json", address)],
        )
        .unwrap();
        assert!(
            customer
                .validate(&json!({"address": {"country": "NO"}}))
                .is_ok()
        );
        let reason = encode_reason(customer.validate(&json!({"address": {"country": "DK"}})));
        assert!(reason.contains("\"/address/country\""), "{reason}");
        // The registration tree: customer -> address -> country.
        let local = customer.local();
        assert_eq!(local.references[0].name, "address.json");
        assert_eq!(
            local.references[0].schema.references[0].name,
            "country.json"
        );
    }

    /// The first errors are listed with their pointers, then a count.
    #[test]
    fn violations_list_pointers_and_count_the_rest() {
        let s = JsonSchema::new(r#"{"type": "array", "items": {"type": "integer"}}"#).unwrap();
        let reason = encode_reason(s.validate(&json!(["a", "b", "c", "d", "e", "f", "g"])));
        assert!(reason.starts_with("at \"/0\": "), "{reason}");
        assert!(reason.contains("at \"/4\": "), "{reason}");
        assert!(!reason.contains("at \"/5\""), "{reason}");
        assert!(reason.ends_with("; and 2 more"), "{reason}");
    }

    /// No title: the record name strategies get a typed Schema error.
    #[test]
    fn record_name_is_the_title() {
        let s = JsonSchema::new(r#"{"title": "Order"}"#).unwrap();
        assert_eq!(s.record_name().unwrap(), "Order");
        let s = JsonSchema::new(r#"{"type": "object"}"#).unwrap();
        assert!(matches!(s.record_name(), Err(SerdeError::Schema { .. })));
    }

    /// A fetched schema of another type is refused.
    #[test]
    fn resolved_must_be_json() {
        let resolved = ResolvedSchema {
            schema: crate::schema::Schema {
                schema_type: SchemaType::Avro,
                schema: r#""string""#.into(),
                references: vec![],
            },
            references: vec![],
        };
        assert!(matches!(
            JsonSchema::from_resolved(&resolved),
            Err(SerdeError::Schema { .. })
        ));
    }
}
