//! [`RegistryConfig`]: the registry client's settings under Confluent's
//! names (`SchemaRegistryClientConfig`, `AbstractKafkaSchemaSerDeConfig`).

use kafka_client::http::HttpUrl;
use kafka_client::oauth::{
    ClientCredentialsConfig, ClientCredentialsProvider, RefreshConfig, RefreshingTokenProvider,
};
use kafka_client::{ConfigError, Properties, Secret, TlsConfig};
use std::time::Duration;

/// How the client authenticates to the registry.
#[derive(Debug, Clone, Default)]
pub enum RegistryAuth {
    /// No `Authorization` header.
    #[default]
    None,
    /// HTTP basic authentication with `user:password`
    /// (`basic.auth.credentials.source=USER_INFO` or `URL`).
    Basic(Secret),
    /// A static bearer token (`bearer.auth.credentials.source=STATIC_TOKEN`).
    Bearer(Secret),
    /// Bearer tokens from an OAuth client-credentials endpoint, refreshed
    /// ahead of expiry (`bearer.auth.credentials.source=OAUTHBEARER`,
    /// `bearer.auth.issuer.endpoint.url`, `bearer.auth.client.id`,
    /// `bearer.auth.client.secret`, `bearer.auth.scope`).
    OAuthBearer(RefreshingTokenProvider),
}

/// The registry client's settings.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// `schema.registry.url`: the registries to ask, in order; the next is
    /// tried when one cannot be reached.
    pub urls: Vec<HttpUrl>,
    /// `basic.auth.*` / `bearer.auth.*`.
    pub auth: RegistryAuth,
    /// Extra headers on every request: `bearer.auth.logical.cluster`
    /// (`target-sr-cluster`) and `bearer.auth.identity.pool.id`
    /// (`Confluent-Identity-Pool-Id`), as Confluent Cloud asks.
    pub extra_headers: Vec<(String, String)>,
    /// `schema.registry.ssl.*`: trust and client certificate for
    /// `https://` registries; `None` trusts the system's roots.
    pub tls: Option<TlsConfig>,
    /// `max.retries` (3): retries of a request answered 5xx or 429, or
    /// that could not reach any URL. A 4xx is never retried.
    pub max_retries: u32,
    /// `retries.wait.ms` (1000): the first wait before a retry; each next
    /// wait doubles.
    pub retries_wait: Duration,
    /// `retries.max.wait.ms` (20000): the longest wait.
    pub retries_max_wait: Duration,
    /// `http.connect.timeout.ms` (60000).
    pub connect_timeout: Duration,
    /// `http.read.timeout.ms` (30000): one request's whole exchange.
    pub request_timeout: Duration,
    /// `max.schemas.per.subject` (1000): entries each per-subject cache
    /// keeps.
    pub max_schemas_per_subject: usize,
    /// `latest.cache.size` (1000): subjects whose latest version is cached.
    pub latest_cache_size: usize,
    /// `latest.cache.ttl.sec` (-1: no expiry): how long a latest version
    /// is trusted.
    pub latest_cache_ttl: Option<Duration>,
}

impl RegistryConfig {
    /// Settings for these registry URLs, everything else at Confluent's
    /// defaults.
    pub fn new(urls: Vec<HttpUrl>) -> Self {
        Self {
            urls,
            auth: RegistryAuth::None,
            extra_headers: Vec::new(),
            tls: None,
            max_retries: 3,
            retries_wait: Duration::from_millis(1000),
            retries_max_wait: Duration::from_millis(20_000),
            connect_timeout: Duration::from_millis(60_000),
            request_timeout: Duration::from_millis(30_000),
            max_schemas_per_subject: 1000,
            latest_cache_size: 1000,
            latest_cache_ttl: None,
        }
    }

