//! The registry client and the schema-id selector against a real registry
//! (Apicurio Registry serving Confluent's API, started by
//! kafka-testcontainers): every REST call, each typed error, references,
//! the caches while the registry is down, URL failover, and each of
//! Confluent's selection steps and subject name strategies.

use kafka_client::Properties;
use kafka_client::http::HttpError;
use kafka_schema_registry::{
    CompatibilityLevel, LocalReference, LocalSchema, RegistryError, Schema, SchemaIdSelector,
    SchemaReference, SchemaRegistryClient, SchemaType, SerdeError, SerializationContext,
    SerializerConfig, wire::SchemaId,
};
use kafka_testcontainers::SchemaRegistry;
use std::sync::atomic::{AtomicU32, Ordering};

/// A name no other test of this binary uses.
fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}{}", N.fetch_add(1, Ordering::SeqCst))
}

fn props(url: &str, extra: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new(extra.iter().copied());
    p.insert("schema.registry.url", url);
    p
}

fn client(url: &str, extra: &[(&str, &str)]) -> SchemaRegistryClient {
    let mut p = props(url, extra);
    let c = SchemaRegistryClient::from_properties(&mut p).expect("client settings");
    p.finish().expect("every key read");
    c
}

fn selector(url: &str, extra: &[(&str, &str)]) -> SchemaIdSelector {
    let mut p = props(url, extra);
    let client = SchemaRegistryClient::from_properties(&mut p).expect("client settings");
    let config = SerializerConfig::from_properties(&mut p).expect("serializer settings");
    p.finish().expect("every key read");
    SchemaIdSelector::new(client, config)
}

async fn registry() -> &'static SchemaRegistry {
    SchemaRegistry::shared()
        .await
        .expect("start the schema registry (testcontainers/fetch-apicurio.sh)")
}

