//! The OAUTHBEARER settings: where tokens come from and how they are
//! refreshed, from Java's `sasl.oauthbearer.*`, `sasl.login.*` and
//! `OAuthBearerLoginModule` JAAS options.

use super::oidc::{ClientCredentialsConfig, ClientCredentialsProvider};
use super::refresh::{RefreshConfig, RefreshingTokenProvider};
use super::token::{SharedTokenProvider, TokenProvider};
use super::unsecured::UnsecuredTokenProvider;
use crate::config::{ConfigError, Properties, Secret};
use crate::connection::TlsConfig;
use crate::msk_iam::{MskIamSettings, MskIamSigner, MskIamTokenProvider, Unsignable};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The JAAS login module of OAUTHBEARER.
pub(crate) const LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

/// Java's login callback handler for OIDC (`sasl.login.callback.handler.class`).
const LOGIN_CALLBACK_HANDLER: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler";

/// Where the tokens come from.
#[derive(Debug, Clone)]
enum Source {
    /// An application's provider.
    Provider(SharedTokenProvider),
    /// OIDC client credentials (KIP-768).
    ClientCredentials(Box<ClientCredentialsConfig>),
    /// Unsigned development tokens.
    Unsecured(UnsecuredTokenProvider),
    /// Amazon MSK IAM tokens; also the signer of the `AWS_MSK_IAM`
    /// mechanism.
    MskIam(MskIamSettings),
}

/// The OAUTHBEARER settings of a client: a token source and the refresh
/// rules. Clones share one provider, so that every connection of a client
/// uses (and refreshes) the same tokens.
#[derive(Debug, Clone)]
pub struct OAuthBearerConfig {
    /// Where tokens come from.
    source: Source,
    /// `sasl.login.refresh.*`.
    refresh: RefreshConfig,
    /// The refreshing provider, made on first use.
    built: Arc<OnceLock<SharedTokenProvider>>,
}

impl OAuthBearerConfig {
    fn with_source(source: Source) -> Self {
        Self {
            source,
            refresh: RefreshConfig::default(),
            built: Arc::default(),
        }
    }

    /// Tokens from an application's provider, refreshed ahead of expiry.
    ///
    /// ```
    /// use kafka_client::oauth::{OAuthBearerConfig, UnsecuredTokenProvider};
    /// use kafka_client::{ClientConfig, SaslMechanism, SecurityProtocol};
    /// let mut cfg = ClientConfig::new("broker-1:9092");
    /// cfg.security_protocol = SecurityProtocol::SaslPlaintext;
    /// cfg.sasl_mechanism = SaslMechanism::OAuthBearer;
    /// cfg.sasl_oauthbearer = Some(OAuthBearerConfig::provider(UnsecuredTokenProvider::new("alice")));
    /// assert!(cfg.validate().is_ok());
    /// ```
    pub fn provider(provider: impl TokenProvider) -> Self {
        Self::with_source(Source::Provider(SharedTokenProvider::new(provider)))
    }

    /// OIDC client credentials (KIP-768).
    pub fn client_credentials(config: ClientCredentialsConfig) -> Self {
        Self::with_source(Source::ClientCredentials(Box::new(config)))
    }

    /// Unsigned development tokens.
    pub fn unsecured(provider: UnsecuredTokenProvider) -> Self {
        Self::with_source(Source::Unsecured(provider))
    }

    /// Amazon MSK IAM tokens signed by `signer` (SASL/OAUTHBEARER, as
    /// AWS's `aws-msk-iam-sasl-signer` libraries make them), signed again
    /// ahead of their 900 s expiry by the refresh rules. With
    /// `sasl.mechanism=AWS_MSK_IAM` the same signer signs that mechanism's
    /// message instead.
    ///
    /// ```
    /// use kafka_client::oauth::OAuthBearerConfig;
    /// use kafka_client::{ClientConfig, MskIamSigner, SaslMechanism, SecurityProtocol};
    /// let mut cfg = ClientConfig::new("b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098");
    /// cfg.security_protocol = SecurityProtocol::SaslSsl;
    /// cfg.sasl_mechanism = SaslMechanism::OAuthBearer;
    /// cfg.sasl_oauthbearer = Some(OAuthBearerConfig::msk_iam(MskIamSigner::new("eu-west-1").unwrap()));
    /// assert!(cfg.validate().is_ok());
    /// ```
    pub fn msk_iam(signer: MskIamSigner) -> Self {
        Self::with_source(Source::MskIam(MskIamSettings {
            signer: Some(signer),
            profile: None,
        }))
    }

