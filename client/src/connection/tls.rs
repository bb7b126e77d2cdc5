//! TLS settings and the TLS handshake of a connection (cargo feature `tls`:
//! rustls with its `ring` provider): whom to trust (a PEM trust store, or
//! the operating system's store with Mozilla's roots as an opt-in
//! fallback), host name verification and the client certificate.

use super::{ConnectionConfig, Io};
use crate::error::ConnError;
use tokio::net::TcpStream;

/// TLS settings of a [`Connection`](super::Connection)
/// (`security.protocol=SSL` or `SASL_SSL`).
///
/// Needs the `tls` cargo feature (rustls with the `ring` provider); without
/// it, connecting with [`ConnectionConfig::tls`] set fails with
/// [`ConnError::InvalidTlsConfig`]. The broker's certificate chain is
/// verified against [`Self::trust`]: given certificates, or by default the
/// operating system's trust store, as Java (the JVM's default trust store)
/// and librdkafka do.
#[derive(Clone)]
#[non_exhaustive]
pub struct TlsConfig {
    /// The certificate authorities trusted to sign the brokers'
    /// certificates (`ssl.truststore.*`).
    pub trust: TrustStore,
    /// The name the broker's certificate must be valid for, also sent as
    /// SNI; default: the host part of the address dialled (a name or an IP).
    pub server_name: Option<String>,
    /// Check that the certificate is valid for the broker's name
    /// (`ssl.endpoint.identification.algorithm=https`, the default). When
    /// false the chain is still verified against [`Self::trust`].
    pub verify_hostname: bool,
    /// Client certificate chain (PEM) for mutual TLS.
    pub client_cert_pem: Option<Vec<u8>>,
    /// Client private key (unencrypted PEM: PKCS#8, PKCS#1 or SEC1) for
    /// mutual TLS.
    pub client_key_pem: Option<Vec<u8>>,
}

/// The certificate authorities a TLS connection trusts.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustStore {
    /// The operating system's trust store (what Java's clients use when no
    /// `ssl.truststore.location` is set: the JVM's default one). It is read
    /// at each connection setup, so a CA installed into the system store
    /// (`update-ca-certificates`) is trusted from the next connection on.
    /// On Linux and other Unix systems the usual bundle files and
    /// directories are probed; the environment variables `SSL_CERT_FILE`
    /// and `SSL_CERT_DIR`, when set, replace that probe (as for OpenSSL).
    System {
        /// When the system store yields no certificate (a minimal container
        /// without `ca-certificates`), trust Mozilla's root certificates
        /// built into the program instead (`ssl.truststore.fallback=mozilla`,
        /// a kafka-eos setting; off by default). Without it such a store is
        /// a configuration error at connection time.
        mozilla_fallback: bool,
    },
    /// These PEM certificates (`ssl.truststore.location` or
    /// `ssl.truststore.certificates`, PEM or read from a PKCS#12 store).
    Pem(Vec<u8>),
}

impl TrustStore {
    /// What the store is, for error messages.
    #[cfg(feature = "tls")]
    fn describe(&self) -> &'static str {
        match self {
            TrustStore::System {
                mozilla_fallback: false,
            } => "the operating system's trust store (no ssl.truststore.location set)",
            TrustStore::System {
                mozilla_fallback: true,
            } => {
                "the operating system's trust store, else Mozilla's roots (no ssl.truststore.location set)"
            }
            TrustStore::Pem(_) => "the configured trust store",
        }
    }
}

impl std::fmt::Debug for TrustStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrustStore::System { mozilla_fallback } => f
                .debug_struct("System")
                .field("mozilla_fallback", mozilla_fallback)
                .finish(),
            TrustStore::Pem(pem) => write!(f, "Pem({} bytes)", pem.len()),
        }
    }
}

impl TlsConfig {
    /// Trusts the CA certificates in `ca_pem`; verifies host names; no
    /// client certificate.
    ///
    /// ```
    /// use kafka_client::TlsConfig;
    /// use kafka_client::ConnectionConfig;
    /// # let (ca_pem, cert_pem, key_pem) = (Vec::<u8>::new(), Vec::<u8>::new(), Vec::<u8>::new());
    /// let tls = TlsConfig::new(ca_pem) // ssl.truststore: the CA that signed the brokers
    ///     .server_name("kafka.internal.example") // when the brokers' addresses are IPs
    ///     .client_auth(cert_pem, key_pem); // mutual TLS (ssl.keystore)
    /// let config = ConnectionConfig { tls: Some(tls), ..Default::default() };
    /// ```
    pub fn new(ca_pem: impl Into<Vec<u8>>) -> Self {
        Self::with_trust(TrustStore::Pem(ca_pem.into()))
    }

