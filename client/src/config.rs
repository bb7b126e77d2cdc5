//! The connection settings every client shares — `bootstrap.servers`,
//! `client.id`, timeouts, `security.protocol`, `sasl.*`, `ssl.*` — under the
//! Java client's property names, and the error a bad setting gives.

use crate::connection::{KeyStoreError, TlsConfig};
use crate::oauth::OAuthBearerConfig;
use crate::sasl::{SaslConfig, SaslMechanism};
use crate::{ClusterConfig, ConnectionConfig};
use std::time::Duration;

mod properties;
mod ssl;

pub use properties::Properties;
use properties::split_list;
use ssl::SslProps;

/// How a client reaches the cluster: bootstrap brokers, identity, timeouts
/// and security. Build with [`ClientConfig::new`] and set fields, or parse
/// Java properties with [`ClientConfig::from_properties`].
///
/// [`ClientConfig`] is what the consumers and the admin functions connect
/// with. Every client's configuration takes its keys from one
/// [`Properties`] bag ([`ClientConfig::take_from`] reads the connection
/// keys), so a key means the same thing to every client. Unknown keys and
/// bad values are errors naming the key.
///
/// ```
/// use kafka_client::{ClientConfig, SecurityProtocol};
/// let cfg = ClientConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("client.id", "orders-app"),
///     ("request.timeout.ms", "10000"),
/// ])
/// .unwrap();
/// assert_eq!(cfg.client_id, "orders-app");
/// assert_eq!(cfg.security_protocol, SecurityProtocol::Plaintext);
/// let err = ClientConfig::from_properties([("bootstrap.servers", "127.0.0.1:9092"), ("linger.ms", "5")])
///     .unwrap_err();
/// assert_eq!(err.key(), "linger.ms", "a producer setting is not a connection setting");
/// ```
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `bootstrap.servers`.
    pub bootstrap_servers: Vec<String>,
    /// `client.id`.
    pub client_id: String,
    /// `request.timeout.ms`.
    pub request_timeout: Duration,
    /// `socket.connection.setup.timeout.ms`: the first connect attempt's
    /// timeout (Java's default 10 s).
    pub connection_setup_timeout: Duration,
    /// `socket.connection.setup.timeout.max.ms`: the ceiling the timeout grows
    /// to over failed attempts (Java's default 30 s).
    pub connection_setup_timeout_max: Duration,
    /// `receive.message.max.bytes`: the largest response frame accepted.
    pub receive_message_max_bytes: usize,
    /// `metadata.max.age.ms`.
    pub metadata_max_age: Duration,
    /// The pause before a failed metadata refresh is tried again (the
    /// client's `retry.backoff.ms`; default 100 ms). Not a connection
    /// property of its own: a producer sets it from its `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// `sasl.mechanism`.
    pub sasl_mechanism: SaslMechanism,
    /// SASL username (`sasl.username`, or from `sasl.jaas.config`).
    pub sasl_username: Option<String>,
    /// SASL password (`sasl.password`, or from `sasl.jaas.config`).
    pub sasl_password: Option<Secret>,
    /// TLS settings (`ssl.*`); used with `SSL` and `SASL_SSL`. `None`:
    /// Java's defaults ([`TlsConfig::default`]: the operating system's trust
    /// store, host names verified, no client certificate).
    pub tls: Option<TlsConfig>,
    /// OAUTHBEARER's token source and refresh rules
    /// (`sasl.oauthbearer.*`, `sasl.login.*`, an `OAuthBearerLoginModule`
    /// `sasl.jaas.config`); used with `sasl.mechanism=OAUTHBEARER`.
    pub sasl_oauthbearer: Option<OAuthBearerConfig>,
    /// `bootstrap.timeout.ms` (a kafka-eos extension): how long connecting
    /// waits for a first answer from a bootstrap address (see
    /// [`ClusterConfig::bootstrap_timeout`]). Java's clients start without
    /// contacting a broker and bound their first wait for metadata by the
    /// client's own blocking bound; these clients fetch it while
    /// connecting and, when this is `None`, wait the same: the producer
    /// `max.block.ms`, the group consumer `default.api.timeout.ms`. A bare
    /// [`Self::cluster_config`] tries each address once. 0 fails fast.
    pub bootstrap_timeout: Option<Duration>,
}

