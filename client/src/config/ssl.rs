//! The `ssl.*` settings under Java's names and rules
//! (`SslConfigs`, `DefaultSslEngineFactory`): trust store and key store
//! types (PEM, PKCS12), locations, passwords, inline PEM, the key's
//! password, host name verification; plus one kafka-eos setting,
//! `ssl.truststore.fallback`.

use super::properties::Properties;
use super::{ConfigError, Secret};
use crate::connection::{KeyStoreError, StoreType, TlsConfig, TrustStore};

/// The `ssl.*` properties as given, resolved into a [`TlsConfig`] after
/// every property is read (order does not matter, as in Java).
#[derive(Debug, Default)]
pub(super) struct SslProps {
    /// `ssl.truststore.type`: `None` when unset (the contents decide).
    truststore_type: Option<StoreType>,
    /// `ssl.truststore.location`.
    truststore_location: Option<String>,
    /// `ssl.truststore.certificates` (inline PEM).
    truststore_certificates: Option<String>,
    /// `ssl.truststore.password`.
    truststore_password: Option<Secret>,
    /// `ssl.truststore.fallback=mozilla` (kafka-eos).
    mozilla_fallback: Option<bool>,
    /// `ssl.keystore.type`: `None` when unset (the contents decide).
    keystore_type: Option<StoreType>,
    /// `ssl.keystore.location`.
    keystore_location: Option<String>,
    /// `ssl.keystore.password`.
    keystore_password: Option<Secret>,
    /// `ssl.keystore.key` (inline PEM).
    keystore_key: Option<String>,
    /// `ssl.keystore.certificate.chain` (inline PEM).
    keystore_chain: Option<String>,
    /// `ssl.key.password`.
    key_password: Option<Secret>,
    /// `ssl.endpoint.identification.algorithm`: `https` (true) or empty.
    verify_hostname: Option<bool>,
}

/// A client certificate chain and its private key, PEM.
type Identity = (Vec<u8>, Vec<u8>);

/// `ssl.truststore.type` / `ssl.keystore.type` values.
const STORE_TYPES: &[(&str, Option<StoreType>)] = &[
    ("PEM", Some(StoreType::Pem)),
    ("PKCS12", Some(StoreType::Pkcs12)),
    ("JKS", None),
];

impl SslProps {
    /// The `ssl.*` settings of `props` resolved into TLS settings: `None`
    /// when `props` has no `ssl.*` key at all (the caller keeps its own,
    /// by default Java's: the system trust store).
    pub(super) fn take_from(props: &mut Properties) -> Result<Option<TlsConfig>, ConfigError> {
        let given = props.keys().any(|k| k.starts_with("ssl."));
        let verify_hostname = props
            .one_of_ignoring_case(
                "ssl.endpoint.identification.algorithm",
                &[("https", true), ("", false)],
            )
            .map_err(|e| match e {
                ConfigError::InvalidValue { key, value, .. } => ConfigError::InvalidValue {
                    key,
                    value,
                    reason: "expected https or empty".into(),
                },
                e => e,
            })?;
        let ssl = SslProps {
            truststore_type: store_type(props, "ssl.truststore.type")?,
            truststore_location: props.string("ssl.truststore.location"),
            truststore_certificates: props.string("ssl.truststore.certificates"),
            truststore_password: props.password("ssl.truststore.password"),
            mozilla_fallback: props.one_of_ignoring_case(
                "ssl.truststore.fallback",
                &[("none", false), ("mozilla", true)],
            )?,
            keystore_type: store_type(props, "ssl.keystore.type")?,
            keystore_location: props.string("ssl.keystore.location"),
            keystore_password: props.password("ssl.keystore.password"),
            keystore_key: props.string("ssl.keystore.key"),
            keystore_chain: props.string("ssl.keystore.certificate.chain"),
            key_password: props.password("ssl.key.password"),
            verify_hostname,
        };
        if !given {
            return Ok(None);
        }
        ssl.build().map(Some)
    }

    /// Reads the stores and checks their contents.
    fn build(self) -> Result<TlsConfig, ConfigError> {
        let trust = self.trust()?;
        let mut tls =
            TlsConfig::with_trust(trust).verify_hostname(self.verify_hostname.unwrap_or(true));
        if let Some((chain, key)) = self.identity()? {
            tls = tls.client_auth(chain, key);
        }
        Ok(tls)
    }