/// An Avro record `<ns>.Order` with an int `id` (v1), plus a defaulted
/// string `note` (v2, backward compatible), or with a string `id`
/// (incompatible with v1).
fn order(ns: &str, version: u8) -> String {
    let fields = match version {
        1 => r#"[{"name":"id","type":"int"}]"#,
        2 => r#"[{"name":"id","type":"int"},{"name":"note","type":"string","default":""}]"#,
        _ => r#"[{"name":"id","type":"string"}]"#,
    };
    format!(r#"{{"type":"record","name":"Order","namespace":"{ns}","fields":{fields}}}"#)
}

fn avro(text: &str) -> Schema {
    Schema {
        schema_type: SchemaType::Avro,
        schema: text.to_string(),
        references: vec![],
    }
}

fn local(text: &str) -> LocalSchema {
    LocalSchema {
        schema_type: SchemaType::Avro,
        schema: text.to_string(),
        references: vec![],
    }
}

/// Invariant: each REST call answers what was registered: register and
/// lookup agree on the id, the id gives the schema back, versions and
/// subjects list it, deletes remove it, config and mode read and write.
#[tokio::test(flavor = "multi_thread")]
async fn rest_calls_answer_what_was_registered() {
    let url = registry().await.url();
    let c = client(&url, &[]);
    let subject = unique("rest-") + "-value";
    let ns = unique("rest");
    let v1 = avro(&order(&ns, 1));
    let v2 = avro(&order(&ns, 2));
    let id1 = c.register(&subject, &v1, false).await.unwrap();
    let id2 = c.register(&subject, &v2, false).await.unwrap();
    assert_ne!(id1, id2);
    assert_eq!(
        c.register(&subject, &v1, false).await.unwrap(),
        id1,
        "re-register"
    );

    let found = c.lookup(&subject, &v2, false).await.unwrap();
    assert_eq!(
        (found.id, found.version, found.subject.as_str()),
        (id2, 2, subject.as_str())
    );
    assert_eq!(*c.schema_by_id(id1).await.unwrap(), v1);
    assert_eq!(*c.schema_by_id_in_subject(id2, &subject).await.unwrap(), v2);
    let latest = c.latest_version(&subject).await.unwrap();
    assert_eq!((latest.id, latest.version), (id2, 2));
    assert_eq!(c.version(&subject, 1).await.unwrap().id, id1);
    assert_eq!(c.versions(&subject).await.unwrap(), [1, 2]);
    assert!(c.subjects().await.unwrap().contains(&subject));
    assert_eq!(
        c.referenced_by(&subject, 1).await.unwrap(),
        Vec::<i32>::new()
    );

    c.set_compatibility_level(Some(&subject), CompatibilityLevel::Full)
        .await
        .unwrap();
    assert_eq!(
        c.compatibility_level(Some(&subject)).await.unwrap(),
        CompatibilityLevel::Full
    );
    let check = c.test_compatibility(&subject, Some(2), &v1).await.unwrap();
    assert!(check.is_compatible, "{check:?}");
    assert!(!c.mode(None).await.unwrap().is_empty());

    assert_eq!(c.delete_version(&subject, 1, false).await.unwrap(), 1);
    assert_eq!(c.delete_version(&subject, 1, true).await.unwrap(), 1);
    assert_eq!(c.versions(&subject).await.unwrap(), [2]);
    assert_eq!(c.delete_subject(&subject, false).await.unwrap(), [2]);
    assert_eq!(c.delete_subject(&subject, true).await.unwrap(), [2]);
    assert!(!c.subjects().await.unwrap().contains(&subject));
}

/// Invariant: the registry's refusals arrive typed, with Confluent's code,
/// and none is retriable.
#[tokio::test(flavor = "multi_thread")]
async fn refusals_are_typed_errors() {
    let url = registry().await.url();
    let c = client(&url, &[("max.retries", "0")]);
    let subject = unique("errors-") + "-value";
    let ns = unique("errors");

    let e = c.latest_version(&subject).await.unwrap_err();
    assert_eq!(e, RegistryError::SubjectNotFound(subject.clone()), "{e}");
    let e = c.schema_by_id(i32::MAX - 7).await.unwrap_err();
    assert!(matches!(e, RegistryError::SchemaNotFound(_)), "{e}");
    assert_eq!(e.error_code(), Some(40403));
    let e = c
        .register(&subject, &avro(r#"{"type":"record","name":"x""#), false)
        .await
        .unwrap_err();
    assert!(matches!(e, RegistryError::InvalidSchema(_)), "{e}");

    c.register(&subject, &avro(&order(&ns, 1)), false)
        .await
        .unwrap();
    let e = c.version(&subject, 9).await.unwrap_err();
    assert!(
        matches!(e, RegistryError::VersionNotFound { version: 9, .. }),
        "{e}"
    );
    let e = c
        .lookup(&subject, &avro(&order(&ns, 2)), false)
        .await
        .unwrap_err();
    assert!(matches!(e, RegistryError::SchemaNotFound(_)), "{e}");

    c.set_compatibility_level(Some(&subject), CompatibilityLevel::Backward)
        .await
        .unwrap();
    let e = c
        .register(&subject, &avro(&order(&ns, 3)), false)
        .await
        .unwrap_err();
    assert!(matches!(e, RegistryError::Incompatible { .. }), "{e}");
    assert!(!e.is_retriable());
    let check = c
        .test_compatibility(&subject, None, &avro(&order(&ns, 3)))
        .await
        .unwrap();
    assert!(!check.is_compatible, "{check:?}");
}

/// Invariant: a schema named by GUID (the header form's magic byte 1) is
/// asked for at `GET /schemas/guids/{guid}`, and a GUID the registry does
/// not serve is the registry's typed refusal (not found, or a path it does
/// not know), never a decode failure and never retried. Apicurio keeps no
/// GUIDs, so only the refusal can be shown against it.
#[tokio::test(flavor = "multi_thread")]
async fn a_guid_is_asked_for_at_its_own_path() {
    let url = registry().await.url();
    let c = client(&url, &[("max.retries", "2")]);
    let e = c.schema(SchemaId::Guid([0x5a; 16])).await.unwrap_err();
    eprintln!("GUID lookup answered: {e:?}");
    assert!(
        matches!(
            e,
            RegistryError::SchemaNotFound(_) | RegistryError::Refused { status: 404, .. }
        ),
        "{e:?}"
    );
    assert!(!e.is_retriable(), "{e:?}");
    // The id form of the same call still answers.
    let subject = unique("guid-") + "-value";
    let id = c
        .register(&subject, &avro(&order(&unique("guid"), 1)), false)
        .await
        .unwrap();
    assert_eq!(
        *c.schema(SchemaId::Id(id)).await.unwrap(),
        *c.schema_by_id(id).await.unwrap()
    );
}

/// Leaf <- Mid <- Root, each an Avro record naming the one before it.
fn reference_tree(ns: &str) -> (String, String, String) {
    let leaf = format!(
        r#"{{"type":"record","name":"Leaf","namespace":"{ns}","fields":[{{"name":"x","type":"int"}}]}}"#
    );
    let mid = format!(
        r#"{{"type":"record","name":"Mid","namespace":"{ns}","fields":[{{"name":"leaf","type":"{ns}.Leaf"}}]}}"#
    );
    let root = format!(
        r#"{{"type":"record","name":"Root","namespace":"{ns}","fields":[{{"name":"mid","type":"{ns}.Mid"}}]}}"#
    );
    (leaf, mid, root)
}

/// Invariant: a schema fetched by id comes with every schema it refers to,
/// transitively, dependencies first; the selector registers a reference
/// tree depth first under the references' names.
#[tokio::test(flavor = "multi_thread")]
async fn references_resolve_transitively() {
    let url = registry().await.url();
    let ns = unique("refs");
    let (leaf, mid, root) = reference_tree(&ns);
    let tree = LocalSchema {
        references: vec![LocalReference {
            name: format!("{ns}.Mid"),
            schema: LocalSchema {
                references: vec![LocalReference {
                    name: format!("{ns}.Leaf"),
                    schema: local(&leaf),
                }],
                ..local(&mid)
            },
        }],
        ..local(&root)
    };
    let s = selector(&url, &[]);
    let topic = unique("refs-topic");
    let chosen = s
        .select(&SerializationContext::value(&topic), &tree, None)
        .await
        .unwrap();
    assert!(chosen.schema.is_none());

    let c = client(&url, &[]);
    let resolved = c.resolved_by_id(chosen.id).await.unwrap();
    assert_eq!(resolved.schema.schema, root);
    assert_eq!(
        resolved.schema.references,
        [SchemaReference {
            name: format!("{ns}.Mid"),
            subject: format!("{ns}.Mid"),
            version: 1
        }]
    );
    let names: Vec<_> = resolved.references.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, [format!("{ns}.Leaf"), format!("{ns}.Mid")]);
    assert_eq!(resolved.references[0].1.schema, leaf);
    assert_eq!(resolved.references[1].1.schema, mid);
    let mid_id = c
        .lookup(&format!("{ns}.Mid"), &resolved.references[1].1, false)
        .await
        .unwrap()
        .id;
    let leaf_version = c.latest_version(&format!("{ns}.Leaf")).await.unwrap();
    assert_eq!(
        c.referenced_by(&format!("{ns}.Leaf"), leaf_version.version)
            .await
            .unwrap(),
        [mid_id]
    );
}

/// Invariant: with a registry that is down, what was asked before is
/// still answered from the caches (ids, schemas, latest versions, the
/// selector's choice), and what was not fails with a retriable connection
/// error.
#[tokio::test(flavor = "multi_thread")]
async fn caches_answer_while_the_registry_is_down() {
    let registry = SchemaRegistry::start()
        .await
        .expect("start a private registry");
    let url = registry.url();
    let extra = [("max.retries", "1"), ("retries.wait.ms", "10")];
    let c = client(&url, &extra);
    let s = selector(&url, &extra);
    let ns = unique("down");
    let v1 = avro(&order(&ns, 1));
    let topic = unique("down-topic");
    let ctx = SerializationContext::value(&topic);
    let chosen = s.select(&ctx, &local(&v1.schema), None).await.unwrap();
    let subject = format!("{topic}-value");
    let id = c.register(&subject, &v1, false).await.unwrap();
    assert_eq!(id, chosen.id);
    c.resolved_by_id(id).await.unwrap();
    let latest = c.latest_version(&subject).await.unwrap();
    let found = c.lookup(&subject, &v1, false).await.unwrap();

    registry.kill();

    assert_eq!(
        s.select(&ctx, &local(&v1.schema), None).await.unwrap().id,
        id
    );
    assert_eq!(c.register(&subject, &v1, false).await.unwrap(), id);
    assert_eq!(*c.schema_by_id(id).await.unwrap(), v1);
    assert_eq!(c.resolved_by_id(id).await.unwrap().schema, v1);
    assert_eq!(c.latest_version(&subject).await.unwrap(), latest);
    assert_eq!(c.lookup(&subject, &v1, false).await.unwrap(), found);
    assert_eq!(c.version(&subject, latest.version).await.unwrap(), latest);

    let e = c.versions(&subject).await.unwrap_err();
    assert!(
        matches!(
            e,
            RegistryError::Connection {
                error: HttpError::Connect { .. },
                attempts: 2
            }
        ),
        "{e}"
    );
    assert!(e.is_retriable());
    let e = s
        .select(&ctx, &local(&order(&ns, 2)), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, SerdeError::Registry(ref r) if r.is_retriable()),
        "{e}"
    );
}

/// Invariant: a URL that cannot be reached is skipped for the next one of
/// `schema.registry.url`, without spending a retry.
#[tokio::test(flavor = "multi_thread")]
async fn a_dead_first_url_fails_over_to_the_next() {
    let live = registry().await.url();
    let dead_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let urls = format!("http://127.0.0.1:{dead_port}/apis/ccompat/v7,{live}");
    let c = client(&urls, &[("max.retries", "0")]);
    let subject = unique("failover-") + "-value";
    let v1 = avro(&order(&unique("failover"), 1));
    let id = c.register(&subject, &v1, false).await.unwrap();
    assert_eq!(c.lookup(&subject, &v1, false).await.unwrap().id, id);
    let only_dead = client(
        &format!("http://127.0.0.1:{dead_port}/apis/ccompat/v7"),
        &[("max.retries", "0")],
    );
    let e = only_dead.register(&subject, &v1, false).await.unwrap_err();
    assert!(
        matches!(e, RegistryError::Connection { attempts: 1, .. }),
        "{e}"
    );
}

/// Invariant: with `auto.register.schemas` (the default) the selector
/// registers the local schema under the strategy's subject; the record
/// strategies name the subject after the record.
#[tokio::test(flavor = "multi_thread")]
async fn auto_register_under_each_strategy() {
    let url = registry().await.url();
    let c = client(&url, &[]);
    let ns = unique("strategies");
    let v1 = order(&ns, 1);
    let topic = unique("strategies-topic");
    let record = format!("{ns}.Order");
    for (strategy, field, subject) in [
        ("TopicNameStrategy", "value", format!("{topic}-value")),
        ("TopicNameStrategy", "key", format!("{topic}-key")),
        (
            "io.confluent.kafka.serializers.subject.RecordNameStrategy",
            "value",
            record.clone(),
        ),
        (
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
            "key",
            format!("{topic}-{record}"),
        ),
    ] {
        let key = format!("{field}.subject.name.strategy");
        let s = selector(&url, &[(key.as_str(), strategy)]);
        let ctx = if field == "key" {
            SerializationContext::key(&topic)
        } else {
            SerializationContext::value(&topic)
        };
        let chosen = s.select(&ctx, &local(&v1), Some(&record)).await.unwrap();
        assert!(chosen.schema.is_none());
        let found = c.lookup(&subject, &avro(&v1), false).await.unwrap();
        assert_eq!(found.id, chosen.id, "{strategy} {field} -> {subject}");
    }
}

/// Invariant: without auto-registration the selector finds a registered
/// schema's id and refuses one that is not registered (nothing is
/// registered on its behalf).
#[tokio::test(flavor = "multi_thread")]
async fn lookup_finds_registered_schemas_only() {
    let url = registry().await.url();
    let c = client(&url, &[]);
    let s = selector(&url, &[("auto.register.schemas", "false")]);
    let topic = unique("lookup-topic");
    let ns = unique("lookup");
    let id = c
        .register(&format!("{topic}-value"), &avro(&order(&ns, 1)), false)
        .await
        .unwrap();
    let ctx = SerializationContext::value(&topic);
    let chosen = s.select(&ctx, &local(&order(&ns, 1)), None).await.unwrap();
    assert_eq!((chosen.id, chosen.schema.is_none()), (id, true));
    let e = s
        .select(&ctx, &local(&order(&ns, 2)), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, SerdeError::Registry(RegistryError::SchemaNotFound(_))),
        "{e}"
    );
    assert_eq!(c.versions(&format!("{topic}-value")).await.unwrap(), [1]);
}

