//! Which schema id a serializer writes: Confluent's choice, in order
//! (`AbstractKafkaAvroSerializer.serializeImpl` and its Protobuf and JSON
//! Schema twins):
//!
//! 1. `auto.register.schemas` (default): register the references depth
//!    first, each under its name as the subject (looked up instead with
//!    `reference.lookup.only`), then the schema;
//! 2. `use.schema.id`: that id, checked against the local schema with
//!    `id.compatibility.strict`;
//! 3. `use.latest.version`: the subject's latest version, checked with
//!    `latest.compatibility.strict`;
//! 4. otherwise look the schema up, failing when it is not registered.
//!
//! The choice is cached per (subject, schema): the second value of a
//! schema costs no request (with `use.latest.version`, until
//! `latest.cache.ttl.sec` passes).

use crate::context::{Field, SerializationContext};
use crate::error::SerdeError;
use crate::registry::{RegistryError, SchemaRegistryClient, SharedBounded, latest_cache_ttl};
use crate::schema::{LocalReference, LocalSchema, ResolvedSchema, Schema, SchemaReference};
use kafka_client::{ConfigError, Properties};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

impl SubjectNameStrategy {
    /// The names accepted in `key.subject.name.strategy` /
    /// `value.subject.name.strategy`: Confluent's Java class names and
    /// their short forms.
    const NAMES: [(&'static str, SubjectNameStrategy); 6] = [
        (
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
            SubjectNameStrategy::TopicName,
        ),
        (
            "io.confluent.kafka.serializers.subject.RecordNameStrategy",
            SubjectNameStrategy::RecordName,
        ),
        (
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
            SubjectNameStrategy::TopicRecordName,
        ),
        ("TopicNameStrategy", SubjectNameStrategy::TopicName),
        ("RecordNameStrategy", SubjectNameStrategy::RecordName),
        (
            "TopicRecordNameStrategy",
            SubjectNameStrategy::TopicRecordName,
        ),
    ];

    /// The subject for a value in `ctx` whose record full name (Avro
    /// record, Protobuf message, JSON Schema `title`) is `record_name`.
    /// The record strategies need the name: without one it is
    /// [`SerdeError::Schema`].
    ///
    /// ```
    /// use kafka_schema_registry::{SerializationContext, SubjectNameStrategy};
    /// let ctx = SerializationContext::value("orders");
    /// assert_eq!(SubjectNameStrategy::TopicName.subject(&ctx, None).unwrap(), "orders-value");
    /// assert_eq!(SubjectNameStrategy::TopicRecordName.subject(&ctx, Some("shop.Order")).unwrap(), "orders-shop.Order");
    /// assert!(SubjectNameStrategy::RecordName.subject(&ctx, None).is_err());
    /// ```
    pub fn subject(
        self,
        ctx: &SerializationContext<'_>,
        record_name: Option<&str>,
    ) -> Result<String, SerdeError> {
        let name = || {
            record_name
                .filter(|n| !n.is_empty())
                .ok_or_else(|| SerdeError::Schema {
                    reason: format!(
                        "{self:?} strategy needs the record's name, and the schema has none (an Avro record, a Protobuf message, a JSON Schema with a title); use TopicNameStrategy or name the schema"
                    ),
                })
        };
        Ok(match self {
            SubjectNameStrategy::TopicName => match ctx.field {
                Field::Key => format!("{}-key", ctx.topic),
                Field::Value => format!("{}-value", ctx.topic),
            },
            SubjectNameStrategy::RecordName => name()?.to_string(),
            SubjectNameStrategy::TopicRecordName => format!("{}-{}", ctx.topic, name()?),
        })
    }

    fn take_from(props: &mut Properties, key: &str) -> Result<Option<Self>, ConfigError> {
        props.one_of(key, &Self::NAMES)
    }
}

/// A serializer's settings, with Confluent's names and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SerializerConfig {
    /// `auto.register.schemas` (true): register the local schema.
    pub auto_register_schemas: bool,
    /// `use.schema.id` (-1, unset): write with this registered id.
    pub use_schema_id: Option<i32>,
    /// `id.compatibility.strict` (true): check the local schema against
    /// the `use.schema.id` schema.
    pub id_compatibility_strict: bool,
    /// `use.latest.version` (false): write with the subject's latest
    /// version.
    pub use_latest_version: bool,
    /// `latest.compatibility.strict` (true): check the local schema
    /// against the latest version.
    pub latest_compatibility_strict: bool,
    /// `normalize.schemas` (false): ask the registry to normalize.
    pub normalize_schemas: bool,
    /// `key.subject.name.strategy` (`TopicNameStrategy`).
    pub key_subject_name_strategy: SubjectNameStrategy,
    /// `value.subject.name.strategy` (`TopicNameStrategy`).
    pub value_subject_name_strategy: SubjectNameStrategy,
    /// `reference.lookup.only` (false): look references up instead of
    /// registering them.
    pub reference_lookup_only: bool,
    /// `latest.cache.ttl.sec` (-1: forever): how long a
    /// `use.latest.version` choice is kept.
    pub latest_cache_ttl: Option<Duration>,
}