    /// Trusts the operating system's trust store (what a Java client does
    /// without `ssl.truststore.location`); verifies host names; no client
    /// certificate.
    ///
    /// ```
    /// use kafka_client::{ConnectionConfig, TlsConfig, TrustStore};
    /// // A managed cluster whose brokers have publicly trusted certificates.
    /// let tls = TlsConfig::system();
    /// assert_eq!(tls.trust, TrustStore::System { mozilla_fallback: false });
    /// // In a minimal container without a system store: Mozilla's roots.
    /// let tls = TlsConfig::with_trust(TrustStore::System { mozilla_fallback: true });
    /// let config = ConnectionConfig { tls: Some(tls), ..Default::default() };
    /// ```
    pub fn system() -> Self {
        Self::with_trust(TrustStore::System {
            mozilla_fallback: false,
        })
    }

    /// Trusts `trust`; verifies host names; no client certificate.
    pub fn with_trust(trust: TrustStore) -> Self {
        Self {
            trust,
            server_name: None,
            verify_hostname: true,
            client_cert_pem: None,
            client_key_pem: None,
        }
    }

    /// Overrides the name verified and sent as SNI.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    /// Whether the certificate must be valid for the broker's name.
    pub fn verify_hostname(mut self, on: bool) -> Self {
        self.verify_hostname = on;
        self
    }

    /// Presents a client certificate chain and its key (mutual TLS).
    pub fn client_auth(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.client_cert_pem = Some(cert_pem.into());
        self.client_key_pem = Some(key_pem.into());
        self
    }
}

impl Default for TlsConfig {
    /// [`TlsConfig::system`]: Java's defaults.
    fn default() -> Self {
        Self::system()
    }
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the private key.
        f.debug_struct("TlsConfig")
            .field("trust", &self.trust)
            .field("server_name", &self.server_name)
            .field("verify_hostname", &self.verify_hostname)
            .field("client_cert", &self.client_cert_pem.is_some())
            .field(
                "client_key",
                &self.client_key_pem.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The TLS handshake, then the IO tasks on the encrypted stream.
#[cfg(feature = "tls")]
pub(super) async fn start_tls(
    addr: &str,
    stream: TcpStream,
    tls: &TlsConfig,
    config: &ConnectionConfig,
) -> Result<Io, ConnError> {
    let client =
        tls_impl::client_config(tls).map_err(|message| ConnError::InvalidTlsConfig { message })?;
    let name = tls_impl::server_name(addr, tls)
        .map_err(|message| ConnError::InvalidTlsConfig { message })?;
    let stream = tokio_rustls::TlsConnector::from(client)
        .connect(name, stream)
        .await
        .map_err(|source| ConnError::Tls {
            addr: addr.to_string(),
            source: tls_impl::explain_handshake_error(source, tls),
        })?;
    tracing::debug!(
        addr,
        version = ?stream.get_ref().1.protocol_version(),
        "TLS established"
    );
    let (rd, wr) = tokio::io::split(stream);
    Ok(Io::start(
        rd,
        wr,
        addr.to_string(),
        config.max_frame_size,
        config.client_id.clone(),
    ))
}

/// Without the `tls` feature a TLS connection is a configuration error.
#[cfg(not(feature = "tls"))]
pub(super) async fn start_tls(
    _addr: &str,
    _stream: TcpStream,
    _tls: &TlsConfig,
    _config: &ConnectionConfig,
) -> Result<Io, ConnError> {
    Err(ConnError::InvalidTlsConfig {
        message: TLS_FEATURE_MISSING.into(),
    })
}

/// Why SSL / SASL_SSL cannot work in a build without the `tls` feature.
pub(crate) const TLS_FEATURE_MISSING: &str =
    "TLS needs the `tls` cargo feature of kafka-client (this build lacks it)";

/// rustls glue: PEM parsing, trust anchors, the client configuration,
/// server names.
#[cfg(feature = "tls")]
pub(crate) mod tls_impl {
    use super::{TlsConfig, TrustStore};
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
    use std::sync::Arc;
    use tokio_rustls::rustls::client::WebPkiServerVerifier;
    use tokio_rustls::rustls::client::danger::{
        HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
    };
    use tokio_rustls::rustls::crypto::ring;
    use tokio_rustls::rustls::{
        CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore,
        SignatureScheme,
    };

    /// Every `CERTIFICATE` block of `pem` (at least one).
    pub(crate) fn parse_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("invalid PEM certificate: {e}"))?;
        if certs.is_empty() {
            return Err("no PEM CERTIFICATE block found".into());
        }
        Ok(certs)
    }

