//! The signer as a source of OAUTHBEARER tokens, where its region comes
//! from (the broker host names, else `AWS_REGION`), and the settings the
//! Java plugin `aws-msk-iam-auth` documents.

use super::{AwsCredentials, MSK_TOKEN_LIFETIME, MskIamError, MskIamSigner};
use crate::oauth::{Token, TokenError, TokenProvider};
use std::time::SystemTime;

/// The login callback handler MSK documents for SASL/OAUTHBEARER in Java
/// (`sasl.login.callback.handler.class`).
pub(crate) const OAUTH_LOGIN_CALLBACK_HANDLER: &str =
    "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler";

/// The client callback handler MSK documents for `AWS_MSK_IAM`
/// (`sasl.client.callback.handler.class`).
pub(crate) const CLIENT_CALLBACK_HANDLER: &str =
    "software.amazon.msk.auth.iam.IAMClientCallbackHandler";

/// The JAAS login module of `AWS_MSK_IAM`.
pub(crate) const LOGIN_MODULE: &str = "software.amazon.msk.auth.iam.IAMLoginModule";

/// The principal a token names: MSK maps the signature to an IAM identity
/// itself; the client only shows this name in its messages.
const PRINCIPAL: &str = "aws-msk-iam";

/// Where the signer's region and credentials come from, as the settings
/// give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MskIamSettings {
    /// A signer made by the application (its region is fixed).
    pub(crate) signer: Option<MskIamSigner>,
    /// The JAAS option `awsProfileName`: credentials of this profile of the
    /// shared files only.
    pub(crate) profile: Option<String>,
}

impl MskIamSettings {
    /// The signer for a cluster reached through `bootstrap` (`host:port`
    /// entries): the application's, else one for the region named by the
    /// first MSK broker host name, else `AWS_REGION` / `AWS_DEFAULT_REGION`.
    pub(crate) fn signer(&self, bootstrap: &[String]) -> Result<MskIamSigner, MskIamError> {
        if let Some(s) = &self.signer {
            return Ok(s.clone());
        }
        let region = bootstrap
            .iter()
            .find_map(|b| region_from_host(b))
            .or_else(|| env_region(&|name| std::env::var(name).ok()))
            .ok_or(MskIamError::NoRegion)?;
        let signer = MskIamSigner::new(region)?;
        Ok(match &self.profile {
            Some(p) => signer.profile(p.clone()),
            None => signer,
        })
    }
}