    /// `ssl.truststore.*`: the given certificates, else the system store.
    fn trust(&self) -> Result<TrustStore, ConfigError> {
        let password = self.truststore_password.as_ref().map(Secret::expose);
        let (key, bytes, ty) = match (&self.truststore_location, &self.truststore_certificates) {
            (Some(_), Some(_)) => {
                return Err(incompatible(
                    "ssl.truststore.certificates",
                    "set either ssl.truststore.location or ssl.truststore.certificates",
                ));
            }
            (None, None) => {
                return Ok(TrustStore::System {
                    mozilla_fallback: self.mozilla_fallback.unwrap_or(false),
                });
            }
            (Some(path), None) => {
                let bytes = read("ssl.truststore.location", path)?;
                let ty = resolve_type("ssl.truststore.location", self.truststore_type, &bytes)?;
                ("ssl.truststore.location", bytes, ty)
            }
            (None, Some(pem)) => {
                if self.truststore_type == Some(StoreType::Pkcs12) {
                    return Err(incompatible(
                        "ssl.truststore.certificates",
                        "inline certificates are PEM: set ssl.truststore.type=PEM (or leave it unset)",
                    ));
                }
                (
                    "ssl.truststore.certificates",
                    pem.clone().into_bytes(),
                    StoreType::Pem,
                )
            }
        };
        if self.mozilla_fallback == Some(true) {
            return Err(incompatible(
                "ssl.truststore.fallback",
                "the fallback applies only to the system trust store, without ssl.truststore.location or ssl.truststore.certificates",
            ));
        }
        let pem = match ty {
            StoreType::Pem => {
                if password.is_some() {
                    return Err(incompatible(
                        "ssl.truststore.password",
                        "a PEM trust store has no password (as in Java): remove it",
                    ));
                }
                check_certs(key, &bytes)?;
                bytes
            }
            StoreType::Pkcs12 => pkcs12_trust(&bytes, password).map_err(|reason| {
                let key = match reason {
                    KeyStoreError::WrongPassword | KeyStoreError::PasswordRequired => {
                        "ssl.truststore.password"
                    }
                    _ => key,
                };
                key_store(key, reason)
            })?,
        };
        Ok(TrustStore::Pem(pem))
    }

    /// `ssl.keystore.*` and `ssl.key.password`: the client certificate
    /// chain and key as PEM, `None` without a key store.
    fn identity(&self) -> Result<Option<Identity>, ConfigError> {
        let key_password = self.key_password.as_ref().map(Secret::expose);
        let store_password = self.keystore_password.as_ref().map(Secret::expose);
        let (location, pem_key, pem_chain) = (
            &self.keystore_location,
            &self.keystore_key,
            &self.keystore_chain,
        );
        let no_store_password = |why: &str| -> Result<(), ConfigError> {
            match store_password {
                Some(_) => Err(incompatible(
                    "ssl.keystore.password",
                    &format!(
                        "{why} has no store password (as in Java): use ssl.key.password for an encrypted key"
                    ),
                )),
                None => Ok(()),
            }
        };
        match (location, pem_key, pem_chain) {
            (None, None, None) => Ok(None),
            (Some(path), None, None) => {
                let key = "ssl.keystore.location";
                let bytes = read(key, path)?;
                match resolve_type(key, self.keystore_type, &bytes)? {
                    StoreType::Pem => {
                        // Java's PEM key store file: the private key and its chain.
                        no_store_password("a PEM key store")?;
                        check_certs(key, &bytes)?;
                        let key_pem = pem_key_for(key, &bytes, key_password)?;
                        Ok(Some((bytes, key_pem)))
                    }
                    StoreType::Pkcs12 => {
                        let Some(password) = store_password else {
                            return Err(ConfigError::Missing(
                                "ssl.keystore.password (the PKCS#12 key store's password)".into(),
                            ));
                        };
                        if key_password.is_some_and(|k| k != password) {
                            return Err(incompatible(
                                "ssl.key.password",
                                "a PKCS#12 key store has one password for the store and its key (as keytool writes them): leave ssl.key.password unset or equal to ssl.keystore.password",
                            ));
                        }
                        let id = pkcs12_identity(&bytes, Some(password)).map_err(|reason| {
                            let key = match reason {
                                KeyStoreError::WrongPassword | KeyStoreError::PasswordRequired => {
                                    "ssl.keystore.password"
                                }
                                _ => key,
                            };
                            key_store(key, reason)
                        })?;
                        Ok(Some(id))
                    }
                }
            }
            (None, Some(key_pem), Some(chain)) => {
                if self.keystore_type == Some(StoreType::Pkcs12) {
                    return Err(incompatible(
                        "ssl.keystore.key",
                        "an inline key and chain are PEM: set ssl.keystore.type=PEM (or leave it unset)",
                    ));
                }
                no_store_password("an inline PEM key")?;
                check_certs("ssl.keystore.certificate.chain", chain.as_bytes())?;
                let key_pem = pem_key_for("ssl.keystore.key", key_pem.as_bytes(), key_password)?;
                Ok(Some((chain.clone().into_bytes(), key_pem)))
            }
            (Some(_), _, _) => Err(incompatible(
                "ssl.keystore.location",
                "set either ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain",
            )),
            (None, _, _) => Err(ConfigError::Missing(
                "ssl.keystore.key and ssl.keystore.certificate.chain (both)".into(),
            )),
        }
    }
}

