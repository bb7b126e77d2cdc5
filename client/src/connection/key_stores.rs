//! Reading TLS trust and key material as Java's clients take it: PEM
//! certificates and keys, PKCS#12 stores (`ssl.truststore.type` /
//! `ssl.keystore.type=PKCS12`), PKCS#8 keys encrypted with a password
//! (`ssl.key.password`), and the reasons one of them cannot be used.
//!
//! Everything here is pure Rust (RustCrypto's `pkcs8` / `pkcs5` and the
//! `p12-keystore` reader); the loaders need the `tls` cargo feature, the
//! error type does not.

/// Why a trust store, key store or private key cannot be used. A
/// configuration error ([`ConfigError::KeyStore`](crate::ConfigError::KeyStore))
/// carries it with the setting it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyStoreError {
    /// The file cannot be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// The path given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The password does not open the store (its integrity check or its
    /// decryption failed).
    #[error("wrong password: the store's integrity check or decryption failed")]
    WrongPassword,
    /// The store is protected by a password and none was given.
    #[error("the store is protected by a password: set its password setting")]
    PasswordRequired,
    /// The contents are not the type the settings name (or any supported
    /// type); `found` says what they look like.
    #[error("not a {expected} file (it looks like {found})")]
    WrongFormat {
        /// The type expected (`PKCS#12`, `PEM`).
        expected: &'static str,
        /// What the contents look like.
        found: &'static str,
    },
    /// A Java KeyStore (JKS) file, or `type=JKS`: not readable here.
    #[error(
        "JKS stores are not supported: convert the store to PKCS#12 (keytool -importkeystore \
         -srckeystore store.jks -destkeystore store.p12 -deststoretype PKCS12) and set the \
         type to PKCS12"
    )]
    JksUnsupported,
    /// A key store without a private key.
    #[error("no private key in the key store")]
    NoPrivateKey,
    /// A key store whose key comes without its certificate.
    #[error("the private key has no certificate in the key store")]
    NoCertificateForKey,
    /// A trust store without any certificate.
    #[error("no certificate in the trust store")]
    NoCertificate,
    /// The private key is encrypted (`ENCRYPTED PRIVATE KEY`) and no
    /// `ssl.key.password` was given.
    #[error("the private key is encrypted: set ssl.key.password")]
    KeyPasswordRequired,
    /// `ssl.key.password` is set but the PEM key is not encrypted (Java
    /// refuses this too).
    #[error("ssl.key.password is set but the private key is not encrypted")]
    KeyNotEncrypted,
    /// `ssl.key.password` does not decrypt the private key.
    #[error("wrong ssl.key.password: the private key does not decrypt")]
    WrongKeyPassword,
    /// An encryption scheme this client cannot decrypt.
    #[error("unsupported encryption: {0}")]
    UnsupportedEncryption(String),
    /// The contents are damaged or not what they claim to be.
    #[error("malformed: {0}")]
    Malformed(String),
}

/// The type of a store file (`ssl.truststore.type` / `ssl.keystore.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreType {
    /// PEM text: certificates (and, in a key store, a PKCS#8 key).
    Pem,
    /// A PKCS#12 (PFX) file.
    Pkcs12,
}

impl StoreType {
    /// What `bytes` look like: PEM text, a PKCS#12 file, a JKS file.
    pub(crate) fn sniff(bytes: &[u8]) -> Result<StoreType, KeyStoreError> {
        match looks_like(bytes) {
            "PEM" => Ok(StoreType::Pem),
            "PKCS#12" => Ok(StoreType::Pkcs12),
            "a JKS store" => Err(KeyStoreError::JksUnsupported),
            found => Err(KeyStoreError::WrongFormat {
                expected: "PEM or PKCS#12",
                found,
            }),
        }
    }
}

/// A short description of what `bytes` look like, for errors.
pub(crate) fn looks_like(bytes: &[u8]) -> &'static str {
    let text = bytes.trim_ascii_start();
    if text.starts_with(b"-----BEGIN ") {
        "PEM"
    } else if bytes.starts_with(&[0xfe, 0xed, 0xfe, 0xed]) {
        "a JKS store"
    } else if pfx_header(bytes) {
        "PKCS#12"
    } else if bytes.is_empty() {
        "an empty file"
    } else if std::str::from_utf8(bytes).is_ok() {
        "text without a PEM block"
    } else {
        "binary data of an unknown type"
    }
}