impl ClientConfig {
    /// Java's defaults for `bootstrap` (comma-separated), not yet validated;
    /// `client.id` is `kafka-eos`.
    ///
    /// ```
    /// use kafka_client::ClientConfig;
    /// // Set in code rather than read from properties, then checked as a whole.
    /// let mut cfg = ClientConfig::new("broker-1:9092,broker-2:9092");
    /// cfg.client_id = "billing".into();
    /// let cfg = cfg.validate().unwrap();
    /// assert_eq!(cfg.cluster_config().bootstrap, ["broker-1:9092", "broker-2:9092"]);
    /// ```
    pub fn new(bootstrap: &str) -> Self {
        Self {
            bootstrap_servers: split_list(bootstrap),
            client_id: "kafka-eos".into(),
            request_timeout: Duration::from_millis(30_000),
            connection_setup_timeout: Duration::from_millis(10_000),
            connection_setup_timeout_max: Duration::from_millis(30_000),
            receive_message_max_bytes: kafka_proto::frame::DEFAULT_MAX_FRAME_SIZE,
            metadata_max_age: Duration::from_millis(300_000),
            retry_backoff: Duration::from_millis(100),
            security_protocol: SecurityProtocol::Plaintext,
            sasl_mechanism: SaslMechanism::Plain,
            sasl_username: None,
            sasl_password: None,
            tls: None,
            sasl_oauthbearer: None,
            bootstrap_timeout: None,
        }
    }

    /// Parses the connection properties (those [`Self::take_from`] reads);
    /// any other key is [`ConfigError::UnknownKey`]. `bootstrap.servers` is
    /// required; the result is validated ([`Self::validate`]).
    ///
    /// ```
    /// use kafka_client::ClientConfig;
    /// let cfg = ClientConfig::from_properties([
    ///     ("bootstrap.servers", "broker-1:9092"),
    ///     ("security.protocol", "SASL_PLAINTEXT"),
    ///     ("sasl.mechanism", "PLAIN"),
    ///     ("sasl.username", "alice"),
    ///     ("sasl.password", "alice-secret"),
    /// ])
    /// .unwrap();
    /// assert!(cfg.connection_config().sasl.is_some());
    /// ```
    pub fn from_properties<I, K, V>(props: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Self::new("").with_properties(props)
    }

    /// [`Self::from_properties`] over these settings instead of the
    /// defaults: a client with defaults of its own (a consumer's
    /// `client.id`) starts from them.
    ///
    /// ```
    /// use kafka_client::ClientConfig;
    /// let defaults = ClientConfig { client_id: "billing-reader".into(), ..ClientConfig::new("") };
    /// let cfg = defaults.with_properties([("bootstrap.servers", "broker-1:9092")]).unwrap();
    /// assert_eq!(cfg.client_id, "billing-reader");
    /// ```
    pub fn with_properties<I, K, V>(mut self, props: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut props = Properties::new(props);
        self.update_from(&mut props)?;
        props.finish()?;
        self.validate()
    }

    /// Takes the connection keys every client shares from `props` over
    /// Java's defaults ([`Self::new`]), and validates the result
    /// ([`Self::validate`]). The other keys stay in the bag for the other
    /// configurations; [`Properties::finish`] refuses those nobody took.
    ///
    /// ```
    /// use kafka_client::{ClientConfig, Properties};
    /// let mut props = Properties::new([
    ///     ("bootstrap.servers", "broker-1:9092"),
    ///     ("client.id", "billing"),
    ///     ("linger.ms", "5"), // a producer's key: left for the producer
    /// ]);
    /// let cfg = ClientConfig::take_from(&mut props).unwrap();
    /// assert_eq!(cfg.client_id, "billing");
    /// assert_eq!(props.finish().unwrap_err().key(), "linger.ms", "no producer took it");
    /// ```
    pub fn take_from(props: &mut Properties) -> Result<Self, ConfigError> {
        let mut c = Self::new("");
        c.update_from(props)?;
        c.validate()
    }