/// Invariant: `reference.lookup.only` looks references up instead of
/// registering them: an unregistered reference is a typed schema error,
/// a registered one is used.
#[tokio::test(flavor = "multi_thread")]
async fn reference_lookup_only_registers_no_reference() {
    let url = registry().await.url();
    let ns = unique("lookuponly");
    let (leaf, mid, _) = reference_tree(&ns);
    let tree = LocalSchema {
        references: vec![LocalReference {
            name: format!("{ns}.Leaf"),
            schema: local(&leaf),
        }],
        ..local(&mid)
    };
    let s = selector(&url, &[("reference.lookup.only", "true")]);
    let topic = unique("lookuponly-topic");
    let ctx = SerializationContext::value(&topic);
    let e = s.select(&ctx, &tree, None).await.unwrap_err();
    assert!(matches!(e, SerdeError::Schema { .. }), "{e}");
    let c = client(&url, &[]);
    c.register(&format!("{ns}.Leaf"), &avro(&leaf), false)
        .await
        .unwrap();
    let chosen = s.select(&ctx, &tree, None).await.unwrap();
    let root = c.latest_version(&format!("{topic}-value")).await.unwrap();
    assert_eq!(root.id, chosen.id);
    assert_eq!(root.schema.references[0].subject, format!("{ns}.Leaf"));
}

