//! The README's "Connecting to managed Kafka" recipes, read from the README
//! itself (its ```` ```properties recipe-NAME ```` blocks) so that the two
//! cannot drift: each parses through [`ClientConfig`] to the expected
//! security protocol and SASL mechanism. Placeholder files (`/path/to/`)
//! are the key store fixtures, and the key store password placeholder
//! their password.

use crate::{ClientConfig, SaslMechanism, SecurityProtocol};

/// The README, as the repository holds it.
const README: &str = include_str!("../../../README.md");

/// The recipe blocks of the README: (name, key-value pairs).
pub(crate) fn recipes(readme: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim().strip_prefix("```properties") else {
            continue;
        };
        let Some(name) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("recipe-"))
        else {
            continue;
        };
        let mut pairs = Vec::new();
        for l in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                continue;
            }
            let (k, v) = l.split_once('=').expect("KEY=VALUE lines");
            let v = v
                .replace(
                    "/path/to/",
                    concat!(env!("CARGO_MANIFEST_DIR"), "/src/connection/fixtures/"),
                )
                .replace("<KEYSTORE_PASSWORD>", "store-secret");
            pairs.push((k.trim().to_string(), v));
        }
        out.push((name.to_string(), pairs));
    }
    out
}

/// Invariant: every recipe parses, to the protocol and mechanism it names,
/// and the README holds exactly the recipes listed here.
#[cfg(feature = "tls")]
#[test]
fn readme_recipes_parse_as_client_config() {
    use SaslMechanism::*;
    use SecurityProtocol::*;
    let expected: &[(&str, SecurityProtocol, Option<SaslMechanism>)] = &[
        ("confluent-cloud-api-key", SaslSsl, Some(Plain)),
        ("confluent-cloud-oauth", SaslSsl, Some(OAuthBearer)),
        ("msk-iam", SaslSsl, Some(OAuthBearer)),
        ("msk-iam-legacy", SaslSsl, Some(AwsMskIam)),
        ("msk-scram", SaslSsl, Some(ScramSha512)),
        ("msk-mtls", Ssl, None),
        ("event-hubs-connection-string", SaslSsl, Some(Plain)),
        ("event-hubs-entra-id", SaslSsl, Some(OAuthBearer)),
        ("aiven-mtls", Ssl, None),
        ("aiven-scram", SaslSsl, Some(ScramSha256)),
        ("redpanda-cloud-scram", SaslSsl, Some(ScramSha256)),
        ("redpanda-cloud-oidc", SaslSsl, Some(OAuthBearer)),
    ];
    let found = recipes(README);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    let wanted: Vec<&str> = expected.iter().map(|(n, ..)| *n).collect();
    assert_eq!(names, wanted, "the README's recipes");
    for ((name, pairs), (_, protocol, mechanism)) in found.iter().zip(expected) {
        let cfg =
            ClientConfig::from_properties(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .unwrap_or_else(|e| panic!("recipe {name}: {e}"));
        assert_eq!(cfg.security_protocol, *protocol, "{name}");
        let conn = cfg.connection_config();
        assert_eq!(
            conn.sasl.as_ref().map(|s| s.mechanism),
            *mechanism,
            "{name}"
        );
        assert!(conn.tls.is_some(), "{name}: TLS");
        if *mechanism == Some(OAuthBearer) {
            assert!(
                conn.sasl.as_ref().unwrap().token_provider.is_some(),
                "{name}"
            );
        }
        if name.starts_with("msk-iam") {
            let msk = cfg
                .sasl_oauthbearer
                .as_ref()
                .and_then(|o| o.msk_iam_settings());
            assert_eq!(
                msk.unwrap().signer(&cfg.bootstrap_servers).unwrap().host(),
                "kafka.eu-west-1.amazonaws.com",
                "{name}: region from the broker host"
            );
        }
        if name.ends_with("-mtls") {
            let tls = cfg.tls.as_ref().unwrap();
            assert!(
                tls.client_cert_pem.is_some() && tls.client_key_pem.is_some(),
                "{name}: the key store's identity"
            );
        }
    }
}

/// Invariant: JAAS values in single quotes (Confluent's form) and quoted
/// values holding `;` and `=` (an Event Hubs connection string) are read
/// without their quotes.
#[test]
fn readme_jaas_credentials_are_unquoted() {
    let found = recipes(README);
    let get = |name: &str| {
        let pairs = &found.iter().find(|(n, _)| n == name).unwrap().1;
        let mut pairs = pairs.clone();
        // Parsed without TLS: only the credentials matter here.
        pairs.retain(|(k, _)| k.starts_with("sasl.") || k == "bootstrap.servers");
        pairs.push(("security.protocol".into(), "SASL_PLAINTEXT".into()));
        ClientConfig::from_properties(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap()
    };
    let confluent = get("confluent-cloud-api-key");
    assert_eq!(confluent.sasl_username.as_deref(), Some("<API_KEY>"));
    assert_eq!(
        confluent.sasl_password.as_ref().map(|p| p.expose()),
        Some("<API_SECRET>")
    );
    let hubs = get("event-hubs-connection-string");
    assert_eq!(hubs.sasl_username.as_deref(), Some("$ConnectionString"));
    assert_eq!(
        hubs.sasl_password.as_ref().map(|p| p.expose()),
        Some(
            "Endpoint=sb://<NAMESPACE>.servicebus.windows.net/;SharedAccessKeyName=<KEY_NAME>;SharedAccessKey=<KEY>"
        )
    );
}
