//! Amazon MSK IAM authentication tokens, as AWS's
//! `aws-msk-iam-sasl-signer` libraries make them for SASL/OAUTHBEARER: a
//! SigV4-presigned `GET https://kafka.<region>.amazonaws.com/?Action=kafka-cluster%3AConnect`
//! (service `kafka-cluster`, `X-Amz-Expires=900`, only `host` signed, the
//! session token in the signed query), a `User-Agent` parameter appended
//! after signing, the URL base64url-encoded without padding. The token
//! expires at `X-Amz-Date` + `X-Amz-Expires`.
//!
//! Also the JSON payload of the older `AWS_MSK_IAM` SASL mechanism (the
//! same signature over the broker's host name).
//!
//! The signer is independent of any SASL code: it returns a token and its
//! expiry for the time it is given.
//!
//! ```
//! use kafka_client::{AwsCredentials, MskIamSigner};
//! use std::time::{Duration, SystemTime};
//! let signer = MskIamSigner::new("us-east-1")
//!     .unwrap()
//!     .credentials(AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"));
//! let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
//! let token = signer.token(now).unwrap();
//! assert_eq!(token.expiry, now + Duration::from_secs(900));
//! assert!(!token.token.contains('='), "base64url without padding");
//! ```

mod credentials;
mod provider;
mod sigv4;

pub use credentials::AwsCredentials;
pub use provider::MskIamTokenProvider;
pub(crate) use provider::{
    CLIENT_CALLBACK_HANDLER, LOGIN_MODULE, MskIamSettings, OAUTH_LOGIN_CALLBACK_HANDLER,
    Unsignable, strip_port,
};

use base64::Engine as _;
use std::time::{Duration, SystemTime};

/// The scope service of MSK's IAM authentication.
const SERVICE: &str = "kafka-cluster";
/// The action signed.
const ACTION: &str = "kafka-cluster:Connect";
/// How long a token is valid (`X-Amz-Expires`), as all of AWS's signers.
pub const MSK_TOKEN_LIFETIME: Duration = Duration::from_secs(900);

/// Why no MSK IAM token could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MskIamError {
    /// No credentials in the environment or the shared files.
    #[error(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and \
         AWS_SESSION_TOKEN for temporary credentials), or add profile {profile:?} to the \
         shared credentials file ({searched})"
    )]
    NoCredentials {
        /// The profile looked for (`AWS_PROFILE`, default `default`).
        profile: String,
        /// Where it was looked for.
        searched: String,
    },
    /// Half of a key pair.
    #[error("incomplete AWS credentials in {found_in}: {missing} is missing")]
    IncompleteCredentials {
        /// Where they were found.
        found_in: String,
        /// The missing key.
        missing: &'static str,
    },
    /// A shared credentials or config file that exists but cannot be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// Not an AWS region name (`us-east-1`).
    #[error("invalid AWS region {0:?}: expected a region name such as us-east-1")]
    InvalidRegion(String),
    /// No region in the broker host names, `AWS_REGION` or
    /// `AWS_DEFAULT_REGION`.
    #[error(
        "no AWS region: the bootstrap servers are not MSK host names \
         (b-1.<cluster>.<id>.c2.kafka.<region>.amazonaws.com); set AWS_REGION"
    )]
    NoRegion,
    /// A clock before 1970.
    #[error("the system clock is before 1970")]
    ClockBeforeEpoch,
}

/// A token for SASL/OAUTHBEARER and when it expires.
#[derive(Clone, PartialEq, Eq)]
pub struct MskAuthToken {
    /// The base64url (unpadded) presigned URL.
    pub token: String,
    /// `X-Amz-Date` + `X-Amz-Expires`: when MSK stops accepting it.
    pub expiry: SystemTime,
}

impl MskAuthToken {
    /// [`Self::expiry`] in milliseconds since the Unix epoch (what Kafka's
    /// token interfaces carry).
    pub fn expiry_ms(&self) -> i64 {
        self.expiry
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

impl std::fmt::Debug for MskAuthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a bearer credential: never printed.
        f.debug_struct("MskAuthToken")
            .field("token", &"<redacted>")
            .field("expiry", &self.expiry)
            .finish()
    }
}

/// Where a signer takes its credentials from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CredentialSource {
    /// The environment and the shared files, read at each token.
    Environment,
    /// One profile of the shared files, read at each token.
    Profile(String),
    /// Fixed credentials.
    Static(AwsCredentials),
}