/// Whether `bytes` start like a PFX: a DER SEQUENCE whose first element is
/// the INTEGER 3 (`PFX ::= SEQUENCE { version INTEGER {v3(3)}, ... }`).
fn pfx_header(bytes: &[u8]) -> bool {
    if bytes.first() != Some(&0x30) {
        return false;
    }
    let rest = match bytes.get(1) {
        Some(&n) if n < 0x80 => bytes.get(2..),
        Some(&n) if (0x81..=0x84).contains(&n) => bytes.get(2 + usize::from(n - 0x80)..),
        _ => None,
    };
    rest.is_some_and(|r| r.starts_with(&[0x02, 0x01, 0x03]))
}

#[cfg(feature = "tls")]
pub(crate) use loaders::*;

/// The readers proper (the `tls` cargo feature).
#[cfg(feature = "tls")]
mod loaders {
    use super::{KeyStoreError, looks_like, pfx_header};
    use p12_keystore::error::Error as P12Error;
    use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12Archive};

    /// A client identity as PEM: the certificate chain (leaf first) and its
    /// unencrypted PKCS#8 key.
    #[derive(Clone)]
    pub(crate) struct PemIdentity {
        /// `CERTIFICATE` blocks, leaf first.
        pub(crate) chain_pem: Vec<u8>,
        /// One `PRIVATE KEY` block (PKCS#8), or the key as given.
        pub(crate) key_pem: Vec<u8>,
    }

    /// The trusted certificates of a PKCS#12 trust store, as PEM.
    ///
    /// Java's trust stores mark their certificates as trusted (the
    /// attribute keytool writes); those are taken. A store without that
    /// mark (one made by `openssl pkcs12 -export -nokeys`) trusts every
    /// certificate that does not belong to a private key. An absent
    /// password is tried as the empty one (Java opens such a store without
    /// an integrity check, which this reader cannot skip).
    pub(crate) fn pkcs12_trust(
        bytes: &[u8],
        password: Option<&str>,
    ) -> Result<Vec<u8>, KeyStoreError> {
        let archive = open_pkcs12(bytes, password)?;
        let marked: Vec<&[u8]> = archive
            .certs
            .iter()
            .filter(|c| c.trusted)
            .map(|c| c.cert.as_der())
            .collect();
        let certs = if marked.is_empty() {
            archive
                .certs
                .iter()
                .filter(|c| c.local_key_id.is_none())
                .map(|c| c.cert.as_der())
                .collect()
        } else {
            marked
        };
        if certs.is_empty() {
            return Err(KeyStoreError::NoCertificate);
        }
        Ok(to_pem("CERTIFICATE", certs))
    }

    /// The private key and its certificate chain from a PKCS#12 key store.
    /// With several keys the first (by alias) is used.
    pub(crate) fn pkcs12_identity(
        bytes: &[u8],
        password: Option<&str>,
    ) -> Result<PemIdentity, KeyStoreError> {
        // Check the file and password first, for the precise error.
        let archive = open_pkcs12(bytes, password)?;
        if archive.keys.is_empty() {
            return Err(KeyStoreError::NoPrivateKey);
        }
        let store = KeyStore::from_pkcs12(
            bytes,
            password.unwrap_or_default(),
            p12_keystore::Pkcs12ImportPolicy::Relaxed,
        )
        .map_err(|e| p12_error(e, password))?;
        let chain = store.entries().find_map(|(_, entry)| match entry {
            KeyStoreEntry::PrivateKeyChain(chain) => Some(chain),
            _ => None,
        });
        let Some(chain) = chain else {
            return Err(KeyStoreError::NoPrivateKey);
        };
        if chain.certs().is_empty() {
            return Err(KeyStoreError::NoCertificateForKey);
        }
        Ok(PemIdentity {
            chain_pem: to_pem("CERTIFICATE", chain.certs().iter().map(|c| c.as_der())),
            key_pem: to_pem("PRIVATE KEY", [chain.key().as_der()]),
        })
    }

    /// Opens a PKCS#12 file: its MAC checked and its bags decrypted.
    fn open_pkcs12(bytes: &[u8], password: Option<&str>) -> Result<Pkcs12Archive, KeyStoreError> {
        if !pfx_header(bytes) {
            return Err(match looks_like(bytes) {
                "a JKS store" => KeyStoreError::JksUnsupported,
                found => KeyStoreError::WrongFormat {
                    expected: "PKCS#12",
                    found,
                },
            });
        }
        Pkcs12Archive::from_pkcs12(bytes, password.unwrap_or_default())
            .map_err(|e| p12_error(e, password))
    }

    /// The reason behind a PKCS#12 reader error.
    fn p12_error(e: P12Error, password: Option<&str>) -> KeyStoreError {
        let wrong = || match password {
            None | Some("") => KeyStoreError::PasswordRequired,
            Some(_) => KeyStoreError::WrongPassword,
        };
        match e {
            // A MAC that does not verify, or a decryption whose padding
            // fails: the password is wrong.
            P12Error::MacError(_) | P12Error::UnpadError => wrong(),
            P12Error::Pkcs5Error(m) if m.contains("decrypt") => wrong(),
            P12Error::UnsupportedEncryptionScheme | P12Error::UnsupportedMacAlgorithm => {
                KeyStoreError::UnsupportedEncryption(format!(
                    "{e} (MD5-based PKCS#12 schemes are not supported; re-export the store \
                     with AES, e.g. openssl pkcs12 -export, or keytool)"
                ))
            }
            e => KeyStoreError::Malformed(format!("PKCS#12: {e}")),
        }
    }

    /// A PEM key store's key for rustls: an `ENCRYPTED PRIVATE KEY`
    /// decrypted with `password`, or an unencrypted key as given (PKCS#8,
    /// or PKCS#1 / SEC1, which Java does not read but rustls does).
    pub(crate) fn pem_key(pem: &[u8], password: Option<&str>) -> Result<Vec<u8>, KeyStoreError> {
        const BEGIN: &[u8] = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";
        const END: &[u8] = b"-----END ENCRYPTED PRIVATE KEY-----";
        let password = password.filter(|p| !p.is_empty());
        let Some(start) = find(pem, BEGIN) else {
            if find(pem, b"Proc-Type: 4,ENCRYPTED").is_some() {
                return Err(KeyStoreError::UnsupportedEncryption(
                    "a key in OpenSSL's traditional encrypted format; convert it to PKCS#8 \
                     (openssl pkcs8 -topk8 -v2 aes-256-cbc)"
                        .into(),
                ));
            }
            if password.is_some() {
                return Err(KeyStoreError::KeyNotEncrypted);
            }
            return Ok(pem.to_vec());
        };
        let Some(password) = password else {
            return Err(KeyStoreError::KeyPasswordRequired);
        };
        let end = find(&pem[start..], END)
            .map(|e| start + e + END.len())
            .ok_or_else(|| KeyStoreError::Malformed("unterminated ENCRYPTED PRIVATE KEY".into()))?;
        let der = decrypt_pkcs8(&pem[start..end], password)?;
        Ok(to_pem("PRIVATE KEY", [der.as_slice()]))
    }

    /// The PKCS#8 DER of one `ENCRYPTED PRIVATE KEY` PEM block.
    fn decrypt_pkcs8(block: &[u8], password: &str) -> Result<Vec<u8>, KeyStoreError> {
        use pkcs8::der::Decode as _;
        let (label, der) = pkcs8::der::pem::decode_vec(block)
            .map_err(|e| KeyStoreError::Malformed(format!("ENCRYPTED PRIVATE KEY PEM: {e}")))?;
        debug_assert_eq!(label, "ENCRYPTED PRIVATE KEY");
        let info = pkcs8::EncryptedPrivateKeyInfoOwned::from_der(&der)
            .map_err(|e| KeyStoreError::Malformed(format!("ENCRYPTED PRIVATE KEY: {e}")))?;
        let doc = info.decrypt(password).map_err(|e| match e {
            pkcs8::Error::EncryptedPrivateKey(pkcs8::pkcs5::Error::DecryptFailed) => {
                KeyStoreError::WrongKeyPassword
            }
            pkcs8::Error::EncryptedPrivateKey(e) => KeyStoreError::UnsupportedEncryption(format!(
                "{e} (PBES2 with PBKDF2 or scrypt and AES-CBC or 3DES is supported; \
                 re-encrypt with openssl pkcs8 -topk8 -v2 aes-256-cbc)"
            )),
            // Decrypted (the padding happened to check) into garbage.
            _ => KeyStoreError::WrongKeyPassword,
        })?;
        // A wrong password that passes the padding check by chance decrypts
        // to something that is no PrivateKeyInfo.
        pkcs8::PrivateKeyInfoRef::try_from(doc.as_bytes())
            .map_err(|_| KeyStoreError::WrongKeyPassword)?;
        Ok(doc.as_bytes().to_vec())
    }

    /// The offset of `needle` in `haystack`.
    fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        haystack.windows(needle.len()).position(|w| w == needle)
    }

    /// PEM text of DER blocks under `label` (`CERTIFICATE`, `PRIVATE KEY`).
    pub(crate) fn to_pem<'a>(label: &str, ders: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
        use base64::Engine as _;
        let mut out = String::new();
        for der in ders {
            out.push_str(&format!("-----BEGIN {label}-----\n"));
            let b64 = base64::engine::general_purpose::STANDARD.encode(der);
            for line in b64.as_bytes().chunks(64) {
                out.push_str(std::str::from_utf8(line).unwrap_or_default());
                out.push('\n');
            }
            out.push_str(&format!("-----END {label}-----\n"));
        }
        out.into_bytes()
    }
}