/// `AWS_REGION`, else `AWS_DEFAULT_REGION` (as `var` gives them).
pub(crate) fn env_region(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    ["AWS_REGION", "AWS_DEFAULT_REGION"].iter().find_map(|n| {
        var(n)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// The AWS region in an MSK broker address (`host[:port]`): the label
/// before `.amazonaws.com` (or the China partition's `.amazonaws.com.cn`),
/// as in `b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098`.
/// `None` for other hosts.
pub(crate) fn region_from_host(address: &str) -> Option<String> {
    let host = strip_port(address).to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    let head = [".amazonaws.com", ".amazonaws.com.cn"]
        .iter()
        .find_map(|suffix| host.strip_suffix(suffix))?;
    let label = head.rsplit('.').next()?;
    let looks_like_region = label.contains('-')
        && label.ends_with(|c: char| c.is_ascii_digit())
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    looks_like_region.then(|| label.to_string())
}

/// The host of `host:port` (`[v6]:port` too); an address without a port
/// is returned as is.
pub(crate) fn strip_port(address: &str) -> &str {
    let address = address.trim();
    if let Some(rest) = address.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host
        }
        _ => address,
    }
}

/// Amazon MSK IAM tokens for SASL/OAUTHBEARER: each call signs a fresh
/// token valid for [`MSK_TOKEN_LIFETIME`] (900 s). Wrap it in a
/// [`RefreshingTokenProvider`](crate::oauth::RefreshingTokenProvider)
/// (as `OAuthBearerConfig::msk_iam` does) so that tokens are signed ahead
/// of expiry: with Java's defaults ten minutes after signing.
///
/// ```
/// use kafka_client::oauth::{OAuthBearerConfig, MskIamTokenProvider};
/// use kafka_client::{ClientConfig, MskIamSigner, SaslMechanism, SecurityProtocol};
/// let signer = MskIamSigner::new("eu-west-1").unwrap(); // credentials: the environment's
/// let mut cfg = ClientConfig::new("b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098");
/// cfg.security_protocol = SecurityProtocol::SaslSsl;
/// cfg.sasl_mechanism = SaslMechanism::OAuthBearer;
/// cfg.sasl_oauthbearer = Some(OAuthBearerConfig::msk_iam(signer.clone()));
/// // Or as any application token provider:
/// let _provider = MskIamTokenProvider::new(signer);
/// ```
#[derive(Debug, Clone)]
pub struct MskIamTokenProvider {
    /// Signs the tokens.
    signer: MskIamSigner,
}

impl MskIamTokenProvider {
    /// Tokens signed by `signer`.
    ///
    /// ```
    /// use kafka_client::oauth::MskIamTokenProvider;
    /// use kafka_client::{AwsCredentials, MskIamSigner};
    /// let signer = MskIamSigner::new("us-east-1").unwrap().credentials(AwsCredentials::new("AKID", "secret"));
    /// let _provider = MskIamTokenProvider::new(signer);
    /// ```
    pub fn new(signer: MskIamSigner) -> Self {
        Self { signer }
    }

    /// The token signed at `now` (what [`TokenProvider::token`] returns
    /// for the current time).
    pub fn token_at(&self, now: SystemTime) -> Result<Token, TokenError> {
        let signed = self.signer.token(now).map_err(token_error)?;
        let issued = signed.expiry - MSK_TOKEN_LIFETIME;
        Ok(Token::new(signed.token, signed.expiry, PRINCIPAL).with_issued_at(issued))
    }
}

impl TokenProvider for MskIamTokenProvider {
    async fn token(&self) -> Result<Token, TokenError> {
        self.token_at(SystemTime::now())
    }
}

/// A signer failure as a token failure: missing or unreadable credentials
/// may be fixed while the client runs (a credentials file rewritten by a
/// sidecar), a bad region or clock may not.
pub(crate) fn token_error(e: MskIamError) -> TokenError {
    let retriable = matches!(
        e,
        MskIamError::NoCredentials { .. }
            | MskIamError::IncompleteCredentials { .. }
            | MskIamError::Unreadable { .. }
    );
    if retriable {
        TokenError::Provider {
            message: e.to_string(),
            retriable,
        }
    } else {
        TokenError::Config {
            message: e.to_string(),
        }
    }
}

/// A provider for settings whose signer cannot be made (no region): each
/// call reports why. `ClientConfig::validate` reports the same earlier.
#[derive(Debug, Clone)]
pub(crate) struct Unsignable(pub(crate) MskIamError);

impl TokenProvider for Unsignable {
    async fn token(&self) -> Result<Token, TokenError> {
        Err(token_error(self.0.clone()))
    }
}

/// Credentials of one profile of the shared files, ignoring the
/// environment's keys (the Java plugin's `awsProfileName`).
pub(crate) fn profile_credentials(profile: &str) -> Result<AwsCredentials, MskIamError> {
    AwsCredentials::resolve(&|name| match name {
        "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" | "AWS_SESSION_TOKEN" => None,
        "AWS_PROFILE" => Some(profile.to_string()),
        other => std::env::var(other).ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use std::time::Duration;

    /// Invariant: the region is the label before the AWS suffix, ports and
    /// case ignored; other hosts name none.
    #[test]
    fn region_comes_from_msk_host_names() {
        for (addr, region) in [
            (
                "b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098",
                Some("eu-west-1"),
            ),
            (
                "boot-abcd.c1.kafka-serverless.us-east-2.amazonaws.com:9098",
                Some("us-east-2"),
            ),
            (
                "B-2.Orders.X1.C3.Kafka.AP-SOUTHEAST-2.AmazonAWS.com",
                Some("ap-southeast-2"),
            ),
            (
                "b-1.x.c2.kafka.cn-north-1.amazonaws.com.cn:9098",
                Some("cn-north-1"),
            ),
            ("localhost:9092", None),
            ("kafka.example.com:9093", None),
            ("amazonaws.com:9098", None),
            ("[::1]:9092", None),
        ] {
            assert_eq!(region_from_host(addr).as_deref(), region, "{addr}");
        }
        assert_eq!(strip_port("[::1]:9092"), "::1");
        assert_eq!(strip_port("h:9092"), "h");
        assert_eq!(strip_port("h"), "h");
    }

    /// Invariant: `AWS_REGION` wins over `AWS_DEFAULT_REGION`; blank is unset.
    #[test]
    fn env_region_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            env_region(&env(&[
                ("AWS_REGION", "eu-west-1"),
                ("AWS_DEFAULT_REGION", "us-east-1")
            ])),
            Some("eu-west-1".into())
        );
        assert_eq!(
            env_region(&env(&[
                ("AWS_REGION", " "),
                ("AWS_DEFAULT_REGION", "us-east-1")
            ])),
            Some("us-east-1".into())
        );
        assert_eq!(env_region(&env(&[])), None);
    }

    /// Invariant: a broker host's region wins over the environment; an
    /// application's signer wins over both.
    #[test]
    fn signer_region_from_bootstrap() {
        let settings = MskIamSettings {
            signer: None,
            profile: None,
        };
        let s = settings
            .signer(&["b-1.x.c2.kafka.sa-east-1.amazonaws.com:9098".to_string()])
            .unwrap();
        assert_eq!(s.host(), "kafka.sa-east-1.amazonaws.com");
        let fixed = MskIamSettings {
            signer: Some(MskIamSigner::new("ca-central-1").unwrap()),
            profile: None,
        };
        assert_eq!(
            fixed
                .signer(&["b-1.x.c2.kafka.sa-east-1.amazonaws.com:9098".to_string()])
                .unwrap()
                .host(),
            "kafka.ca-central-1.amazonaws.com"
        );
    }

    /// Invariant: the OAUTHBEARER token is the signer's token, expiring at
    /// its expiry, issued 900 s before; the bytes on the wire are
    /// `n,,\x01auth=Bearer <token>\x01\x01` with no extensions (MSK's
    /// signers send none) and pass the broker's bearer grammar.
    #[test]
    fn oauthbearer_message_carries_the_signed_url() {
        let signer = MskIamSigner::new("us-west-2")
            .unwrap()
            .credentials(AwsCredentials::new(
                "AKIDEXAMPLE",
                "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            ));
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160);
        let token = MskIamTokenProvider::new(signer.clone())
            .token_at(now)
            .unwrap();
        let raw = signer.token(now).unwrap();
        assert_eq!(token.value(), raw.token);
        assert_eq!(token.expires_at(), now + Duration::from_secs(900));
        assert_eq!(token.issued_at(), Some(now));
        assert!(token.extensions().is_empty());
        assert!(crate::oauth::is_valid_bearer(token.value()));
        let msg =
            crate::oauth::client_first_message(token.value(), None, token.extensions()).unwrap();
        let mut expected = b"n,,\x01auth=Bearer ".to_vec();
        expected.extend_from_slice(raw.token.as_bytes());
        expected.extend_from_slice(b"\x01\x01");
        assert_eq!(msg, expected);
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.value())
            .unwrap();
        assert!(
            String::from_utf8(url).unwrap().starts_with(
                "https://kafka.us-west-2.amazonaws.com/?Action=kafka-cluster%3AConnect&"
            )
        );
    }

    /// Invariant: with Java's refresh defaults a 900 s MSK token is signed
    /// again 600 s after the last one (its expiry less the 300 s buffer),
    /// well before it expires.
    #[test]
    fn refreshed_ten_minutes_after_signing() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = crate::oauth::RefreshConfig::default().refresh_at(
            Some(now),
            now + MSK_TOKEN_LIFETIME,
            now,
            0.5,
        );
        assert_eq!(at, now + Duration::from_secs(600));
    }

    /// Invariant: missing credentials are retriable (a sidecar may write
    /// them), a bad region is a configuration error.
    #[test]
    fn errors_by_blame() {
        assert!(
            token_error(MskIamError::NoCredentials {
                profile: "default".into(),
                searched: String::new()
            })
            .is_retriable()
        );
        assert!(!token_error(MskIamError::InvalidRegion("x y".into())).is_retriable());
        assert!(!token_error(MskIamError::NoRegion).is_retriable());
    }

    /// The settings MSK documents for Java, as properties.
    fn msk_props(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut p = vec![
            (
                "bootstrap.servers",
                "b-1.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098,b-2.orders.x1y2z3.c2.kafka.eu-west-1.amazonaws.com:9098",
            ),
            ("security.protocol", "SASL_SSL"),
        ];
        p.extend_from_slice(extra);
        p
    }

    /// Invariant: MSK's Java settings for SASL/OAUTHBEARER select MSK IAM
    /// tokens for the region of the broker host names.
    #[test]
    fn java_oauthbearer_settings_select_msk_iam() {
        let cfg = crate::ClientConfig::from_properties(msk_props(&[
            ("sasl.mechanism", "OAUTHBEARER"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            ),
            (
                "sasl.login.callback.handler.class",
                OAUTH_LOGIN_CALLBACK_HANDLER,
            ),
            (
                "sasl.client.callback.handler.class",
                OAUTH_LOGIN_CALLBACK_HANDLER,
            ),
        ]))
        .unwrap();
        let msk = cfg
            .sasl_oauthbearer
            .as_ref()
            .unwrap()
            .msk_iam_settings()
            .unwrap();
        assert_eq!(msk.profile, None);
        assert_eq!(
            msk.signer(&cfg.bootstrap_servers).unwrap().host(),
            "kafka.eu-west-1.amazonaws.com"
        );
        let sasl = cfg.connection_config().sasl.unwrap();
        assert_eq!(sasl.mechanism_name(), "OAUTHBEARER");
        assert!(sasl.token_provider.is_some());
    }

    /// Invariant: the legacy settings (`AWS_MSK_IAM`, `IAMLoginModule`,
    /// `IAMClientCallbackHandler`) give the AWS_MSK_IAM mechanism with a
    /// signer for the brokers' region and the JAAS line's profile.
    #[test]
    fn java_aws_msk_iam_settings_select_the_legacy_mechanism() {
        let cfg = crate::ClientConfig::from_properties(msk_props(&[
            ("sasl.mechanism", "AWS_MSK_IAM"),
            (
                "sasl.jaas.config",
                "software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName=\"orders\";",
            ),
            (
                "sasl.client.callback.handler.class",
                CLIENT_CALLBACK_HANDLER,
            ),
        ]))
        .unwrap();
        let sasl = cfg.connection_config().sasl.unwrap();
        assert_eq!(sasl.mechanism_name(), "AWS_MSK_IAM");
        let signer = sasl.aws_msk_iam.unwrap();
        assert_eq!(signer.host(), "kafka.eu-west-1.amazonaws.com");
        assert_eq!(
            signer,
            MskIamSigner::new("eu-west-1").unwrap().profile("orders")
        );
    }

    /// Invariant: what cannot work is refused when the settings are read,
    /// naming the key: a role to assume, an unknown callback handler, the
    /// legacy mechanism without its login module.
    #[test]
    fn unusable_msk_settings_are_refused() {
        let role = crate::ClientConfig::from_properties(msk_props(&[
            ("sasl.mechanism", "AWS_MSK_IAM"),
            (
                "sasl.jaas.config",
                "software.amazon.msk.auth.iam.IAMLoginModule required awsRoleArn=\"arn:aws:iam::1:role/x\";",
            ),
        ]))
        .unwrap_err();
        assert!(role.to_string().contains("awsRoleArn"), "{role}");
        let handler = crate::ClientConfig::from_properties(msk_props(&[
            ("sasl.mechanism", "AWS_MSK_IAM"),
            ("sasl.client.callback.handler.class", "com.example.Handler"),
        ]))
        .unwrap_err();
        assert!(
            handler
                .to_string()
                .contains("sasl.client.callback.handler.class"),
            "{handler}"
        );
        let no_module =
            crate::ClientConfig::from_properties(msk_props(&[("sasl.mechanism", "AWS_MSK_IAM")]))
                .unwrap_err();
        assert!(no_module.to_string().contains(LOGIN_MODULE), "{no_module}");
    }

    /// Invariant: the AWS_MSK_IAM message is signed for the broker host
    /// connected to (not the regional endpoint): its signature is the SigV4
    /// of the canonical request with `host:<broker>`, recomputed here.
    #[test]
    fn aws_msk_iam_message_is_signed_for_the_broker_host() {
        use crate::msk_iam::tests::independent_signature;
        const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
        let broker = "b-1.orders.x1y2z3.c2.kafka.us-west-2.amazonaws.com";
        let signer = MskIamSigner::new("us-west-2")
            .unwrap()
            .credentials(AwsCredentials::new("AKIDEXAMPLE", SECRET));
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160);
        let json = signer.aws_msk_iam_payload(broker, now).unwrap();
        let canonical = format!(
            "GET\n/\nAction=kafka-cluster%3AConnect&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-west-2%2Fkafka-cluster%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host\nhost:{broker}\n\nhost\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let expected = format!(
            "\"x-amz-signature\":\"{}\"",
            independent_signature(SECRET, &canonical)
        );
        assert!(json.contains(&expected), "{json}");
        assert!(json.contains(&format!("\"host\":\"{broker}\"")));
        assert!(
            !json.contains("x-amz-security-token"),
            "no session token, no key"
        );
    }
}