/// Makes MSK IAM tokens for one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MskIamSigner {
    /// The cluster's region (`us-east-1`).
    region: String,
    /// The credentials.
    credentials: CredentialSource,
    /// The `User-Agent` parameter.
    user_agent: String,
}

impl MskIamSigner {
    /// A signer for clusters in `region`, with the credentials of the
    /// environment and the shared files (read at each token).
    ///
    /// ```
    /// use kafka_client::MskIamSigner;
    /// let signer = MskIamSigner::new("eu-west-1").unwrap();
    /// assert!(MskIamSigner::new("eu west").is_err());
    /// # drop(signer);
    /// ```
    pub fn new(region: impl Into<String>) -> Result<Self, MskIamError> {
        let region = region.into();
        let valid = !region.is_empty()
            && region
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid {
            return Err(MskIamError::InvalidRegion(region));
        }
        Ok(Self {
            region,
            credentials: CredentialSource::Environment,
            user_agent: format!("kafka-eos-msk-iam-signer/{}", env!("CARGO_PKG_VERSION")),
        })
    }

    /// Signs with `credentials` instead of the environment's.
    pub fn credentials(mut self, credentials: AwsCredentials) -> Self {
        self.credentials = CredentialSource::Static(credentials);
        self
    }

    /// Signs with the credentials of `profile` in the shared files
    /// (`~/.aws/credentials`, `~/.aws/config`), ignoring the environment's
    /// keys: the Java plugin's `awsProfileName`.
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.credentials = CredentialSource::Profile(profile.into());
        self
    }

    /// The `User-Agent` parameter (default `kafka-eos-msk-iam-signer/<version>`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// The endpoint signed for: `kafka.<region>.amazonaws.com`.
    pub fn host(&self) -> String {
        format!("kafka.{}.amazonaws.com", self.region)
    }

    /// A token signed at `now`, valid for [`MSK_TOKEN_LIFETIME`].
    pub fn token(&self, now: SystemTime) -> Result<MskAuthToken, MskIamError> {
        let credentials = self.current_credentials()?;
        let unix_time = unix_seconds(now)?;
        let host = self.host();
        let signed = self.presign(&host, &credentials, unix_time);
        let url = format!(
            "https://{host}/?{}&User-Agent={}",
            signed.query,
            sigv4::uri_encode(&self.user_agent)
        );
        Ok(MskAuthToken {
            token: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url),
            expiry: SystemTime::UNIX_EPOCH + Duration::from_secs(unix_time) + MSK_TOKEN_LIFETIME,
        })
    }

    /// The client-first message of the `AWS_MSK_IAM` SASL mechanism for
    /// the broker `broker_host` (the name connected to, without the port),
    /// signed at `now`: a JSON object with lower-case keys, version
    /// `2020_10_22`.
    pub fn aws_msk_iam_payload(
        &self,
        broker_host: &str,
        now: SystemTime,
    ) -> Result<String, MskIamError> {
        let credentials = self.current_credentials()?;
        let unix_time = unix_seconds(now)?;
        let signed = self.presign(broker_host, &credentials, unix_time);
        let scope = format!(
            "{}/{}/{}/{SERVICE}/aws4_request",
            credentials.access_key_id,
            &signed.amz_date[..8],
            self.region
        );
        let mut fields = vec![
            ("version", "2020_10_22".to_string()),
            ("host", broker_host.to_string()),
            ("user-agent", self.user_agent.clone()),
            ("action", ACTION.to_string()),
            ("x-amz-algorithm", "AWS4-HMAC-SHA256".to_string()),
            ("x-amz-credential", scope),
            ("x-amz-date", signed.amz_date.clone()),
        ];
        if let Some(token) = &credentials.session_token {
            fields.push(("x-amz-security-token", token.expose().to_string()));
        }
        fields.extend([
            ("x-amz-signedheaders", "host".to_string()),
            ("x-amz-expires", MSK_TOKEN_LIFETIME.as_secs().to_string()),
            ("x-amz-signature", signed.signature),
        ]);
        let body = fields
            .iter()
            .map(|(k, v)| format!("\"{k}\":\"{}\"", json_escape(v)))
            .collect::<Vec<_>>()
            .join(",");
        Ok(format!("{{{body}}}"))
    }

    fn current_credentials(&self) -> Result<AwsCredentials, MskIamError> {
        match &self.credentials {
            CredentialSource::Static(c) => Ok(c.clone()),
            CredentialSource::Environment => AwsCredentials::from_environment(),
            CredentialSource::Profile(p) => provider::profile_credentials(p),
        }
    }

    fn presign(
        &self,
        host: &str,
        credentials: &AwsCredentials,
        unix_time: u64,
    ) -> sigv4::Presigned {
        sigv4::presign(&sigv4::Presign {
            host,
            region: &self.region,
            service: SERVICE,
            params: &[("Action", ACTION)],
            access_key_id: &credentials.access_key_id,
            secret_access_key: credentials.secret_access_key.expose(),
            session_token: credentials.session_token.as_ref().map(|t| t.expose()),
            unix_time,
            expires_secs: MSK_TOKEN_LIFETIME.as_secs(),
        })
    }
}