    /// MSK IAM with the region of the broker host names (or `AWS_REGION`)
    /// and, when given, the credentials of one shared-files profile.
    pub(crate) fn msk_iam_from_settings(profile: Option<String>) -> Self {
        Self::with_source(Source::MskIam(MskIamSettings {
            signer: None,
            profile,
        }))
    }

    /// The MSK IAM settings, when the tokens are MSK's.
    pub(crate) fn msk_iam_settings(&self) -> Option<&MskIamSettings> {
        match &self.source {
            Source::MskIam(m) => Some(m),
            _ => None,
        }
    }

    /// Sets the refresh rules.
    pub fn refresh(mut self, refresh: RefreshConfig) -> Self {
        self.refresh = refresh;
        self.built = Arc::default();
        self
    }

    /// The refresh rules.
    pub fn refresh_config(&self) -> RefreshConfig {
        self.refresh
    }

    /// The provider every connection asks: made on the first call (with
    /// `tls` as the trust of an https token endpoint when the settings name
    /// none), the same one afterwards.
    pub fn token_provider(&self, tls: Option<&TlsConfig>) -> SharedTokenProvider {
        self.token_provider_for(tls, &[])
    }

    /// [`Self::token_provider`] for a cluster reached through `bootstrap`
    /// (where MSK IAM finds its region).
    pub(crate) fn token_provider_for(
        &self,
        tls: Option<&TlsConfig>,
        bootstrap: &[String],
    ) -> SharedTokenProvider {
        self.built
            .get_or_init(|| {
                let refresh = self.refresh;
                match &self.source {
                    Source::Provider(p) => {
                        SharedTokenProvider::new(RefreshingTokenProvider::new(p.clone(), refresh))
                    }
                    Source::ClientCredentials(c) => {
                        let mut c = (**c).clone();
                        if c.tls.is_none() {
                            c.tls = tls.cloned();
                        }
                        SharedTokenProvider::new(RefreshingTokenProvider::new(
                            ClientCredentialsProvider::new(c),
                            refresh,
                        ))
                    }
                    Source::Unsecured(u) => {
                        SharedTokenProvider::new(RefreshingTokenProvider::new(u.clone(), refresh))
                    }
                    Source::MskIam(m) => match m.signer(bootstrap) {
                        Ok(signer) => SharedTokenProvider::new(RefreshingTokenProvider::new(
                            MskIamTokenProvider::new(signer),
                            refresh,
                        )),
                        Err(e) => SharedTokenProvider::new(Unsignable(e)),
                    },
                }
            })
            .clone()
    }
}

/// Is `jaas` an `OAuthBearerLoginModule` line?
pub(crate) fn is_oauth_jaas(jaas: &str) -> bool {
    jaas.trim_start().starts_with(LOGIN_MODULE)
}

/// The options of a JAAS line `<module> required k="v" k2=v2 ;`.
pub(crate) fn jaas_options(key: &str, jaas: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let bad = |why: &str| ConfigError::InvalidValue {
        key: key.into(),
        value: "<redacted>".into(),
        reason: why.into(),
    };
    let mut rest = jaas.trim();
    let module_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    rest = rest[module_end..].trim_start();
    let flag_end = rest
        .find(|c: char| c.is_whitespace() || c == ';')
        .unwrap_or(rest.len());
    let flag = &rest[..flag_end];
    if !["required", "requisite", "sufficient", "optional"].contains(&flag) {
        return Err(bad("expected `<LoginModule> required <options> ;`"));
    }
    rest = rest[flag_end..].trim_start();
    let mut options = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(';') {
            break;
        }
        let eq = rest.find('=').ok_or_else(|| bad("an option without ="))?;
        let name = rest[..eq].trim().to_string();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(bad("an option without a name"));
        }
        rest = rest[eq + 1..].trim_start();
        // Java's JAAS parser takes "double" and 'single' quotes.
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        let value = if let Some(quote) = quote {
            let q = &rest[1..];
            let end = q.find(quote).ok_or_else(|| bad("an unclosed quote"))?;
            let v = q[..end].to_string();
            rest = &q[end + 1..];
            v
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == ';')
                .unwrap_or(rest.len());
            let v = rest[..end].to_string();
            rest = &rest[end..];
            v
        };
        options.push((name, value));
    }
    Ok(options)
}

/// The Java plugin's role options: assuming a role needs AWS STS, which
/// this client does not call.
pub(crate) fn aws_role_unsupported(option: &str) -> ConfigError {
    ConfigError::invalid_value(
        "sasl.jaas.config",
        option,
        "assuming an IAM role (awsRoleArn, awsRoleSessionName, awsStsRegion) is not supported: \
         assume it outside the client (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and \
         AWS_SESSION_TOKEN, or a credentials profile with awsProfileName)",
    )
}