    /// Sets the connection settings `props` gives, keeping the others
    /// (a client's own defaults); not validated. What
    /// [`Self::take_from`] reads: `bootstrap.servers`, `client.id`, the
    /// timeouts, `receive.message.max.bytes`, `security.protocol`,
    /// `sasl.*` and `ssl.*`. Credentials from `sasl.jaas.config` fill what
    /// `sasl.username` / `sasl.password` leave unset; the `ssl.*` files are
    /// read into [`Self::tls`].
    ///
    /// ```
    /// use kafka_client::{ClientConfig, Properties};
    /// // A client with a default of its own keeps it unless the bag sets it.
    /// let mut cfg = ClientConfig { client_id: "billing-reader".into(), ..ClientConfig::new("") };
    /// let mut props = Properties::new([("bootstrap.servers", "broker-1:9092")]);
    /// cfg.update_from(&mut props).unwrap();
    /// assert_eq!(cfg.client_id, "billing-reader");
    /// assert_eq!(cfg.bootstrap_servers, ["broker-1:9092"]);
    /// ```
    pub fn update_from(&mut self, props: &mut Properties) -> Result<(), ConfigError> {
        let c = self;
        if let Some(value) = props.string("bootstrap.servers") {
            c.bootstrap_servers = parse_bootstrap("bootstrap.servers", &value)?;
        }
        if let Some(v) = props.string("client.id") {
            c.client_id = v;
        }
        let int_max = i64::from(i32::MAX);
        if let Some(v) = props.millis("request.timeout.ms", 0..=int_max)? {
            c.request_timeout = v;
        }
        if let Some(v) = props.millis("socket.connection.setup.timeout.ms", 1..=i64::MAX)? {
            c.connection_setup_timeout = v;
        }
        if let Some(v) = props.millis("socket.connection.setup.timeout.max.ms", 1..=i64::MAX)? {
            c.connection_setup_timeout_max = v;
        }
        if let Some(v) = props.bytes("receive.message.max.bytes", 1000..=int_max)? {
            c.receive_message_max_bytes = v;
        }
        if let Some(v) = props.millis("metadata.max.age.ms", 0..=i64::MAX)? {
            c.metadata_max_age = v;
        }
        if let Some(v) = props.millis("bootstrap.timeout.ms", 0..=i64::MAX)? {
            c.bootstrap_timeout = Some(v);
        }
        if let Some(p) = props.one_of_ignoring_case(
            "security.protocol",
            &[
                ("PLAINTEXT", SecurityProtocol::Plaintext),
                ("SASL_PLAINTEXT", SecurityProtocol::SaslPlaintext),
                ("SSL", SecurityProtocol::Ssl),
                ("SASL_SSL", SecurityProtocol::SaslSsl),
            ],
        )? {
            if matches!(p, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
                && !cfg!(feature = "tls")
            {
                let value = props.string("security.protocol").unwrap_or_default();
                return Err(ConfigError::invalid_value(
                    "security.protocol",
                    &value,
                    crate::connection::TLS_FEATURE_MISSING,
                ));
            }
            c.security_protocol = p;
        }
        if let Some(m) = props.one_of(
            "sasl.mechanism",
            &[
                ("PLAIN", SaslMechanism::Plain),
                ("SCRAM-SHA-256", SaslMechanism::ScramSha256),
                ("SCRAM-SHA-512", SaslMechanism::ScramSha512),
                ("OAUTHBEARER", SaslMechanism::OAuthBearer),
                ("AWS_MSK_IAM", SaslMechanism::AwsMskIam),
            ],
        )? {
            c.sasl_mechanism = m;
        }
        if let Some(u) = props.string("sasl.username") {
            c.sasl_username = Some(u);
        }
        if let Some(p) = props.password("sasl.password") {
            c.sasl_password = Some(p);
        }
        // Amazon MSK's Java plugin names its callback handler here; it is
        // built in (the mechanism and the JAAS line choose what it does).
        if let Some(class) = props.string("sasl.client.callback.handler.class")
            && class != crate::msk_iam::CLIENT_CALLBACK_HANDLER
            && class != crate::msk_iam::OAUTH_LOGIN_CALLBACK_HANDLER
        {
            return Err(ConfigError::invalid_value(
                "sasl.client.callback.handler.class",
                &class,
                &format!(
                    "only Amazon MSK's {} and {} are known (built in)",
                    crate::msk_iam::CLIENT_CALLBACK_HANDLER,
                    crate::msk_iam::OAUTH_LOGIN_CALLBACK_HANDLER
                ),
            ));
        }
        let mut oauth_jaas = None;
        if let Some(jaas) = props.password("sasl.jaas.config") {
            if crate::oauth::is_oauth_jaas(jaas.expose()) {
                oauth_jaas = Some(jaas);
            } else if jaas
                .expose()
                .trim_start()
                .starts_with(crate::msk_iam::LOGIN_MODULE)
            {
                // AWS_MSK_IAM's IAMLoginModule.
                let mut profile = None;
                for (name, value) in crate::oauth::jaas_options("sasl.jaas.config", jaas.expose())?
                {
                    match name.as_str() {
                        "awsProfileName" => profile = Some(value),
                        "awsRoleArn" | "awsRoleSessionName" | "awsStsRegion" => {
                            return Err(crate::oauth::aws_role_unsupported(&name));
                        }
                        // awsDebugCreds and the like change nothing here.
                        _ => {}
                    }
                }
                c.sasl_oauthbearer = Some(OAuthBearerConfig::msk_iam_from_settings(profile));
            } else {
                let (u, p) = parse_jaas("sasl.jaas.config", jaas.expose())?;
                c.sasl_username.get_or_insert(u);
                c.sasl_password.get_or_insert(Secret::from(p));
            }
        }
        // OAUTHBEARER (KIP-255, KIP-768): sasl.oauthbearer.*, sasl.login.*
        // and an OAuthBearerLoginModule JAAS line.
        if let Some(oauth) = crate::oauth::take_from(props, oauth_jaas.as_ref())? {
            c.sasl_oauthbearer = Some(oauth);
        }
        if let Some(tls) = SslProps::take_from(props)? {
            c.tls = Some(tls);
        }
        Ok(())
    }

    /// Checks the settings as a whole: bootstrap servers given, then
    /// [`Self::validate_security`].
    pub fn validate(self) -> Result<Self, ConfigError> {
        if self.bootstrap_servers.is_empty() {
            return Err(ConfigError::Missing("bootstrap.servers".into()));
        }
        self.validate_security()?;
        Ok(self)
    }

    /// Checks that `security.protocol` has what it needs: the `tls` cargo
    /// feature for `SSL` / `SASL_SSL` (without `ssl.*` settings the
    /// operating system's trust store is used, as in Java), credentials for
    /// `SASL_*`.
    pub fn validate_security(&self) -> Result<(), ConfigError> {
        if self.tls_enabled() && !cfg!(feature = "tls") {
            return Err(ConfigError::InvalidValue {
                key: "security.protocol".into(),
                value: format!("{:?}", self.security_protocol).to_ascii_uppercase(),
                reason: crate::connection::TLS_FEATURE_MISSING.into(),
            });
        }
        if self.sasl_enabled()
            && self.sasl_mechanism == SaslMechanism::OAuthBearer
            && self.sasl_oauthbearer.is_none()
        {
            return Err(ConfigError::Missing(
                "sasl.oauthbearer.token.endpoint.url with client credentials (or an OAuthBearerLoginModule sasl.jaas.config)".into(),
            ));
        }
        if self.sasl_enabled() && self.sasl_mechanism == SaslMechanism::AwsMskIam {
            let Some(msk) = self
                .sasl_oauthbearer
                .as_ref()
                .and_then(|o| o.msk_iam_settings())
            else {
                return Err(ConfigError::Missing(format!(
                    "sasl.jaas.config={} required; (AWS_MSK_IAM signs with Amazon MSK IAM credentials)",
                    crate::msk_iam::LOGIN_MODULE
                )));
            };
            msk.signer(&self.bootstrap_servers).map_err(|e| {
                ConfigError::invalid_value("sasl.mechanism", "AWS_MSK_IAM", &e.to_string())
            })?;
        }
        if self.sasl_enabled()
            && self.sasl_mechanism == SaslMechanism::OAuthBearer
            && let Some(msk) = self
                .sasl_oauthbearer
                .as_ref()
                .and_then(|o| o.msk_iam_settings())
        {
            msk.signer(&self.bootstrap_servers).map_err(|e| {
                ConfigError::invalid_value(
                    "sasl.login.callback.handler.class",
                    crate::msk_iam::OAUTH_LOGIN_CALLBACK_HANDLER,
                    &e.to_string(),
                )
            })?;
        }
        if self.sasl_enabled()
            && !matches!(
                self.sasl_mechanism,
                SaslMechanism::OAuthBearer | SaslMechanism::AwsMskIam
            )
            && (self.sasl_username.is_none() || self.sasl_password.is_none())
        {
            return Err(ConfigError::Missing(
                "sasl.username/sasl.password (or sasl.jaas.config)".into(),
            ));
        }
        Ok(())
    }

    fn sasl_enabled(&self) -> bool {
        matches!(
            self.security_protocol,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }

    fn tls_enabled(&self) -> bool {
        matches!(
            self.security_protocol,
            SecurityProtocol::Ssl | SecurityProtocol::SaslSsl
        )
    }

    /// The connection settings derived from this configuration.
    pub fn connection_config(&self) -> ConnectionConfig {
        ConnectionConfig {
            client_id: Some(self.client_id.clone()),
            request_timeout: self.request_timeout,
            connect_timeout: self.connection_setup_timeout,
            connect_timeout_max: self.connection_setup_timeout_max,
            max_frame_size: self.receive_message_max_bytes,
            sasl: if self.sasl_enabled() && self.sasl_mechanism == SaslMechanism::OAuthBearer {
                self.sasl_oauthbearer.as_ref().map(|o| {
                    SaslConfig::oauth_bearer(
                        o.token_provider_for(self.tls.as_ref(), &self.bootstrap_servers),
                    )
                })
            } else if self.sasl_enabled() && self.sasl_mechanism == SaslMechanism::AwsMskIam {
                // Without a signer (caught by validate) the handshake
                // fails with a message naming what is missing.
                Some(
                    match self
                        .sasl_oauthbearer
                        .as_ref()
                        .and_then(|o| o.msk_iam_settings())
                        .map(|m| m.signer(&self.bootstrap_servers))
                    {
                        Some(Ok(signer)) => SaslConfig::aws_msk_iam(signer),
                        _ => SaslConfig::new(SaslMechanism::AwsMskIam, "", ""),
                    },
                )
            } else if self.sasl_enabled() {
                Some(SaslConfig::new(
                    self.sasl_mechanism,
                    self.sasl_username.clone().unwrap_or_default(),
                    self.sasl_password
                        .as_ref()
                        .map(|p| p.expose().to_string())
                        .unwrap_or_default(),
                ))
            } else {
                None
            },
            tls: if self.tls_enabled() {
                Some(self.tls.clone().unwrap_or_default())
            } else {
                None
            },
            ..ConnectionConfig::default()
        }
    }

    /// The cluster settings derived from this configuration.
    pub fn cluster_config(&self) -> ClusterConfig {
        let mut c = ClusterConfig::new(&self.bootstrap_servers.join(","));
        c.connection = self.connection_config();
        c.metadata_max_age = self.metadata_max_age;
        c.metadata_refresh_backoff = self.retry_backoff;
        c.bootstrap_timeout = self.bootstrap_timeout.unwrap_or(Duration::ZERO);
        c
    }
}

/// `security.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    /// No authentication, no TLS.
    #[default]
    Plaintext,
    /// SASL over plain TCP.
    SaslPlaintext,
    /// TLS (cargo feature `tls`).
    Ssl,
    /// SASL over TLS (cargo feature `tls`).
    SaslSsl,
}

/// A configuration error, naming the property it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A property this client does not know.
    #[error("unknown property {0:?}")]
    UnknownKey(String),
    /// A value that does not parse or is out of range.
    #[error("invalid value {value:?} for {key}: {reason}")]
    InvalidValue {
        /// The property.
        key: String,
        /// The value given.
        value: String,
        /// Why it is rejected.
        reason: String,
    },
    /// Settings that cannot be combined (e.g. idempotence with `acks=1`).
    #[error("incompatible setting {key}: {reason}")]
    Incompatible {
        /// The property at fault.
        key: String,
        /// Why.
        reason: String,
    },
    /// A required property is missing.
    #[error("missing required property {0}")]
    Missing(String),
    /// A trust store, key store or private key that cannot be used (a
    /// file that cannot be read, a wrong password, not PKCS#12, no key in
    /// the store, ...).
    #[error("cannot use {key}: {reason}")]
    KeyStore {
        /// The property at fault (the location, or the password that does
        /// not open it).
        key: String,
        /// Why.
        reason: KeyStoreError,
    },
}