#[cfg(all(test, feature = "tls"))]
mod tests {
    use super::*;
    use crate::connection::tls_impl::{parse_certs, parse_key};

    /// A fixture of `fixtures/` (made by `fixtures/make.sh`).
    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/src/connection/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The client certificate's DER (the leaf every identity must carry).
    fn client_cert_der() -> Vec<u8> {
        parse_certs(&fixture("client.pem")).unwrap()[0].to_vec()
    }

    /// The unencrypted key's PKCS#8 DER.
    fn client_key_der() -> Vec<u8> {
        parse_key(&fixture("client.key"))
            .unwrap()
            .secret_der()
            .to_vec()
    }

    /// A PKCS#12 key store (openssl's PBES2/AES default, and the legacy
    /// RC2/3DES one) gives the leaf certificate first, its CA, and the key.
    #[test]
    fn pkcs12_key_store_gives_the_chain_and_the_key() {
        for name in ["client.p12", "client-legacy.p12"] {
            let id = pkcs12_identity(&fixture(name), Some("store-secret")).unwrap();
            let chain = parse_certs(&id.chain_pem).unwrap();
            assert_eq!(chain[0].as_ref(), client_cert_der(), "{name}: leaf first");
            assert_eq!(chain.len(), 2, "{name}: leaf and CA");
            let key = parse_key(&id.key_pem).unwrap();
            assert_eq!(key.secret_der(), client_key_der(), "{name}");
        }
    }