impl Default for SerializerConfig {
    fn default() -> Self {
        Self {
            auto_register_schemas: true,
            use_schema_id: None,
            id_compatibility_strict: true,
            use_latest_version: false,
            latest_compatibility_strict: true,
            normalize_schemas: false,
            key_subject_name_strategy: SubjectNameStrategy::TopicName,
            value_subject_name_strategy: SubjectNameStrategy::TopicName,
            reference_lookup_only: false,
            latest_cache_ttl: None,
        }
    }
}

impl SerializerConfig {
    /// Takes the serializer keys from `props`.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{SerializerConfig, SubjectNameStrategy};
    /// let mut props = Properties::new([
    ///     ("auto.register.schemas", "FALSE"),
    ///     ("use.latest.version", "true"),
    ///     ("value.subject.name.strategy", "io.confluent.kafka.serializers.subject.RecordNameStrategy"),
    /// ]);
    /// let config = SerializerConfig::from_properties(&mut props).unwrap();
    /// assert!(!config.auto_register_schemas && config.use_latest_version);
    /// assert_eq!(config.value_subject_name_strategy, SubjectNameStrategy::RecordName);
    /// props.finish().unwrap();
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let mut c = Self::default();
        let flag = |props: &mut Properties, key: &str, v: &mut bool| -> Result<(), ConfigError> {
            if let Some(b) = props.bool(key)? {
                *v = b;
            }
            Ok(())
        };
        flag(props, "auto.register.schemas", &mut c.auto_register_schemas)?;
        flag(
            props,
            "id.compatibility.strict",
            &mut c.id_compatibility_strict,
        )?;
        flag(props, "use.latest.version", &mut c.use_latest_version)?;
        flag(
            props,
            "latest.compatibility.strict",
            &mut c.latest_compatibility_strict,
        )?;
        flag(props, "normalize.schemas", &mut c.normalize_schemas)?;
        flag(props, "reference.lookup.only", &mut c.reference_lookup_only)?;
        if let Some(id) = props.int("use.schema.id", -1..=i32::MAX)? {
            c.use_schema_id = (id >= 0).then_some(id);
        }
        if let Some(s) = SubjectNameStrategy::take_from(props, "key.subject.name.strategy")? {
            c.key_subject_name_strategy = s;
        }
        if let Some(s) = SubjectNameStrategy::take_from(props, "value.subject.name.strategy")? {
            c.value_subject_name_strategy = s;
        }
        if let Some(ttl) = latest_cache_ttl(props)? {
            c.latest_cache_ttl = ttl;
        }
        Ok(c)
    }

    /// The strategy for `field`.
    pub fn subject_name_strategy(&self, field: Field) -> SubjectNameStrategy {
        match field {
            Field::Key => self.key_subject_name_strategy,
            Field::Value => self.value_subject_name_strategy,
        }
    }
}

/// A deserializer's settings, with Confluent's names and defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DeserializerConfig {
    /// `use.latest.version` (false): read with the subject's latest
    /// version as the reader schema.
    pub use_latest_version: bool,
    /// `key.subject.name.strategy` (`TopicNameStrategy`).
    pub key_subject_name_strategy: SubjectNameStrategy,
    /// `value.subject.name.strategy` (`TopicNameStrategy`).
    pub value_subject_name_strategy: SubjectNameStrategy,
    /// `latest.cache.ttl.sec` (-1: forever).
    pub latest_cache_ttl: Option<Duration>,
}