    /// Takes the client's keys from `props` (others may read them too).
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::RegistryConfig;
    /// let mut props = Properties::new([
    ///     ("schema.registry.url", "http://sr-1:8081, http://sr-2:8081"),
    ///     ("basic.auth.credentials.source", "USER_INFO"),
    ///     ("basic.auth.user.info", "fred:s3cret"),
    ///     ("max.retries", "5"),
    /// ]);
    /// let config = RegistryConfig::from_properties(&mut props).unwrap();
    /// assert_eq!(config.urls.len(), 2);
    /// assert_eq!(config.max_retries, 5);
    /// assert!(!format!("{config:?}").contains("s3cret"));
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let key = "schema.registry.url";
        let raw = props
            .list(key)
            .filter(|l| !l.is_empty())
            .ok_or_else(|| ConfigError::Missing(key.into()))?;
        let mut urls = Vec::new();
        let mut url_user_info = None;
        for u in &raw {
            let (url, info) = HttpUrl::parse_with_user_info(u).map_err(|e| invalid(key, u, &e))?;
            url_user_info = url_user_info.or(info);
            urls.push(url);
        }
        let mut c = Self::new(urls);
        c.tls = tls(props)?;
        c.auth = auth(props, url_user_info, c.tls.as_ref())?;
        for (key, header) in [
            ("bearer.auth.logical.cluster", "target-sr-cluster"),
            ("bearer.auth.identity.pool.id", "Confluent-Identity-Pool-Id"),
        ] {
            if let Some(v) = props.non_empty(key)? {
                c.extra_headers.push((header.to_string(), v));
            }
        }
        let ms = |props: &mut Properties, key: &str| props.long(key, 0..=i64::from(i32::MAX));
        if let Some(n) = props.int("max.retries", 0..=i32::MAX)? {
            c.max_retries = n as u32;
        }
        if let Some(v) = ms(props, "retries.wait.ms")? {
            c.retries_wait = Duration::from_millis(v as u64);
        }
        if let Some(v) = ms(props, "retries.max.wait.ms")? {
            c.retries_max_wait = Duration::from_millis(v as u64);
        }
        if let Some(v) = ms(props, "http.connect.timeout.ms")? {
            c.connect_timeout = Duration::from_millis(v as u64);
        }
        if let Some(v) = ms(props, "http.read.timeout.ms")? {
            c.request_timeout = Duration::from_millis(v as u64);
        }
        if let Some(v) = props.int("max.schemas.per.subject", 1..=i32::MAX)? {
            c.max_schemas_per_subject = v as usize;
        }
        if let Some(v) = props.int("latest.cache.size", 1..=i32::MAX)? {
            c.latest_cache_size = v as usize;
        }
        c.latest_cache_ttl = latest_cache_ttl(props)?.flatten();
        Ok(c)
    }
}

/// `latest.cache.ttl.sec`: `Some(None)` for -1 (no expiry); read by the
/// client and the serializer settings alike.
pub(crate) fn latest_cache_ttl(
    props: &mut Properties,
) -> Result<Option<Option<Duration>>, ConfigError> {
    Ok(props
        .long("latest.cache.ttl.sec", -1..=i64::MAX)?
        .map(|s| (s >= 0).then(|| Duration::from_secs(s as u64))))
}

/// The first of `keys` given (Confluent's names, then the older
/// `schema.registry.`-prefixed aliases); every one is marked read.
fn first_string(props: &mut Properties, keys: &[&str]) -> Option<String> {
    keys.iter().fold(None, |found, k| {
        let v = props.string(k);
        found.or(v)
    })
}