impl ConfigError {
    /// A [`ConfigError::InvalidValue`]: `value` of `key` is refused because
    /// of `reason`.
    ///
    /// ```
    /// use kafka_client::ConfigError;
    /// let e = ConfigError::invalid_value("linger.ms", "soon", "not an integer");
    /// assert_eq!(e.key(), "linger.ms");
    /// assert_eq!(e.to_string(), r#"invalid value "soon" for linger.ms: not an integer"#);
    /// ```
    pub fn invalid_value(key: &str, value: &str, reason: &str) -> Self {
        ConfigError::InvalidValue {
            key: key.into(),
            value: value.into(),
            reason: reason.into(),
        }
    }

    /// The property the error is about.
    pub fn key(&self) -> &str {
        match self {
            ConfigError::UnknownKey(k) | ConfigError::Missing(k) => k,
            ConfigError::InvalidValue { key, .. }
            | ConfigError::Incompatible { key, .. }
            | ConfigError::KeyStore { key, .. } => key,
        }
    }
}

/// A setting that must never be printed (a password): `Debug` shows
/// `<redacted>`; [`Secret::expose`] gives the value to the code that needs it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    ///
    /// ```
    /// use kafka_client::Secret;
    /// let s = Secret::new("hunter2");
    /// assert_eq!(format!("{s:?}"), "<redacted>"); // safe to log
    /// assert_eq!(s.expose(), "hunter2"); // for the code that sends it
    /// ```
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_string())
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `bootstrap.servers`: a non-empty list of `host:port`.
fn parse_bootstrap(key: &str, value: &str) -> Result<Vec<String>, ConfigError> {
    let servers = split_list(value);
    if servers.is_empty() {
        return Err(ConfigError::invalid_value(key, value, "empty list"));
    }
    for a in &servers {
        match a.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => {}
            _ => {
                return Err(ConfigError::invalid_value(
                    key,
                    value,
                    "expected host:port[,host:port]",
                ));
            }
        }
    }
    Ok(servers)
}