impl DeserializerConfig {
    /// Takes the deserializer keys from `props`.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::DeserializerConfig;
    /// let mut props = Properties::new([("use.latest.version", "true")]);
    /// assert!(DeserializerConfig::from_properties(&mut props).unwrap().use_latest_version);
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let mut c = Self::default();
        if let Some(b) = props.bool("use.latest.version")? {
            c.use_latest_version = b;
        }
        if let Some(s) = SubjectNameStrategy::take_from(props, "key.subject.name.strategy")? {
            c.key_subject_name_strategy = s;
        }
        if let Some(s) = SubjectNameStrategy::take_from(props, "value.subject.name.strategy")? {
            c.value_subject_name_strategy = s;
        }
        if let Some(ttl) = latest_cache_ttl(props)? {
            c.latest_cache_ttl = ttl;
        }
        Ok(c)
    }

    /// The strategy for `field`.
    pub fn subject_name_strategy(&self, field: Field) -> SubjectNameStrategy {
        match field {
            Field::Key => self.key_subject_name_strategy,
            Field::Value => self.value_subject_name_strategy,
        }
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

/// A cached choice and when it stops being trusted.
type CachedChoice = (SelectedSchema, Option<Instant>);

/// Picks and caches the schema id a serializer writes, as Confluent's
/// serializers do.
#[derive(Debug, Clone)]
pub struct SchemaIdSelector {
    client: SchemaRegistryClient,
    config: SerializerConfig,
    /// (subject, local schema's key) -> the choice.
    chosen: Arc<SharedBounded<(String, String), CachedChoice>>,
}

impl SchemaIdSelector {
    /// A selector over `client` with `config`.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{SchemaIdSelector, SchemaRegistryClient, SerializerConfig};
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props).unwrap();
    /// let config = SerializerConfig::from_properties(&mut props).unwrap();
    /// let selector = SchemaIdSelector::new(client, config);
    /// assert!(selector.config().auto_register_schemas);
    /// ```
    pub fn new(client: SchemaRegistryClient, config: SerializerConfig) -> Self {
        let capacity = client.config().max_schemas_per_subject;
        Self {
            client,
            config,
            chosen: Arc::new(SharedBounded::new(capacity)),
        }
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
        let subject = self
            .config
            .subject_name_strategy(ctx.field)
            .subject(ctx, record_name)?;
        let key = (subject, local_key(local));
        if let Some((chosen, until)) = self.chosen.get(&key)
            && until.is_none_or(|t| Instant::now() < t)
        {
            return Ok(chosen);
        }
        let (chosen, ttl) = self.choose(&key.0, local).await?;
        let until = ttl.map(|t| Instant::now() + t);
        self.chosen.insert(key, (chosen.clone(), until));
        Ok(chosen)
    }

    /// Confluent's steps; the choice and how long to keep it (`None`:
    /// forever).
    async fn choose(
        &self,
        subject: &str,
        local: &LocalSchema,
    ) -> Result<(SelectedSchema, Option<Duration>), SerdeError> {
        let c = &self.config;
        let normalize = c.normalize_schemas;
        if c.auto_register_schemas {
            let schema = self.register_tree(local, !c.reference_lookup_only).await?;
            let id = self.client.register(subject, &schema, normalize).await?;
            return Ok((SelectedSchema { id, schema: None }, None));
        }
        if let Some(id) = c.use_schema_id {
            let schema = self.register_tree(local, false).await?;
            let registered = self.client.schema_by_id(id).await?;
            if *registered == schema {
                return Ok((SelectedSchema { id, schema: None }, None));
            }
            if c.id_compatibility_strict {
                self.check_compatible(subject, None, Some(&registered), &schema, id)
                    .await?;
            }
            let resolved = self.client.resolved_by_id(id).await?;
            return Ok((
                SelectedSchema {
                    id,
                    schema: Some(resolved),
                },
                None,
            ));
        }
        if c.use_latest_version {
            let schema = self.register_tree(local, false).await?;
            let latest = self.client.latest_version(subject).await?;
            let ttl = c.latest_cache_ttl.or(self.client.config().latest_cache_ttl);
            if latest.schema == schema {
                let id = latest.id;
                return Ok((SelectedSchema { id, schema: None }, ttl));
            }
            if c.latest_compatibility_strict {
                self.check_compatible(subject, Some(latest.version), None, &schema, latest.id)
                    .await?;
            }
            let resolved = self.client.resolved_by_id(latest.id).await?;
            return Ok((
                SelectedSchema {
                    id: latest.id,
                    schema: Some(resolved),
                },
                ttl,
            ));
        }
        let schema = self.register_tree(local, false).await?;
        let found = self.client.lookup(subject, &schema, normalize).await?;
        Ok((
            SelectedSchema {
                id: found.id,
                schema: None,
            },
            None,
        ))
    }

    /// Whether `local` may be written where the registered schema `id` is
    /// expected: asked of the registry, under the subject's compatibility
    /// level, against `version` (or the version `registered` has under
    /// `subject`).
    async fn check_compatible(
        &self,
        subject: &str,
        version: Option<i32>,
        registered: Option<&Schema>,
        local: &Schema,
        id: i32,
    ) -> Result<(), SerdeError> {
        let version = match (version, registered) {
            (Some(v), _) => v,
            (None, Some(r)) => {
                match self
                    .client
                    .lookup(subject, r, self.config.normalize_schemas)
                    .await
                {
                    Ok(found) => found.version,
                    // The registry compares versions of one subject; Java's
                    // serializer compares the parsed schemas locally instead,
                    // which needs a format's parser.
                    Err(RegistryError::SchemaNotFound(_) | RegistryError::SubjectNotFound(_)) => {
                        return Err(SerdeError::Schema {
                            reason: format!(
                                "id.compatibility.strict asks the registry to compare the local schema with schema id {id}, which is not registered under subject {subject:?}; register it there, or set id.compatibility.strict=false"
                            ),
                        });
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            (None, None) => return Ok(()),
        };
        let check = self
            .client
            .test_compatibility(subject, Some(version), local)
            .await?;
        if check.is_compatible {
            Ok(())
        } else {
            Err(SerdeError::Incompatible {
                subject: subject.to_string(),
                id,
                messages: check.messages,
            })
        }
    }

    /// `local` as the registry knows it: each reference registered (or,
    /// without `register`, looked up) depth first under its name as the
    /// subject, and named with its version.
    fn register_tree<'a>(
        &'a self,
        local: &'a LocalSchema,
        register: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Schema, SerdeError>> + Send + 'a>> {
        Box::pin(async move {
            let mut references = Vec::with_capacity(local.references.len());
            for LocalReference { name, schema } in &local.references {
                let dep = self.register_tree(schema, register).await?;
                let normalize = self.config.normalize_schemas;
                if register {
                    self.client.register(name, &dep, normalize).await?;
                }
                let version = match self.client.lookup(name, &dep, normalize).await {
                    Ok(found) => found.version,
                    Err(RegistryError::SchemaNotFound(_) | RegistryError::SubjectNotFound(_))
                        if !register =>
                    {
                        return Err(SerdeError::Schema {
                            reason: format!(
                                "the reference {name:?} is not registered under subject {name:?}; register it first, or enable auto.register.schemas without reference.lookup.only"
                            ),
                        });
                    }
                    Err(e) => return Err(e.into()),
                };
                references.push(SchemaReference {
                    name: name.clone(),
                    subject: name.clone(),
                    version,
                });
            }
            Ok(Schema {
                schema_type: local.schema_type,
                schema: local.schema.clone(),
                references,
            })
        })
    }
}

/// A key that identifies a local schema tree (type, text, references,
/// length-prefixed so no two trees share one).
fn local_key(local: &LocalSchema) -> String {
    let mut out = String::new();
    fn walk(s: &LocalSchema, out: &mut String) {
        out.push_str(s.schema_type.as_str());
        out.push_str(&format!(":{}:{}", s.schema.len(), s.schema));
        out.push_str(&format!("[{}", s.references.len()));
        for r in &s.references {
            out.push_str(&format!("{}:{}=", r.name.len(), r.name));
            walk(&r.schema, out);
        }
        out.push(']');
    }
    walk(local, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaType;

    fn config(pairs: &[(&str, &str)]) -> Result<SerializerConfig, ConfigError> {
        let mut props = Properties::new(pairs.iter().copied());
        let c = SerializerConfig::from_properties(&mut props)?;
        props.finish()?;
        Ok(c)
    }

    #[test]
    fn serializer_defaults_are_confluents() {
        let c = config(&[]).unwrap();
        assert_eq!(c, SerializerConfig::default());
        assert!(c.auto_register_schemas && c.id_compatibility_strict);
        assert!(c.latest_compatibility_strict);
        assert!(!c.use_latest_version && !c.normalize_schemas && !c.reference_lookup_only);
        assert_eq!(c.use_schema_id, None);
        assert_eq!(c.latest_cache_ttl, None);
    }

    #[test]
    fn serializer_keys_parse_as_javas_config_def() {
        let c = config(&[
            ("auto.register.schemas", "False"),
            ("use.schema.id", "42"),
            ("id.compatibility.strict", "false"),
            ("latest.compatibility.strict", "FALSE"),
            ("normalize.schemas", "true"),
            ("reference.lookup.only", "true"),
            ("key.subject.name.strategy", "TopicRecordNameStrategy"),
            (
                "value.subject.name.strategy",
                "io.confluent.kafka.serializers.subject.RecordNameStrategy",
            ),
            ("latest.cache.ttl.sec", "5"),
        ])
        .unwrap();
        assert!(!c.auto_register_schemas && !c.id_compatibility_strict);
        assert!(!c.latest_compatibility_strict && c.normalize_schemas && c.reference_lookup_only);
        assert_eq!(c.use_schema_id, Some(42));
        assert_eq!(
            c.subject_name_strategy(Field::Key),
            SubjectNameStrategy::TopicRecordName
        );
        assert_eq!(
            c.subject_name_strategy(Field::Value),
            SubjectNameStrategy::RecordName
        );
        assert_eq!(c.latest_cache_ttl, Some(Duration::from_secs(5)));
        assert_eq!(
            config(&[("use.schema.id", "-1")]).unwrap().use_schema_id,
            None
        );
        for (k, v) in [
            ("auto.register.schemas", "yes"),
            ("use.schema.id", "-2"),
            ("value.subject.name.strategy", "com.example.MyStrategy"),
        ] {
            assert_eq!(config(&[(k, v)]).unwrap_err().key(), k);
        }
    }

    #[test]
    fn deserializer_keys() {
        let mut props = Properties::new([
            ("use.latest.version", "TRUE"),
            ("key.subject.name.strategy", "RecordNameStrategy"),
        ]);
        let c = DeserializerConfig::from_properties(&mut props).unwrap();
        props.finish().unwrap();
        assert!(c.use_latest_version);
        assert_eq!(
            c.subject_name_strategy(Field::Key),
            SubjectNameStrategy::RecordName
        );
        assert_eq!(
            c.subject_name_strategy(Field::Value),
            SubjectNameStrategy::TopicName
        );
    }

    #[test]
    fn subjects_by_strategy_and_field() {
        let key = SerializationContext::key("t");
        let value = SerializationContext::value("t");
        use SubjectNameStrategy::*;
        assert_eq!(TopicName.subject(&key, Some("a.B")).unwrap(), "t-key");
        assert_eq!(TopicName.subject(&value, None).unwrap(), "t-value");
        assert_eq!(RecordName.subject(&key, Some("a.B")).unwrap(), "a.B");
        assert_eq!(TopicRecordName.subject(&key, Some("a.B")).unwrap(), "t-a.B");
        for s in [RecordName, TopicRecordName] {
            for name in [None, Some("")] {
                assert!(matches!(
                    s.subject(&value, name),
                    Err(SerdeError::Schema { .. })
                ));
            }
        }
    }

    #[test]
    fn local_keys_tell_trees_apart() {
        let leaf = |s: &str| LocalSchema {
            schema_type: SchemaType::Avro,
            schema: s.into(),
            references: vec![],
        };
        let with = |name: &str, dep: LocalSchema| LocalSchema {
            references: vec![LocalReference {
                name: name.into(),
                schema: dep,
            }],
            ..leaf("root")
        };
        let keys = [
            local_key(&leaf("root")),
            local_key(&with("a", leaf("x"))),
            local_key(&with("a", leaf("y"))),
            local_key(&with("b", leaf("x"))),
            local_key(&LocalSchema {
                schema_type: SchemaType::Json,
                ..leaf("root")
            }),
        ];
        let unique: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len());
    }
}
