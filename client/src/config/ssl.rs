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
    fn identity(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>, ConfigError> {
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
        .map_err(|reason| super::properties::invalid(key, "<PEM>", &reason))
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
        .map_err(|reason| super::properties::invalid(key, "<PEM>", &reason))?;
    Ok(key_pem)
}

#[cfg(feature = "tls")]
fn pkcs12_trust(bytes: &[u8], password: Option<&str>) -> Result<Vec<u8>, KeyStoreError> {
    crate::connection::pkcs12_trust(bytes, password)
}

#[cfg(feature = "tls")]
fn pkcs12_identity(
    bytes: &[u8],
    password: Option<&str>,
) -> Result<(Vec<u8>, Vec<u8>), KeyStoreError> {
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
fn pkcs12_identity(
    _bytes: &[u8],
    _password: Option<&str>,
) -> Result<(Vec<u8>, Vec<u8>), KeyStoreError> {
    Err(KeyStoreError::UnsupportedEncryption(
        crate::connection::TLS_FEATURE_MISSING.into(),
    ))
}