    /// The first private key block of `pem` (PKCS#8, PKCS#1 or SEC1).
    pub(crate) fn parse_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
        PrivateKeyDer::from_pem_slice(pem).map_err(|e| {
            format!("no usable PEM private key (unencrypted PKCS#8, PKCS#1 or SEC1): {e}")
        })
    }

    /// The trust anchors of `trust`.
    pub(crate) fn root_store(trust: &TrustStore) -> Result<RootCertStore, String> {
        let mut roots = RootCertStore::empty();
        match trust {
            TrustStore::Pem(pem) => {
                for cert in parse_certs(pem).map_err(|e| format!("trusted CAs: {e}"))? {
                    roots
                        .add(cert)
                        .map_err(|e| format!("trusted CAs: unusable certificate: {e}"))?;
                }
            }
            TrustStore::System { mozilla_fallback } => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _ignored) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    if *mozilla_fallback {
                        tracing::debug!(
                            errors = ?found.errors,
                            "no certificate in the system trust store; trusting Mozilla's roots"
                        );
                        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                    } else {
                        let errors: Vec<String> =
                            found.errors.iter().map(|e| e.to_string()).collect();
                        return Err(format!(
                            "the operating system's trust store has no usable certificate{}: \
                             install the system's CA certificates, set ssl.truststore.location \
                             to the CA that signed the brokers, or set \
                             ssl.truststore.fallback=mozilla",
                            if errors.is_empty() {
                                String::new()
                            } else {
                                format!(" ({})", errors.join("; "))
                            }
                        ));
                    }
                }
            }
        }
        Ok(roots)
    }

    /// The rustls client configuration for `tls`.
    pub(crate) fn client_config(tls: &TlsConfig) -> Result<Arc<ClientConfig>, String> {
        let provider = Arc::new(ring::default_provider());
        let roots = root_store(&tls.trust)?;
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = if tls.verify_hostname {
            builder.with_root_certificates(roots)
        } else {
            let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| e.to_string())?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnlyVerifier(inner)))
        };
        let config = match (&tls.client_cert_pem, &tls.client_key_pem) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = parse_certs(cert).map_err(|e| format!("client certificate: {e}"))?;
                let key = parse_key(key).map_err(|e| format!("client key: {e}"))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("client certificate and key: {e}"))?
            }
            _ => return Err("a client certificate needs its private key and vice versa".into()),
        };
        Ok(Arc::new(config))
    }

    /// The verified name: the override, else the host part of `addr`.
    pub(crate) fn server_name(addr: &str, tls: &TlsConfig) -> Result<ServerName<'static>, String> {
        let host = match &tls.server_name {
            Some(name) => name.as_str(),
            None => {
                let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
                host.trim_start_matches('[').trim_end_matches(']')
            }
        };
        ServerName::try_from(host.to_string())
            .map_err(|e| format!("invalid TLS server name {host:?}: {e}"))
    }

    /// A handshake error that says what to do next when the broker's
    /// certificate is not trusted: which trust store was used and which
    /// setting changes it. Other errors are returned as they are.
    pub(crate) fn explain_handshake_error(e: std::io::Error, tls: &TlsConfig) -> std::io::Error {
        let Some(Error::InvalidCertificate(cert)) =
            e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
        else {
            return e;
        };
        let hint = match cert {
            CertificateError::UnknownIssuer => format!(
                "the broker's certificate is signed by a CA that {} does not contain; set \
                 ssl.truststore.location (or ssl.truststore.certificates) to the CA that signed it",
                tls.trust.describe()
            ),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the broker's certificate is not valid for the host name dialled; connect by a \
                 name the certificate lists, or (not recommended) disable host name \
                 verification with ssl.endpoint.identification.algorithm= (empty)"
                    .into()
            }
            _ => return e,
        };
        std::io::Error::new(e.kind(), format!("{e}: {hint}"))
    }

    /// `ssl.endpoint.identification.algorithm=` (empty): the chain and the
    /// signatures are verified as usual; only a name mismatch is accepted.
    #[derive(Debug)]
    struct ChainOnlyVerifier(Arc<WebPkiServerVerifier>);

    impl ServerCertVerifier for ChainOnlyVerifier {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp_response: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, Error> {
            // webpki checks the name only after the chain verified.
            match self.0.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ) {
                Err(Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => Ok(ServerCertVerified::assertion()),
                other => other,
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            self.0.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            self.0.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.supported_verify_schemes()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_new_verifies_the_hostname_without_client_auth() {
        let tls = TlsConfig::new(b"ca".to_vec());
        assert!(tls.verify_hostname);
        assert!(tls.server_name.is_none() && tls.client_cert_pem.is_none());
        assert_eq!(tls.trust, TrustStore::Pem(b"ca".to_vec()));
    }

    /// Java's default: the system trust store, host names verified.
    #[test]
    fn tls_default_is_the_system_store_with_hostname_verification() {
        let tls = TlsConfig::default();
        assert_eq!(
            tls.trust,
            TrustStore::System {
                mozilla_fallback: false
            }
        );
        assert!(tls.verify_hostname);
    }

    #[test]
    fn tls_builders_set_their_fields() {
        let tls = TlsConfig::new(Vec::new())
            .server_name("kafka.internal.example")
            .verify_hostname(false);
        assert_eq!(tls.server_name.as_deref(), Some("kafka.internal.example"));
        assert!(!tls.verify_hostname);
    }

    #[test]
    fn tls_debug_redacts_the_client_key() {
        let tls = TlsConfig::new(b"ca".to_vec())
            .client_auth(b"client cert".to_vec(), b"client key".to_vec());
        assert!(tls.client_cert_pem.is_some() && tls.client_key_pem.is_some());
        assert!(!format!("{tls:?}").contains("client key"));
    }
}