fn unix_seconds(now: SystemTime) -> Result<u64, MskIamError> {
    now.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .map_err(|_| MskIamError::ClockBeforeEpoch)
}

/// A JSON string's contents.
fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The structure AWS's signer libraries assert of their tokens (their
    //! tests pin no signature: the SigV4 computation itself is pinned
    //! against the AWS test suite in `sigv4.rs`), plus one signature
    //! recomputed here independently of the query assembly.
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    /// A session token with the characters that must be percent-encoded.
    const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjE+abc/def==";
    /// 2015-08-30T12:36:00Z.
    const TIME: u64 = 1_440_938_160;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn signer(session_token: Option<&str>) -> MskIamSigner {
        let mut c = AwsCredentials::new("AKIDEXAMPLE", SECRET);
        if let Some(t) = session_token {
            c = c.session_token(t);
        }
        MskIamSigner::new("us-west-2")
            .unwrap()
            .credentials(c)
            .user_agent("kafka-eos-test/1.0")
    }

    /// The token decoded back into its URL's parameters, in order.
    fn decode(token: &str) -> (String, Vec<(String, String)>) {
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "base64url without padding: {token}"
        );
        let url = String::from_utf8(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token)
                .unwrap(),
        )
        .unwrap();
        let (base, query) = url.split_once('?').unwrap();
        let params = query
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect();
        (base.to_string(), params)
    }

    fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Invariant: the token is the presigned MSK URL with exactly the
    /// parameters AWS's signers produce, expiring 900 s after its date.
    #[test]
    fn token_has_the_signers_structure() {
        let t = signer(None).token(at(TIME)).unwrap();
        let (base, params) = decode(&t.token);
        assert_eq!(base, "https://kafka.us-west-2.amazonaws.com/");
        let names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "Action",
                "X-Amz-Algorithm",
                "X-Amz-Credential",
                "X-Amz-Date",
                "X-Amz-Expires",
                "X-Amz-SignedHeaders",
                "X-Amz-Signature",
                "User-Agent"
            ]
        );
        assert_eq!(param(&params, "Action"), Some("kafka-cluster%3AConnect"));
        assert_eq!(param(&params, "X-Amz-Algorithm"), Some("AWS4-HMAC-SHA256"));
        assert_eq!(
            param(&params, "X-Amz-Credential"),
            Some("AKIDEXAMPLE%2F20150830%2Fus-west-2%2Fkafka-cluster%2Faws4_request")
        );
        assert_eq!(param(&params, "X-Amz-Date"), Some("20150830T123600Z"));
        assert_eq!(param(&params, "X-Amz-Expires"), Some("900"));
        assert_eq!(param(&params, "X-Amz-SignedHeaders"), Some("host"));
        assert_eq!(param(&params, "User-Agent"), Some("kafka-eos-test%2F1.0"));
        let signature = param(&params, "X-Amz-Signature").unwrap();
        assert_eq!(signature.len(), 64);
        assert!(signature.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(t.expiry, at(TIME + 900));
        assert_eq!(t.expiry_ms(), (TIME as i64 + 900) * 1000);
    }

    /// Invariant: a session token is in the signed query, percent-encoded
    /// (`+`, `/`, `=` would otherwise change meaning), and changes the
    /// signature.
    #[test]
    fn session_token_is_signed_and_encoded() {
        let with = signer(Some(SESSION_TOKEN)).token(at(TIME)).unwrap();
        let without = signer(None).token(at(TIME)).unwrap();
        let (_, params) = decode(&with.token);
        assert_eq!(
            param(&params, "X-Amz-Security-Token"),
            Some("IQoJb3JpZ2luX2VjE%2Babc%2Fdef%3D%3D")
        );
        let names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
        let token_at = names.iter().position(|n| *n == "X-Amz-Security-Token");
        let signed_headers_at = names.iter().position(|n| *n == "X-Amz-SignedHeaders");
        assert!(token_at < signed_headers_at, "sorted into the signed query");
        let (_, plain) = decode(&without.token);
        assert_ne!(
            param(&params, "X-Amz-Signature"),
            param(&plain, "X-Amz-Signature")
        );
    }

    /// Invariant: the signature is the SigV4 of the MSK canonical request,
    /// recomputed here step by step from the SigV4 definition.
    #[test]
    fn signature_matches_an_independent_computation() {
        let t = signer(None).token(at(TIME)).unwrap();
        let (_, params) = decode(&t.token);
        let canonical = "GET\n/\nAction=kafka-cluster%3AConnect&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-west-2%2Fkafka-cluster%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host\nhost:kafka.us-west-2.amazonaws.com\n\nhost\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            param(&params, "X-Amz-Signature"),
            Some(independent_signature(SECRET, canonical).as_str())
        );
    }

    /// The SigV4 signature (hex) of `canonical`, signed with `secret` for
    /// kafka-cluster in us-west-2 at 2015-08-30T12:36:00Z, computed step by
    /// step from the SigV4 definition, without the signer's code.
    pub(super) fn independent_signature(secret: &str, canonical: &str) -> String {
        use hmac::{Hmac, Mac};
        use sha2::{Digest, Sha256};
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-west-2/kafka-cluster/aws4_request\n{}",
            hex(&Sha256::digest(canonical))
        );
        let mac = |key: &[u8], data: &str| {
            let mut m = Hmac::<Sha256>::new_from_slice(key).unwrap();
            m.update(data.as_bytes());
            m.finalize().into_bytes().to_vec()
        };
        let mut key = mac(format!("AWS4{secret}").as_bytes(), "20150830");
        for part in ["us-west-2", "kafka-cluster", "aws4_request"] {
            key = mac(&key, part);
        }
        hex(&mac(&key, &to_sign))
    }

    /// Invariant: the signing time is the one passed in (a later time, a
    /// later date and expiry, another signature).
    #[test]
    fn time_is_passed_in() {
        let a = signer(None).token(at(TIME)).unwrap();
        let b = signer(None).token(at(TIME + 86_400)).unwrap();
        assert_eq!(b.expiry, at(TIME + 86_400 + 900));
        let (_, pb) = decode(&b.token);
        assert_eq!(param(&pb, "X-Amz-Date"), Some("20150831T123600Z"));
        assert_ne!(a.token, b.token);
        assert_eq!(
            signer(None).token(at(TIME)).unwrap(),
            a,
            "deterministic for one time"
        );
        assert_eq!(
            signer(None).token(SystemTime::UNIX_EPOCH - Duration::from_secs(1)),
            Err(MskIamError::ClockBeforeEpoch)
        );
    }

    /// Invariant: the `AWS_MSK_IAM` payload carries the ten keys and the
    /// version the Java plugin validates, signed for the broker's host.
    #[test]
    fn aws_msk_iam_payload_has_the_plugins_keys() {
        let json = signer(Some(SESSION_TOKEN))
            .aws_msk_iam_payload("b-1.demo.abc123.c2.kafka.us-west-2.amazonaws.com", at(TIME))
            .unwrap();
        for key in [
            "\"version\":\"2020_10_22\"",
            "\"host\":\"b-1.demo.abc123.c2.kafka.us-west-2.amazonaws.com\"",
            "\"user-agent\":\"kafka-eos-test/1.0\"",
            "\"action\":\"kafka-cluster:Connect\"",
            "\"x-amz-algorithm\":\"AWS4-HMAC-SHA256\"",
            "\"x-amz-credential\":\"AKIDEXAMPLE/20150830/us-west-2/kafka-cluster/aws4_request\"",
            "\"x-amz-date\":\"20150830T123600Z\"",
            "\"x-amz-security-token\":\"IQoJb3JpZ2luX2VjE+abc/def==\"",
            "\"x-amz-signedheaders\":\"host\"",
            "\"x-amz-expires\":\"900\"",
            "\"x-amz-signature\":\"",
        ] {
            assert!(json.contains(key), "{key} in {json}");
        }
        assert!(json.starts_with('{') && json.ends_with('}'));
    }

    #[test]
    fn invalid_regions_are_refused() {
        for r in ["", "US-EAST-1", "us east 1", "us-east-1/x"] {
            assert!(MskIamSigner::new(r).is_err(), "{r:?}");
        }
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = signer(None).token(at(TIME)).unwrap();
        assert!(!format!("{t:?}").contains(&t.token));
    }
}