/// Extracts username and password from a `PlainLoginModule` or
/// `ScramLoginModule` JAAS line.
fn parse_jaas(key: &str, value: &str) -> Result<(String, String), ConfigError> {
    if !(value.contains("PlainLoginModule") || value.contains("ScramLoginModule")) {
        return Err(ConfigError::invalid_value(
            key,
            value,
            "only PlainLoginModule and ScramLoginModule are supported",
        ));
    }
    let field = |name: &str| -> Option<String> {
        let mut rest = value;
        while let Some(i) = rest.find(name) {
            let after = rest[i + name.len()..].trim_start();
            let before_ok = i == 0 || rest.as_bytes()[i - 1].is_ascii_whitespace();
            if before_ok && let Some(a) = after.strip_prefix('=') {
                let a = a.trim_start();
                // Java's JAAS parser takes "double" and 'single' quotes.
                for quote in ['"', '\''] {
                    if let Some(q) = a.strip_prefix(quote) {
                        return q.find(quote).map(|e| q[..e].to_string());
                    }
                }
                let end = a
                    .find(|c: char| c.is_whitespace() || c == ';')
                    .unwrap_or(a.len());
                return Some(a[..end].to_string());
            }
            rest = &rest[i + name.len()..];
        }
        None
    };
    match (field("username"), field("password")) {
        (Some(u), Some(p)) => Ok((u, p)),
        _ => Err(ConfigError::invalid_value(
            key,
            "<redacted>",
            "username and password are required",
        )),
    }
}