/// Invariant: `use.schema.id` writes with that id and hands back the
/// registered schema when it differs from the local one; with
/// `id.compatibility.strict` an incompatible local schema is refused.
#[tokio::test(flavor = "multi_thread")]
async fn use_schema_id_writes_with_that_id() {
    let url = registry().await.url();
    let c = client(&url, &[]);
    let topic = unique("useid-topic");
    let subject = format!("{topic}-value");
    let ns = unique("useid");
    c.set_compatibility_level(Some(&subject), CompatibilityLevel::Backward)
        .await
        .unwrap();
    let id1 = c
        .register(&subject, &avro(&order(&ns, 1)), false)
        .await
        .unwrap();
    let id_str = id1.to_string();
    let ctx = SerializationContext::value(&topic);
    let s = selector(
        &url,
        &[
            ("auto.register.schemas", "false"),
            ("use.schema.id", &id_str),
        ],
    );
    let same = s.select(&ctx, &local(&order(&ns, 1)), None).await.unwrap();
    assert_eq!((same.id, same.schema.is_none()), (id1, true));
    let newer = s.select(&ctx, &local(&order(&ns, 2)), None).await.unwrap();
    assert_eq!(newer.id, id1);
    assert_eq!(newer.schema.unwrap().schema.schema, order(&ns, 1));
    let e = s
        .select(&ctx, &local(&order(&ns, 3)), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, SerdeError::Incompatible { id, .. } if id == id1),
        "{e}"
    );
    let lax = selector(
        &url,
        &[
            ("auto.register.schemas", "false"),
            ("use.schema.id", &id_str),
            ("id.compatibility.strict", "false"),
        ],
    );
    let chosen = lax
        .select(&ctx, &local(&order(&ns, 3)), None)
        .await
        .unwrap();
    assert_eq!(chosen.id, id1);
}