/// `key` (a store type): PEM, PKCS12, or JKS, which is refused here.
fn store_type(props: &mut Properties, key: &str) -> Result<Option<StoreType>, ConfigError> {
    match props.one_of_ignoring_case(key, STORE_TYPES)? {
        None => Ok(None),
        Some(Some(ty)) => Ok(Some(ty)),
        Some(None) => Err(key_store(key, KeyStoreError::JksUnsupported)),
    }
}

/// The store type: the one set, checked against the contents, else what
/// the contents are.
fn resolve_type(key: &str, set: Option<StoreType>, bytes: &[u8]) -> Result<StoreType, ConfigError> {
    let found = StoreType::sniff(bytes).map_err(|reason| key_store(key, reason));
    match set {
        None => found,
        Some(ty) => match found {
            Ok(f) if f == ty => Ok(ty),
            // The reader gives the precise reason.
            _ if ty == StoreType::Pkcs12 => Ok(ty),
            _ => Err(key_store(
                key,
                KeyStoreError::WrongFormat {
                    expected: "PEM",
                    found: crate::connection::looks_like(bytes),
                },
            )),
        },
    }
}

/// The file at `path`, or an error naming `key`.
fn read(key: &str, path: &str) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| {
        key_store(
            key,
            KeyStoreError::Unreadable {
                path: path.into(),
                reason: e.to_string(),
            },
        )
    })
}

fn key_store(key: &str, reason: KeyStoreError) -> ConfigError {
    ConfigError::KeyStore {
        key: key.into(),
        reason,
    }
}

fn incompatible(key: &str, reason: &str) -> ConfigError {
    ConfigError::Incompatible {
        key: key.into(),
        reason: reason.into(),
    }
}

/// Checks the PEM certificates under `key` (with the `tls` feature;
/// without it SSL is refused anyway).
#[cfg(feature = "tls")]
fn check_certs(key: &str, pem: &[u8]) -> Result<(), ConfigError> {
    crate::connection::tls_impl::parse_certs(pem)
        .map(drop)
        .map_err(|reason| ConfigError::invalid_value(key, "<PEM>", &reason))
}

/// The key of a PEM key store under `key`, decrypted with `password` when
/// it is encrypted, checked.
#[cfg(feature = "tls")]
fn pem_key_for(key: &str, pem: &[u8], password: Option<&str>) -> Result<Vec<u8>, ConfigError> {
    let key_pem = crate::connection::pem_key(pem, password).map_err(|reason| {
        let key = match reason {
            KeyStoreError::WrongKeyPassword | KeyStoreError::KeyNotEncrypted => "ssl.key.password",
            _ => key,
        };
        key_store(key, reason)
    })?;
    crate::connection::tls_impl::parse_key(&key_pem)
        .map_err(|reason| ConfigError::invalid_value(key, "<PEM>", &reason))?;
    Ok(key_pem)
}

#[cfg(feature = "tls")]
fn pkcs12_trust(bytes: &[u8], password: Option<&str>) -> Result<Vec<u8>, KeyStoreError> {
    crate::connection::pkcs12_trust(bytes, password)
}

#[cfg(feature = "tls")]
fn pkcs12_identity(bytes: &[u8], password: Option<&str>) -> Result<Identity, KeyStoreError> {
    crate::connection::pkcs12_identity(bytes, password).map(|id| (id.chain_pem, id.key_pem))
}