impl TlsConfig {
    /// The `ssl.*` keys of `props` under Java's names and rules (trust and
    /// key stores, PEM or PKCS#12, host name verification), as the brokers'
    /// connections read them; `None` when `props` has no `ssl.*` key. For a
    /// service beside the brokers (a schema registry) whose keys carry a
    /// prefix, hand over a bag with the prefix removed.
    ///
    /// ```
    /// use kafka_client::{Properties, TlsConfig};
    /// let mut props = Properties::new([("ssl.endpoint.identification.algorithm", "")]);
    /// assert!(TlsConfig::take_from(&mut props).unwrap().is_some());
    /// assert!(TlsConfig::take_from(&mut Properties::default()).unwrap().is_none());
    /// ```
    pub fn take_from(props: &mut Properties) -> Result<Option<TlsConfig>, ConfigError> {
        SslProps::take_from(props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's defaults: a 30 s request timeout, and this client's id.
    #[test]
    fn new_has_javas_request_timeout_and_this_clients_id() {
        let cfg = ClientConfig::new("broker-1:9092");
        assert_eq!(cfg.request_timeout, Duration::from_secs(30));
        assert_eq!(cfg.client_id, "kafka-eos");
        assert_eq!(cfg.security_protocol, SecurityProtocol::Plaintext);
    }

    /// Without bootstrap servers the configuration is refused, by key.
    #[test]
    fn validate_requires_bootstrap_servers() {
        assert_eq!(
            ClientConfig::new("").validate().unwrap_err().key(),
            "bootstrap.servers"
        );
        let err = ClientConfig::from_properties([("client.id", "orders-app")]).unwrap_err();
        assert_eq!(err, ConfigError::Missing("bootstrap.servers".into()));
        assert_eq!(
            err.to_string(),
            "missing required property bootstrap.servers"
        );
    }

    /// A SASL protocol without a username and password is refused.
    #[test]
    fn sasl_requires_credentials() {
        let mut cfg = ClientConfig::new("broker-1:9092");
        cfg.security_protocol = SecurityProtocol::SaslPlaintext;
        assert!(cfg.validate_security().is_err());
    }

    /// An out-of-range value is reported by its key.
    #[test]
    fn a_bad_value_names_its_key() {
        let err = ClientConfig::from_properties([
            ("bootstrap.servers", "broker-1:9092"),
            ("request.timeout.ms", "-1"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "request.timeout.ms");
    }

    /// The connection settings carry the client id; plaintext needs no SASL
    /// or TLS.
    #[test]
    fn plaintext_connection_config_has_no_sasl_or_tls() {
        let mut cfg = ClientConfig::new("broker-1:9092");
        cfg.client_id = "orders-app".into();
        let conn = cfg.connection_config();
        assert_eq!(conn.client_id.as_deref(), Some("orders-app"));
        assert!(conn.sasl.is_none() && conn.tls.is_none());
    }

    /// `bootstrap.servers` is split at its commas.
    #[test]
    fn cluster_config_splits_the_bootstrap_list() {
        let cfg = ClientConfig::new("broker-1:9092,broker-2:9092");
        assert_eq!(
            cfg.cluster_config().bootstrap,
            ["broker-1:9092", "broker-2:9092"]
        );
    }

    /// Credentials are read from a SCRAM `sasl.jaas.config`.
    #[test]
    fn scram_jaas_config_gives_the_credentials() {
        let cfg = ClientConfig::from_properties([
            ("bootstrap.servers", "broker-1:9092"),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";"#,
            ),
        ])
        .unwrap();
        assert_eq!(cfg.security_protocol, SecurityProtocol::SaslPlaintext);
        assert_eq!(cfg.sasl_username.as_deref(), Some("alice"));
        assert_eq!(
            cfg.sasl_password.as_ref().map(Secret::expose),
            Some("alice-secret")
        );
    }

    /// A secret never prints; `expose` gives it, however it was made.
    #[test]
    fn secrets_are_redacted_but_exposed() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(s.expose(), "hunter2");
        assert_eq!(Secret::from("pw").expose(), "pw");
        assert_eq!(Secret::from(String::from("x")).expose(), "x");
    }
}