fn auth(
    props: &mut Properties,
    url_user_info: Option<String>,
    tls: Option<&TlsConfig>,
) -> Result<RegistryAuth, ConfigError> {
    let basic_source = props.one_of_ignoring_case(
        "basic.auth.credentials.source",
        &[("USER_INFO", "USER_INFO"), ("URL", "URL")],
    )?;
    let user_info = first_string(
        props,
        &[
            "basic.auth.user.info",
            "schema.registry.basic.auth.user.info",
        ],
    );
    let bearer_source = props.one_of_ignoring_case(
        "bearer.auth.credentials.source",
        &[
            ("STATIC_TOKEN", "STATIC_TOKEN"),
            ("OAUTHBEARER", "OAUTHBEARER"),
        ],
    )?;
    let token = props.password("bearer.auth.token");
    let issuer = props.non_empty("bearer.auth.issuer.endpoint.url")?;
    let client_id = props.non_empty("bearer.auth.client.id")?;
    let client_secret = props.password("bearer.auth.client.secret");
    let scope = props.non_empty("bearer.auth.scope")?;
    let sub_claim = props.non_empty("bearer.auth.sub.claim.name")?;
    if basic_source.is_some() && bearer_source.is_some() {
        return Err(ConfigError::Incompatible {
            key: "bearer.auth.credentials.source".into(),
            reason: "set either basic.auth.credentials.source or bearer.auth.credentials.source"
                .into(),
        });
    }
    match (basic_source, bearer_source) {
        (Some("URL"), _) => url_user_info.map(|u| RegistryAuth::Basic(Secret::new(u))).ok_or_else(
            || ConfigError::Missing("user info in schema.registry.url (http://user:password@host), for basic.auth.credentials.source=URL".into()),
        ),
        (Some(_), _) => {
            let info = user_info
                .ok_or_else(|| ConfigError::Missing("basic.auth.user.info".into()))?;
            if !info.contains(':') {
                return Err(invalid("basic.auth.user.info", "<redacted>", "expected user:password"));
            }
            Ok(RegistryAuth::Basic(Secret::new(info)))
        }
        (None, Some("OAUTHBEARER")) => {
            let missing = |k: &str| ConfigError::Missing(format!("{k}, for bearer.auth.credentials.source=OAUTHBEARER"));
            let url = issuer.ok_or_else(|| missing("bearer.auth.issuer.endpoint.url"))?;
            HttpUrl::parse(&url).map_err(|e| invalid("bearer.auth.issuer.endpoint.url", &url, &e))?;
            let id = client_id.ok_or_else(|| missing("bearer.auth.client.id"))?;
            let secret = client_secret.ok_or_else(|| missing("bearer.auth.client.secret"))?;
            let mut cc = ClientCredentialsConfig::new(url, id, secret.expose());
            cc.scope = scope;
            cc.tls = tls.cloned();
            if let Some(sub) = sub_claim {
                cc.sub_claim_name = sub;
            }
            Ok(RegistryAuth::OAuthBearer(RefreshingTokenProvider::new(
                ClientCredentialsProvider::new(cc),
                RefreshConfig::default(),
            )))
        }
        (None, Some(_)) => token
            .map(RegistryAuth::Bearer)
            .ok_or_else(|| ConfigError::Missing("bearer.auth.token".into())),
        (None, None) => Ok(RegistryAuth::None),
    }
}

/// `schema.registry.ssl.*`, read by the brokers' `ssl.*` rules.
fn tls(props: &mut Properties) -> Result<Option<TlsConfig>, ConfigError> {
    const PREFIX: &str = "schema.registry.";
    let keys: Vec<String> = props
        .keys()
        .filter(|k| k.starts_with("schema.registry.ssl."))
        .map(str::to_string)
        .collect();
    if keys.is_empty() {
        return Ok(None);
    }
    let mut ssl = Properties::default();
    for k in keys {
        if let Some(v) = props.string(&k) {
            ssl.insert(&k[PREFIX.len()..], &v);
        }
    }
    let rename = |e: ConfigError| match e {
        ConfigError::UnknownKey(k) => ConfigError::UnknownKey(format!("{PREFIX}{k}")),
        ConfigError::InvalidValue { key, value, reason } => ConfigError::InvalidValue {
            key: format!("{PREFIX}{key}"),
            value,
            reason,
        },
        ConfigError::Incompatible { key, reason } => ConfigError::Incompatible {
            key: format!("{PREFIX}{key}"),
            reason,
        },
        ConfigError::KeyStore { key, reason } => ConfigError::KeyStore {
            key: format!("{PREFIX}{key}"),
            reason,
        },
        e => e,
    };
    let tls = TlsConfig::take_from(&mut ssl).map_err(rename)?;
    ssl.finish().map_err(rename)?;
    Ok(tls)
}