#[cfg(not(feature = "tls"))]
fn check_certs(_key: &str, _pem: &[u8]) -> Result<(), ConfigError> {
    Ok(())
}

#[cfg(not(feature = "tls"))]
fn pem_key_for(_key: &str, pem: &[u8], _password: Option<&str>) -> Result<Vec<u8>, ConfigError> {
    Ok(pem.to_vec())
}

#[cfg(not(feature = "tls"))]
fn pkcs12_trust(_bytes: &[u8], _password: Option<&str>) -> Result<Vec<u8>, KeyStoreError> {
    Err(KeyStoreError::UnsupportedEncryption(
        crate::connection::TLS_FEATURE_MISSING.into(),
    ))
}

#[cfg(not(feature = "tls"))]
fn pkcs12_identity(_bytes: &[u8], _password: Option<&str>) -> Result<Identity, KeyStoreError> {
    Err(KeyStoreError::UnsupportedEncryption(
        crate::connection::TLS_FEATURE_MISSING.into(),
    ))
}

#[cfg(all(test, feature = "tls"))]
mod tests {
    use crate::{ClientConfig, ConfigError, KeyStoreError, TlsConfig, TrustStore};

    /// The path of a fixture (`src/connection/fixtures`, made by its `make.sh`).
    fn fixture(name: &str) -> String {
        format!(
            "{}/src/connection/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn ssl(extra: &[(&str, &str)]) -> Result<TlsConfig, ConfigError> {
        let mut props = vec![
            ("bootstrap.servers", "broker-1:9093"),
            ("security.protocol", "SSL"),
        ];
        props.extend_from_slice(extra);
        ClientConfig::from_properties(props).map(|c| c.connection_config().tls.expect("SSL"))
    }

    /// The reason of a [`ConfigError::KeyStore`], and its key.
    fn key_store_error(e: ConfigError) -> (String, KeyStoreError) {
        match e {
            ConfigError::KeyStore { key, reason } => (key, reason),
            e => panic!("expected a key store error, got {e:?}"),
        }
    }

    /// Without any `ssl.*` setting, SSL trusts the operating system's store
    /// and verifies host names (Java's defaults); the Mozilla fallback is a
    /// setting of its own.
    #[test]
    fn no_trust_store_means_the_system_store() {
        let tls = ssl(&[]).unwrap();
        assert_eq!(
            tls.trust,
            TrustStore::System {
                mozilla_fallback: false
            }
        );
        assert!(tls.verify_hostname && tls.client_cert_pem.is_none());
        let tls = ssl(&[("ssl.truststore.fallback", "mozilla")]).unwrap();
        assert_eq!(
            tls.trust,
            TrustStore::System {
                mozilla_fallback: true
            }
        );
        // The fallback with a trust store of its own makes no sense.
        let e = ssl(&[
            ("ssl.truststore.fallback", "mozilla"),
            ("ssl.truststore.location", &fixture("ca.pem")),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.truststore.fallback");
    }

    /// A PKCS#12 trust store (Java's, by keytool) with its password gives
    /// the CA; the type may be set or found from the contents.
    #[test]
    fn pkcs12_trust_store() {
        let ca = std::fs::read(fixture("ca.pem")).unwrap();
        for ty in [Some("PKCS12"), None] {
            let mut props = vec![
                ("ssl.truststore.location", fixture("trust.p12")),
                ("ssl.truststore.password", "trust-secret".into()),
            ];
            props.extend(ty.map(|t| ("ssl.truststore.type", t.to_string())));
            let props: Vec<(&str, &str)> = props.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let tls = ssl(&props).unwrap();
            let TrustStore::Pem(pem) = tls.trust else {
                panic!("{:?}", tls.trust)
            };
            assert_eq!(
                crate::connection::tls_impl::parse_certs(&pem).unwrap(),
                crate::connection::tls_impl::parse_certs(&ca).unwrap()
            );
        }
    }

    /// A PKCS#12 key store gives the client certificate and key; the
    /// store's password is required, a wrong one is named by its key.
    #[test]
    fn pkcs12_key_store() {
        let p12 = fixture("client.p12");
        let tls = ssl(&[
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.location", &p12),
            ("ssl.keystore.password", "store-secret"),
        ])
        .unwrap();
        assert!(tls.client_cert_pem.is_some() && tls.client_key_pem.is_some());
        let e = ssl(&[
            ("ssl.keystore.location", &p12),
            ("ssl.keystore.password", "wrong"),
        ])
        .unwrap_err();
        assert_eq!(
            key_store_error(e),
            ("ssl.keystore.password".into(), KeyStoreError::WrongPassword)
        );
        let e = ssl(&[("ssl.keystore.location", &p12)]).unwrap_err();
        assert!(
            matches!(e, ConfigError::Missing(ref k) if k.starts_with("ssl.keystore.password")),
            "{e}"
        );
        // A different key password cannot apply to a PKCS#12 store.
        let e = ssl(&[
            ("ssl.keystore.location", &p12),
            ("ssl.keystore.password", "store-secret"),
            ("ssl.key.password", "other"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.key.password");
    }

    /// Garbage, a JKS store and a missing file: errors naming the location
    /// and saying why; the password never printed.
    #[test]
    fn unusable_store_files_name_the_key_and_the_reason() {
        let cases = [
            ("ssl.truststore.location", "garbage.bin", "PKCS12"),
            ("ssl.truststore.location", "trust.jks", "PKCS12"),
            ("ssl.keystore.location", "garbage.bin", "PKCS12"),
            ("ssl.keystore.location", "no-such-file.p12", "PKCS12"),
            ("ssl.keystore.location", "ca.pem", "PKCS12"),
        ];
        for (key, file, ty) in cases {
            let type_key = key.replace("location", "type");
            let password_key = key.replace("location", "password");
            let e = ssl(&[
                (key, &fixture(file)),
                (&type_key, ty),
                (&password_key, "hunter2"),
            ])
            .unwrap_err();
            assert!(!e.to_string().contains("hunter2"), "{e}");
            let (k, reason) = key_store_error(e);
            assert_eq!(k, key, "{file}");
            match (file, reason) {
                ("garbage.bin", KeyStoreError::WrongFormat { .. })
                | ("ca.pem", KeyStoreError::WrongFormat { found: "PEM", .. })
                | ("trust.jks", KeyStoreError::JksUnsupported)
                | ("no-such-file.p12", KeyStoreError::Unreadable { .. }) => {}
                (file, reason) => panic!("{file}: {reason:?}"),
            }
        }
        // A JKS type is refused at its key.
        let e = ssl(&[("ssl.keystore.type", "jks")]).unwrap_err();
        assert_eq!(
            key_store_error(e),
            ("ssl.keystore.type".into(), KeyStoreError::JksUnsupported)
        );
    }

    /// A PEM key store with an encrypted PKCS#8 key: decrypted with
    /// `ssl.key.password`; a wrong or missing one is named.
    #[test]
    fn encrypted_pem_key() {
        let key = std::fs::read_to_string(fixture("client.enc.key")).unwrap();
        let chain = std::fs::read_to_string(fixture("client.pem")).unwrap();
        let with = |password: Option<&str>| {
            let mut props = vec![
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.key", key.as_str()),
                ("ssl.keystore.certificate.chain", chain.as_str()),
            ];
            props.extend(password.map(|p| ("ssl.key.password", p)));
            ssl(&props)
        };
        let tls = with(Some("key-secret")).unwrap();
        let pem = tls.client_key_pem.unwrap();
        assert!(pem.starts_with(b"-----BEGIN PRIVATE KEY-----"));
        assert_eq!(
            key_store_error(with(Some("wrong")).unwrap_err()),
            ("ssl.key.password".into(), KeyStoreError::WrongKeyPassword)
        );
        assert_eq!(
            key_store_error(with(None).unwrap_err()),
            (
                "ssl.keystore.key".into(),
                KeyStoreError::KeyPasswordRequired
            )
        );
    }

    /// Java's rules for PEM stores: no store password.
    #[test]
    fn pem_stores_take_no_store_password() {
        let e = ssl(&[
            ("ssl.truststore.location", &fixture("ca.pem")),
            ("ssl.truststore.password", "x"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.truststore.password");
        let key = std::fs::read_to_string(fixture("client.key")).unwrap();
        let chain = std::fs::read_to_string(fixture("client.pem")).unwrap();
        let e = ssl(&[
            ("ssl.keystore.key", &key),
            ("ssl.keystore.certificate.chain", &chain),
            ("ssl.keystore.password", "x"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.keystore.password");
    }
}