    /// A wrong password is named as such; none at all asks for one.
    #[test]
    fn pkcs12_wrong_or_missing_password() {
        let p12 = fixture("client.p12");
        assert_eq!(
            pkcs12_identity(&p12, Some("wrong")).err(),
            Some(KeyStoreError::WrongPassword)
        );
        assert_eq!(
            pkcs12_identity(&p12, None).err(),
            Some(KeyStoreError::PasswordRequired)
        );
        assert_eq!(
            pkcs12_trust(&fixture("trust.p12"), Some("wrong")).err(),
            Some(KeyStoreError::WrongPassword)
        );
    }

    /// Garbage, PEM text and a JKS store are not PKCS#12, each said so.
    #[test]
    fn not_pkcs12_says_what_the_file_looks_like() {
        assert_eq!(
            pkcs12_identity(&fixture("garbage.bin"), Some("x")).err(),
            Some(KeyStoreError::WrongFormat {
                expected: "PKCS#12",
                found: "binary data of an unknown type"
            })
        );
        assert_eq!(
            pkcs12_trust(&fixture("ca.pem"), Some("x")).err(),
            Some(KeyStoreError::WrongFormat {
                expected: "PKCS#12",
                found: "PEM"
            })
        );
        assert_eq!(
            pkcs12_trust(&fixture("trust.jks"), Some("trust-secret")).err(),
            Some(KeyStoreError::JksUnsupported)
        );
        assert_eq!(
            StoreType::sniff(&fixture("trust.jks")),
            Err(KeyStoreError::JksUnsupported)
        );
        assert_eq!(
            StoreType::sniff(&fixture("client.p12")),
            Ok(StoreType::Pkcs12)
        );
        assert_eq!(StoreType::sniff(&fixture("ca.pem")), Ok(StoreType::Pem));
    }