fn invalid(key: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<RegistryConfig, ConfigError> {
        let mut props = Properties::new(pairs.iter().copied());
        let c = RegistryConfig::from_properties(&mut props)?;
        props.finish()?;
        Ok(c)
    }

    #[test]
    fn defaults_are_confluents() {
        let c = config(&[("schema.registry.url", "http://sr:8081")]).unwrap();
        assert_eq!(c.urls[0].port, 8081);
        assert_eq!(c.max_retries, 3);
        assert_eq!(c.retries_wait, Duration::from_secs(1));
        assert_eq!(c.retries_max_wait, Duration::from_secs(20));
        assert_eq!(c.max_schemas_per_subject, 1000);
        assert_eq!(c.latest_cache_ttl, None);
        assert!(matches!(c.auth, RegistryAuth::None));
        assert!(c.tls.is_none());
    }

    #[test]
    fn urls_are_required_and_checked() {
        assert_eq!(config(&[]).unwrap_err().key(), "schema.registry.url");
        assert_eq!(
            config(&[("schema.registry.url", "sr:8081")])
                .unwrap_err()
                .key(),
            "schema.registry.url"
        );
    }

    #[test]
    fn credentials_from_user_info_url_or_token() {
        let c = config(&[
            ("schema.registry.url", "http://sr"),
            ("basic.auth.credentials.source", "USER_INFO"),
            ("basic.auth.user.info", "fred:pw"),
        ])
        .unwrap();
        assert!(matches!(c.auth, RegistryAuth::Basic(s) if s.expose() == "fred:pw"));
        let c = config(&[
            ("schema.registry.url", "http://fred:pw@sr"),
            ("basic.auth.credentials.source", "URL"),
        ])
        .unwrap();
        assert!(matches!(c.auth, RegistryAuth::Basic(s) if s.expose() == "fred:pw"));
        let c = config(&[
            ("schema.registry.url", "http://sr"),
            ("bearer.auth.credentials.source", "STATIC_TOKEN"),
            ("bearer.auth.token", "tok"),
        ])
        .unwrap();
        assert!(matches!(c.auth, RegistryAuth::Bearer(s) if s.expose() == "tok"));
        let c = config(&[
            ("schema.registry.url", "http://sr"),
            ("bearer.auth.credentials.source", "OAUTHBEARER"),
            ("bearer.auth.issuer.endpoint.url", "http://idp/token"),
            ("bearer.auth.client.id", "sr-client"),
            ("bearer.auth.client.secret", "hunter2"),
            ("bearer.auth.scope", "registry"),
            ("bearer.auth.logical.cluster", "lsrc-1"),
            ("bearer.auth.identity.pool.id", "pool-1"),
        ])
        .unwrap();
        assert!(matches!(c.auth, RegistryAuth::OAuthBearer(_)));
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(c.extra_headers.len(), 2);
        let missing = config(&[
            ("schema.registry.url", "http://sr"),
            ("bearer.auth.credentials.source", "OAUTHBEARER"),
            ("bearer.auth.issuer.endpoint.url", "http://idp/token"),
        ]);
        assert!(
            missing
                .unwrap_err()
                .key()
                .starts_with("bearer.auth.client.id")
        );
        let missing = config(&[
            ("schema.registry.url", "http://sr"),
            ("basic.auth.credentials.source", "USER_INFO"),
        ]);
        assert_eq!(missing.unwrap_err().key(), "basic.auth.user.info");
        let unknown = config(&[
            ("schema.registry.url", "http://sr"),
            ("basic.auth.credentials.source", "SASL_INHERIT"),
        ]);
        assert_eq!(unknown.unwrap_err().key(), "basic.auth.credentials.source");
    }

    #[test]
    fn retries_timeouts_and_caches() {
        let c = config(&[
            ("schema.registry.url", "http://a,http://b"),
            ("max.retries", "0"),
            ("retries.wait.ms", "10"),
            ("retries.max.wait.ms", "100"),
            ("http.read.timeout.ms", "500"),
            ("max.schemas.per.subject", "5"),
            ("latest.cache.ttl.sec", "60"),
        ])
        .unwrap();
        assert_eq!(c.urls.len(), 2);
        assert_eq!(c.max_retries, 0);
        assert_eq!(c.retries_wait, Duration::from_millis(10));
        assert_eq!(c.request_timeout, Duration::from_millis(500));
        assert_eq!(c.max_schemas_per_subject, 5);
        assert_eq!(c.latest_cache_ttl, Some(Duration::from_secs(60)));
        assert_eq!(
            config(&[("schema.registry.url", "http://a"), ("max.retries", "-1")])
                .unwrap_err()
                .key(),
            "max.retries"
        );
    }

    #[test]
    fn ssl_keys_are_the_brokers_under_the_registry_prefix() {
        let e = config(&[
            ("schema.registry.url", "https://sr"),
            (
                "schema.registry.ssl.truststore.location",
                "/nonexistent/ca.pem",
            ),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "schema.registry.ssl.truststore.location", "{e}");
        let e = config(&[
            ("schema.registry.url", "https://sr"),
            ("schema.registry.ssl.bogus", "x"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "schema.registry.ssl.bogus");
        let c = config(&[
            ("schema.registry.url", "https://sr"),
            ("schema.registry.ssl.endpoint.identification.algorithm", ""),
        ])
        .unwrap();
        assert!(c.tls.is_some());
    }
}