/// A `double` setting within `range`.
fn take_f64(
    props: &mut Properties,
    key: &str,
    range: std::ops::RangeInclusive<f64>,
) -> Result<Option<f64>, ConfigError> {
    props
        .string(key)
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| range.contains(x))
                .ok_or_else(|| {
                    ConfigError::invalid_value(
                        key,
                        &v,
                        &format!("expected a number in [{}, {}]", range.start(), range.end()),
                    )
                })
        })
        .transpose()
}

fn take_seconds(
    props: &mut Properties,
    key: &str,
    max: i64,
) -> Result<Option<Duration>, ConfigError> {
    Ok(props
        .long(key, 0..=max)?
        .map(|s| Duration::from_secs(s as u64)))
}

/// Takes the OAUTHBEARER keys from `props` (and the options of an
/// `OAuthBearerLoginModule` JAAS line): `None` when none is given.
pub(crate) fn take_from(
    props: &mut Properties,
    jaas: Option<&Secret>,
) -> Result<Option<OAuthBearerConfig>, ConfigError> {
    const JAAS: &str = "sasl.jaas.config";
    let mut given = jaas.is_some();
    let mut refresh = RefreshConfig::default();
    if let Some(v) = take_f64(props, "sasl.login.refresh.window.factor", 0.5..=1.0)? {
        refresh.window_factor = v;
        given = true;
    }
    if let Some(v) = take_f64(props, "sasl.login.refresh.window.jitter", 0.0..=0.25)? {
        refresh.window_jitter = v;
        given = true;
    }
    if let Some(v) = take_seconds(props, "sasl.login.refresh.min.period.seconds", 900)? {
        refresh.min_period = v;
        given = true;
    }
    if let Some(v) = take_seconds(props, "sasl.login.refresh.buffer.seconds", 3600)? {
        refresh.buffer = v;
        given = true;
    }
    let int_max = i64::from(i32::MAX);
    let connect_timeout = props.millis("sasl.login.connect.timeout.ms", 0..=int_max)?;
    let read_timeout = props.millis("sasl.login.read.timeout.ms", 0..=int_max)?;
    let retry_backoff = props.millis("sasl.login.retry.backoff.ms", 0..=i64::MAX)?;
    let retry_backoff_max = props.millis("sasl.login.retry.backoff.max.ms", 0..=i64::MAX)?;
    let mut msk_iam = false;
    if let Some(class) = props.string("sasl.login.callback.handler.class") {
        if class == crate::msk_iam::OAUTH_LOGIN_CALLBACK_HANDLER {
            msk_iam = true;
        } else if class != LOGIN_CALLBACK_HANDLER {
            return Err(ConfigError::invalid_value(
                "sasl.login.callback.handler.class",
                &class,
                &format!(
                    "only {LOGIN_CALLBACK_HANDLER} (OIDC) and {} (Amazon MSK IAM) are known; implement kafka_client::oauth::TokenProvider for other token sources",
                    crate::msk_iam::OAUTH_LOGIN_CALLBACK_HANDLER
                ),
            ));
        }
    }
    let url = props.non_empty("sasl.oauthbearer.token.endpoint.url")?;
    let mut client_id = props.non_empty("sasl.oauthbearer.client.credentials.client.id")?;
    let mut client_secret = props.password("sasl.oauthbearer.client.credentials.client.secret");
    let mut scope = props.string("sasl.oauthbearer.scope");
    let sub_claim = props.non_empty("sasl.oauthbearer.sub.claim.name")?;
    let _scope_claim = props.non_empty("sasl.oauthbearer.scope.claim.name")?;
    let urlencode = props.bool("sasl.oauthbearer.header.urlencode")?;
    let mut extensions = BTreeMap::new();
    if let Some(list) = props.list("sasl.oauthbearer.extensions") {
        for pair in list {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                ConfigError::invalid_value(
                    "sasl.oauthbearer.extensions",
                    &pair,
                    "expected key=value[,key=value]",
                )
            })?;
            extensions.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    // JAAS options: the 4.1+ keys above take precedence.
    let mut unsecured: Option<UnsecuredTokenProvider> = None;
    let mut unsecured_lifetime = None;
    let mut unsecured_claims = Vec::new();
    let mut unsecured_extensions = BTreeMap::new();
    let mut unsecured_sub = None;
    let mut aws_profile = None;
    if let Some(jaas) = jaas {
        for (name, value) in jaas_options(JAAS, jaas.expose())? {
            match name.as_str() {
                "clientId" => {
                    client_id.get_or_insert(value);
                }
                "clientSecret" => {
                    client_secret.get_or_insert(Secret::from(value));
                }
                "scope" => {
                    scope.get_or_insert(value);
                }
                "unsecuredLoginStringClaim_sub" => unsecured_sub = Some(value),
                "awsProfileName" => aws_profile = Some(value),
                "awsRoleArn" | "awsRoleSessionName" | "awsStsRegion" => {
                    return Err(aws_role_unsupported(&name));
                }
                "unsecuredLoginLifetimeSeconds" => {
                    let secs: u64 = value.parse().map_err(|_| {
                        ConfigError::invalid_value(
                            JAAS,
                            &value,
                            "unsecuredLoginLifetimeSeconds is not a number",
                        )
                    })?;
                    unsecured_lifetime = Some(Duration::from_secs(secs));
                }
                n => {
                    if let Some(claim) = n.strip_prefix("unsecuredLoginStringClaim_") {
                        unsecured_claims.push((claim.to_string(), value));
                    } else if let Some(ext) = n.strip_prefix("unsecuredLoginExtension_") {
                        unsecured_extensions.insert(ext.to_string(), value);
                    } else if let Some(ext) = n.strip_prefix("extension_") {
                        extensions.insert(ext.to_string(), value);
                    }
                    // Other options (Java's ssl.* inside the JAAS line,
                    // unsecuredLoginNumberClaim_*, ...) are not used.
                }
            }
        }
        if let Some(sub) = unsecured_sub {
            let mut u = UnsecuredTokenProvider::new(sub);
            if let Some(l) = unsecured_lifetime {
                u = u.lifetime(l);
            }
            for (k, v) in unsecured_claims {
                u = u.claim(k, v);
            }
            for (k, v) in unsecured_extensions {
                u = u.extension(k, v);
            }
            unsecured = Some(u);
        }
    }
    for (k, v) in &extensions {
        super::message::check_extension(k, v)
            .map_err(|e| ConfigError::invalid_value("sasl.oauthbearer.extensions", v, &e.0))?;
    }
    let source = match (url, unsecured) {
        _ if msk_iam => Source::MskIam(MskIamSettings {
            signer: None,
            profile: aws_profile,
        }),
        (Some(url), _) => {
            let is_file = url.starts_with("file:");
            if !is_file {
                crate::http::HttpUrl::parse(&url).map_err(|e| {
                    ConfigError::invalid_value("sasl.oauthbearer.token.endpoint.url", &url, &e)
                })?;
            }
            let (id, secret) = match (client_id, client_secret) {
                (Some(id), Some(secret)) => (id, secret),
                _ if is_file => (String::new(), Secret::new("")),
                _ => {
                    return Err(ConfigError::Missing(
                        "sasl.oauthbearer.client.credentials.client.id and .client.secret (or clientId/clientSecret in sasl.jaas.config)".into(),
                    ));
                }
            };
            let mut c = ClientCredentialsConfig::new(url, id, secret.expose());
            c.scope = scope;
            c.extensions = extensions;
            // Settings not given keep the defaults of `new`.
            c.sub_claim_name = sub_claim.unwrap_or(c.sub_claim_name);
            c.header_urlencode = urlencode.unwrap_or(c.header_urlencode);
            c.connect_timeout = connect_timeout.unwrap_or(c.connect_timeout);
            c.read_timeout = read_timeout.unwrap_or(c.read_timeout);
            c.retry_backoff = retry_backoff.unwrap_or(c.retry_backoff);
            c.retry_backoff_max = retry_backoff_max.unwrap_or(c.retry_backoff_max);
            Source::ClientCredentials(Box::new(c))
        }
        (None, Some(u)) => Source::Unsecured(u),
        (None, None) => {
            if !given && client_id.is_none() && client_secret.is_none() {
                return Ok(None);
            }
            return Err(ConfigError::Missing(
                "sasl.oauthbearer.token.endpoint.url (or unsecuredLoginStringClaim_sub in sasl.jaas.config)".into(),
            ));
        }
    };
    Ok(Some(
        OAuthBearerConfig::with_source(source).refresh(refresh),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(pairs: &[(&str, &str)]) -> Result<Option<OAuthBearerConfig>, ConfigError> {
        let mut props = Properties::new(pairs.iter().copied());
        let jaas = props.password("sasl.jaas.config");
        let r = take_from(&mut props, jaas.as_ref());
        if r.is_ok() {
            props.finish()?;
        }
        r
    }

    /// Java 4.1+'s keys give a client-credentials source.
    #[test]
    fn kip_768_keys() {
        let c = take(&[
            (
                "sasl.oauthbearer.token.endpoint.url",
                "https://idp.example/token",
            ),
            ("sasl.oauthbearer.client.credentials.client.id", "orders"),
            (
                "sasl.oauthbearer.client.credentials.client.secret",
                "s3cret",
            ),
            ("sasl.oauthbearer.scope", "kafka"),
            ("sasl.login.refresh.window.factor", "0.5"),
            ("sasl.login.refresh.window.jitter", "0"),
            ("sasl.login.refresh.min.period.seconds", "1"),
            ("sasl.login.refresh.buffer.seconds", "1"),
            ("sasl.login.connect.timeout.ms", "2000"),
            ("sasl.login.read.timeout.ms", "3000"),
            ("sasl.login.retry.backoff.ms", "50"),
            ("sasl.login.retry.backoff.max.ms", "500"),
            ("sasl.login.callback.handler.class", LOGIN_CALLBACK_HANDLER),
        ])
        .unwrap()
        .unwrap();
        let Source::ClientCredentials(cc) = &c.source else {
            panic!("{c:?}")
        };
        assert_eq!(cc.client_id, "orders");
        assert_eq!(cc.client_secret.expose(), "s3cret");
        assert_eq!(cc.scope.as_deref(), Some("kafka"));
        assert_eq!(cc.read_timeout, Duration::from_secs(3));
        assert_eq!(cc.retry_backoff_max, Duration::from_millis(500));
        assert_eq!(c.refresh.window_factor, 0.5);
        assert_eq!(c.refresh.min_period, Duration::from_secs(1));
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    /// The older JAAS form, with an extension.
    #[test]
    fn jaas_client_credentials() {
        let c = take(&[
            ("sasl.oauthbearer.token.endpoint.url", "http://127.0.0.1:8080/token"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="orders" clientSecret="s3 cret" scope="a b" extension_logicalCluster="lkc-1";"#,
            ),
        ])
        .unwrap()
        .unwrap();
        let Source::ClientCredentials(cc) = &c.source else {
            panic!()
        };
        assert_eq!(
            (
                cc.client_id.as_str(),
                cc.client_secret.expose(),
                cc.scope.as_deref()
            ),
            ("orders", "s3 cret", Some("a b"))
        );
        assert_eq!(
            cc.extensions.get("logicalCluster").map(String::as_str),
            Some("lkc-1")
        );
    }

    /// The new keys win over the JAAS options.
    #[test]
    fn new_keys_take_precedence_over_jaas() {
        let c = take(&[
            ("sasl.oauthbearer.token.endpoint.url", "http://h/t"),
            ("sasl.oauthbearer.client.credentials.client.id", "new"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="old" clientSecret="s";"#,
            ),
        ])
        .unwrap()
        .unwrap();
        let Source::ClientCredentials(cc) = &c.source else {
            panic!()
        };
        assert_eq!(cc.client_id, "new");
    }

    /// `unsecuredLoginStringClaim_sub` gives unsecured tokens.
    #[test]
    fn unsecured_jaas() {
        let c = take(&[(
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds=60;"#,
        )])
        .unwrap()
        .unwrap();
        assert!(matches!(c.source, Source::Unsecured(_)), "{c:?}");
    }

    /// Bad values and missing pieces name their key.
    #[test]
    fn bad_settings_name_their_key() {
        let e = take(&[("sasl.login.refresh.window.factor", "0.2")]).unwrap_err();
        assert_eq!(e.key(), "sasl.login.refresh.window.factor");
        let e = take(&[("sasl.oauthbearer.token.endpoint.url", "ftp://x")]).unwrap_err();
        assert_eq!(e.key(), "sasl.oauthbearer.token.endpoint.url");
        let e = take(&[("sasl.oauthbearer.token.endpoint.url", "http://x/t")]).unwrap_err();
        assert!(matches!(e, ConfigError::Missing(_)), "{e}");
        let e = take(&[("sasl.login.callback.handler.class", "com.example.Mine")]).unwrap_err();
        assert_eq!(e.key(), "sasl.login.callback.handler.class");
        assert!(take(&[]).unwrap().is_none());
    }

    #[test]
    fn jaas_options_parse_quoted_and_bare_values() {
        let o = jaas_options("k", r#"x.Module required a="1 2" b=3 c="";"#).unwrap();
        assert_eq!(
            o,
            [
                ("a".into(), "1 2".into()),
                ("b".into(), "3".into()),
                ("c".into(), String::new())
            ]
        );
        assert!(jaas_options("k", "x.Module required a=\"open;").is_err());
        assert!(jaas_options("k", "x.Module maybe;").is_err());
    }
}