    /// A damaged store (truncated) is a typed error, not a panic.
    #[test]
    fn truncated_pkcs12_is_malformed() {
        let p12 = fixture("client.p12");
        for len in [8, p12.len() / 2, p12.len() - 1] {
            let r = pkcs12_identity(&p12[..len], Some("store-secret"));
            assert!(
                matches!(r, Err(KeyStoreError::Malformed(_))),
                "{len}: {:?}",
                r.err()
            );
        }
    }

    /// A trust store has no key: as a key store it is refused as such.
    #[test]
    fn trust_store_as_key_store_has_no_private_key() {
        assert_eq!(
            pkcs12_identity(&fixture("trust.p12"), Some("trust-secret")).err(),
            Some(KeyStoreError::NoPrivateKey)
        );
    }

    /// Java's trust store (keytool: trusted-certificate entries) and
    /// openssl's certificates-only store both give the CA.
    #[test]
    fn pkcs12_trust_stores_give_the_ca() {
        let ca = parse_certs(&fixture("ca.pem")).unwrap();
        for name in ["trust.p12", "trust-openssl.p12"] {
            let pem = pkcs12_trust(&fixture(name), Some("trust-secret")).unwrap();
            assert_eq!(parse_certs(&pem).unwrap(), ca, "{name}");
        }
    }

    /// An encrypted PKCS#8 key (PBKDF2 + AES-256-CBC, or scrypt) decrypts
    /// with its password to the unencrypted key.
    #[test]
    fn encrypted_pkcs8_key_decrypts() {
        for name in ["client.enc.key", "client.scrypt.key"] {
            let pem = pem_key(&fixture(name), Some("key-secret")).unwrap();
            assert_eq!(
                parse_key(&pem).unwrap().secret_der(),
                client_key_der(),
                "{name}"
            );
        }
    }

    /// The encrypted key's error paths: wrong password, none, a password
    /// for a key that is not encrypted, OpenSSL's traditional format.
    #[test]
    fn encrypted_key_errors() {
        let enc = fixture("client.enc.key");
        assert_eq!(
            pem_key(&enc, Some("wrong")).err(),
            Some(KeyStoreError::WrongKeyPassword)
        );
        assert_eq!(
            pem_key(&enc, None).err(),
            Some(KeyStoreError::KeyPasswordRequired)
        );
        assert_eq!(
            pem_key(&fixture("client.key"), Some("key-secret")).err(),
            Some(KeyStoreError::KeyNotEncrypted)
        );
        assert!(matches!(
            pem_key(&fixture("client.traditional.key"), Some("key-secret")),
            Err(KeyStoreError::UnsupportedEncryption(_))
        ));
        // An unencrypted key passes through unchanged.
        assert_eq!(
            pem_key(&fixture("client.key"), None).unwrap(),
            fixture("client.key")
        );
    }

    /// PEM written here reads back as the same DER.
    #[test]
    fn to_pem_round_trips() {
        let der = client_cert_der();
        let pem = to_pem("CERTIFICATE", [der.as_slice(), der.as_slice()]);
        let certs = parse_certs(&pem).unwrap();
        assert_eq!(certs.len(), 2);
        assert_eq!(certs[1].as_ref(), der);
    }
}