/// Invariant: `use.latest.version` writes with the subject's latest
/// version; with `latest.compatibility.strict` a local schema the
/// registry finds incompatible is refused, without it it is not checked.
#[tokio::test(flavor = "multi_thread")]
async fn use_latest_version_writes_with_the_latest() {
    let url = registry().await.url();
    let c = client(&url, &[]);
    let topic = unique("latest-topic");
    let subject = format!("{topic}-value");
    let ns = unique("latest");
    c.set_compatibility_level(Some(&subject), CompatibilityLevel::Backward)
        .await
        .unwrap();
    c.register(&subject, &avro(&order(&ns, 1)), false)
        .await
        .unwrap();
    let id2 = c
        .register(&subject, &avro(&order(&ns, 2)), false)
        .await
        .unwrap();
    let ctx = SerializationContext::value(&topic);
    let s = selector(
        &url,
        &[
            ("auto.register.schemas", "false"),
            ("use.latest.version", "true"),
        ],
    );
    let same = s.select(&ctx, &local(&order(&ns, 2)), None).await.unwrap();
    assert_eq!((same.id, same.schema.is_none()), (id2, true));
    let older = s.select(&ctx, &local(&order(&ns, 1)), None).await.unwrap();
    assert_eq!(older.id, id2);
    assert_eq!(older.schema.unwrap().schema.schema, order(&ns, 2));
    let e = s
        .select(&ctx, &local(&order(&ns, 3)), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, SerdeError::Incompatible { id, .. } if id == id2),
        "{e}"
    );
    let lax = selector(
        &url,
        &[
            ("auto.register.schemas", "false"),
            ("use.latest.version", "true"),
            ("latest.compatibility.strict", "false"),
        ],
    );
    assert_eq!(
        lax.select(&ctx, &local(&order(&ns, 3)), None)
            .await
            .unwrap()
            .id,
        id2
    );
}
