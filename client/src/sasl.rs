//! SASL mechanisms (sans-IO): PLAIN and the SCRAM-SHA-256 / SCRAM-SHA-512
//! client of RFC 5802 / RFC 7677; OAUTHBEARER's messages are in
//! [`crate::oauth`].
//!
//! The connection driver authenticates in three steps:
//! 1. SaslHandshake with the mechanism's name ([`SaslConfig::mechanism_name`]);
//! 2. one SaslAuthenticate per client message: [`plain_message`] for PLAIN,
//!    or the messages of a [`ScramClient`] for SCRAM, each answer fed back to it;
//! 3. for SCRAM, the server's last message verified
//!    ([`ScramClient::handle_server_final`]): the broker proved it knows the password.
//!
//! ```
//! use kafka_client::internals::{plain_message, ScramClient, ScramHash};
//! use kafka_client::{SaslConfig, SaslMechanism};
//!
//! let config = SaslConfig::scram_sha512("alice", "alice-secret");
//! let first_message = match config.mechanism {
//!     SaslMechanism::Plain => plain_message(&config.username, &config.password),
//!     SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
//!         let hash = if config.mechanism == SaslMechanism::ScramSha256 {
//!             ScramHash::Sha256
//!         } else {
//!             ScramHash::Sha512
//!         };
//!         ScramClient::new(hash, &config.username, &config.password).client_first()
//!     }
//!     SaslMechanism::OAuthBearer | SaslMechanism::AwsMskIam => unreachable!("a SCRAM configuration"),
//! };
//! assert!(first_message.starts_with(b"n,,n=alice,r="));
//! ```

use crate::msk_iam::MskIamSigner;
use crate::oauth::SharedTokenProvider;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};
use std::fmt;

/// The minimum iteration count accepted from a SCRAM server (Kafka's and
/// RFC 7677's 4096).
pub const SCRAM_MIN_ITERATIONS: u32 = 4096;

/// SASL mechanism and credentials for a connection.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslConfig {
    /// The mechanism.
    pub mechanism: SaslMechanism,
    /// User name.
    pub username: String,
    /// Password (never printed by `Debug`).
    pub password: String,
    /// Where OAUTHBEARER tokens come from (unused by the other mechanisms).
    pub token_provider: Option<SharedTokenProvider>,
    /// The signer of `AWS_MSK_IAM` (unused by the other mechanisms).
    pub aws_msk_iam: Option<MskIamSigner>,
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslConfig")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("token_provider", &self.token_provider)
            .field("aws_msk_iam", &self.aws_msk_iam)
            .finish()
    }
}

impl SaslConfig {
    /// SASL/PLAIN.
    pub fn plain(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(SaslMechanism::Plain, username, password)
    }

    /// SCRAM-SHA-256.
    pub fn scram_sha256(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(SaslMechanism::ScramSha256, username, password)
    }

    /// SCRAM-SHA-512.
    pub fn scram_sha512(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(SaslMechanism::ScramSha512, username, password)
    }

    /// OAUTHBEARER with tokens from `provider` (share one provider among
    /// the connections of a client, e.g. a
    /// [`RefreshingTokenProvider`](crate::oauth::RefreshingTokenProvider)).
    ///
    /// ```
    /// use kafka_client::oauth::{RefreshConfig, RefreshingTokenProvider, SharedTokenProvider, UnsecuredTokenProvider};
    /// use kafka_client::{ConnectionConfig, SaslConfig};
    /// let tokens = RefreshingTokenProvider::new(UnsecuredTokenProvider::new("alice"), RefreshConfig::default());
    /// let config = ConnectionConfig {
    ///     sasl: Some(SaslConfig::oauth_bearer(SharedTokenProvider::new(tokens))),
    ///     ..Default::default()
    /// };
    /// # let _ = config;
    /// ```
    pub fn oauth_bearer(provider: SharedTokenProvider) -> Self {
        Self {
            token_provider: Some(provider),
            ..Self::new(SaslMechanism::OAuthBearer, "", "")
        }
    }

    /// Amazon MSK's `AWS_MSK_IAM` mechanism: one JSON message signed by
    /// `signer` for the broker connected to (the Java plugin's
    /// `IAMLoginModule`). MSK's OAUTHBEARER form is
    /// [`OAuthBearerConfig::msk_iam`](crate::oauth::OAuthBearerConfig::msk_iam).
    ///
    /// ```
    /// use kafka_client::{MskIamSigner, SaslConfig};
    /// let sasl = SaslConfig::aws_msk_iam(MskIamSigner::new("eu-west-1").unwrap());
    /// assert_eq!(sasl.mechanism_name(), "AWS_MSK_IAM");
    /// ```
    pub fn aws_msk_iam(signer: MskIamSigner) -> Self {
        Self {
            aws_msk_iam: Some(signer),
            ..Self::new(SaslMechanism::AwsMskIam, "", "")
        }
    }

    /// Any mechanism: the form for a mechanism chosen at run time (the
    /// shortcuts [`plain`](Self::plain), [`scram_sha256`](Self::scram_sha256)
    /// and [`scram_sha512`](Self::scram_sha512) name theirs).
    ///
    /// ```
    /// use kafka_client::{SaslConfig, SaslMechanism};
    /// let config = SaslConfig::new(SaslMechanism::ScramSha256, "alice", "alice-secret");
    /// // The password never reaches a log through `Debug`.
    /// assert!(!format!("{config:?}").contains("alice-secret"));
    /// ```
    pub fn new(
        mechanism: SaslMechanism,
        username: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        Self {
            mechanism,
            username: username.into(),
            password: password.into(),
            token_provider: None,
            aws_msk_iam: None,
        }
    }

    /// The mechanism's Kafka name.
    pub fn mechanism_name(&self) -> &'static str {
        self.mechanism.name()
    }
}

/// A SASL mechanism this client implements (defined once in the protocol
/// crate, so that the test harness enables the same mechanisms on a broker).
pub use kafka_proto::messages::SaslMechanism;

/// The SASL/PLAIN message: `authzid NUL authcid NUL passwd` with an empty authzid.
pub fn plain_message(username: &str, password: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(username.len() + password.len() + 2);
    v.push(0);
    v.extend_from_slice(username.as_bytes());
    v.push(0);
    v.extend_from_slice(password.as_bytes());
    v
}

/// The hash function of a SCRAM mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScramHash {
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
}

impl ScramHash {
    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts any key");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            ScramHash::Sha512 => {
                let mut m = Hmac::<Sha512>::new_from_slice(key).expect("HMAC accepts any key");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => Sha256::digest(data).to_vec(),
            ScramHash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password, salt, iterations).to_vec()
            }
            ScramHash::Sha512 => {
                pbkdf2::pbkdf2_hmac_array::<Sha512, 64>(password, salt, iterations).to_vec()
            }
        }
    }
}

/// A SCRAM protocol failure on the client side (bad server message, nonce or
/// signature), or a server-reported `e=` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SCRAM: {0}")]
pub struct ScramError(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
enum ScramState {
    Initial,
    SentFirst,
    SentFinal { server_signature: Vec<u8> },
    Done,
}

/// A SCRAM client (RFC 5802) without channel binding (`n,,`), as Kafka uses it.
///
/// One conversation, each message the payload of one SaslAuthenticate:
/// 1. [`Self::client_first`]: send it;
/// 2. [`Self::handle_server_first`] with the answer: returns the
///    client-final message (with the proof), send it;
/// 3. [`Self::handle_server_final`] with the answer: verifies the server
///    signature; then [`Self::is_done`].
///
/// ```
/// use kafka_client::internals::{ScramClient, ScramHash};
/// // The test vector of RFC 7677 section 3.
/// let mut c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
/// c.client_first();
/// let fin = c.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096").unwrap();
/// assert!(fin.ends_with(b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
/// c.handle_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").unwrap();
/// ```
pub struct ScramClient {
    hash: ScramHash,
    username: String,
    password: String,
    nonce: String,
    client_first_bare: String,
    state: ScramState,
}

impl fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramClient")
            .field("hash", &self.hash)
            .field("username", &self.username)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Escapes a SCRAM `saslname`: `=` → `=3D`, `,` → `=2C`.
fn escape_saslname(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

impl ScramClient {
    /// A client with a fresh random nonce (24 random bytes, base64). One
    /// client runs one conversation; see the type's example for the steps.
    ///
    /// ```
    /// use kafka_client::internals::{ScramClient, ScramHash};
    /// let mut c = ScramClient::new(ScramHash::Sha256, "alice", "alice-secret");
    /// let first = c.client_first(); // the first SaslAuthenticate's bytes
    /// assert!(first.starts_with(b"n,,n=alice,r="));
    /// ```
    pub fn new(hash: ScramHash, username: &str, password: &str) -> Self {
        let mut raw = [0u8; 24];
        rand::fill(&mut raw);
        Self::with_nonce(hash, username, password, &B64.encode(raw))
    }

    /// A client with a given nonce (for test vectors). The nonce must be
    /// printable ASCII without `,`.
    pub fn with_nonce(hash: ScramHash, username: &str, password: &str, nonce: &str) -> Self {
        Self {
            hash,
            username: username.to_string(),
            password: password.to_string(),
            nonce: nonce.to_string(),
            client_first_bare: String::new(),
            state: ScramState::Initial,
        }
    }

    /// The client-first message `n,,n=USER,r=NONCE`.
    pub fn client_first(&mut self) -> Vec<u8> {
        self.client_first_bare = format!("n={},r={}", escape_saslname(&self.username), self.nonce);
        self.state = ScramState::SentFirst;
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    /// Parses server-first (`r=...,s=...,i=...`), checks the nonce and the
    /// iteration count, and returns client-final with the proof.
    pub fn handle_server_first(&mut self, msg: &[u8]) -> Result<Vec<u8>, ScramError> {
        if self.state != ScramState::SentFirst {
            return Err(ScramError("server-first received out of order".into()));
        }
        let text =
            std::str::from_utf8(msg).map_err(|_| ScramError("server-first is not UTF-8".into()))?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attr in text.split(',') {
            if let Some(v) = attr.strip_prefix("r=") {
                nonce = Some(v);
            } else if let Some(v) = attr.strip_prefix("s=") {
                salt = Some(
                    B64.decode(v)
                        .map_err(|_| ScramError("salt is not base64".into()))?,
                );
            } else if let Some(v) = attr.strip_prefix("i=") {
                iterations = Some(
                    v.parse::<u32>()
                        .map_err(|_| ScramError(format!("bad iteration count {v:?}")))?,
                );
            } else if let Some(v) = attr.strip_prefix("e=") {
                return Err(ScramError(format!("server error: {v}")));
            } else if attr.starts_with("m=") {
                return Err(ScramError("mandatory extension not supported".into()));
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err(ScramError(format!("malformed server-first {text:?}")));
        };
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err(ScramError(
                "server nonce does not extend the client nonce".into(),
            ));
        }
        if iterations < SCRAM_MIN_ITERATIONS {
            return Err(ScramError(format!(
                "iteration count {iterations} below the minimum {SCRAM_MIN_ITERATIONS}"
            )));
        }
        let h = self.hash;
        let salted = h.salted_password(self.password.as_bytes(), &salt, iterations);
        let client_key = h.hmac(&salted, b"Client Key");
        let stored_key = h.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{},{}", self.client_first_bare, text, without_proof);
        let client_signature = h.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = h.hmac(&salted, b"Server Key");
        let server_signature = h.hmac(&server_key, auth_message.as_bytes());
        self.state = ScramState::SentFinal { server_signature };
        Ok(format!("{without_proof},p={}", B64.encode(proof)).into_bytes())
    }

    /// Verifies server-final (`v=SIGNATURE`); `e=...` is an error.
    pub fn handle_server_final(&mut self, msg: &[u8]) -> Result<(), ScramError> {
        let ScramState::SentFinal { server_signature } = &self.state else {
            return Err(ScramError("server-final received out of order".into()));
        };
        let text =
            std::str::from_utf8(msg).map_err(|_| ScramError("server-final is not UTF-8".into()))?;
        let first = text.split(',').next().unwrap_or("");
        if let Some(e) = first.strip_prefix("e=") {
            return Err(ScramError(format!("server error: {e}")));
        }
        let Some(v) = first.strip_prefix("v=") else {
            return Err(ScramError(format!("malformed server-final {text:?}")));
        };
        let got = B64
            .decode(v)
            .map_err(|_| ScramError("server signature is not base64".into()))?;
        // Not secret-dependent timing relevant: the server already knows the key.
        if &got != server_signature {
            return Err(ScramError("server signature mismatch".into()));
        }
        self.state = ScramState::Done;
        Ok(())
    }

    /// True once the server signature has been verified.
    #[cfg_attr(not(any(test, feature = "internals")), allow(dead_code))]
    pub fn is_done(&self) -> bool {
        self.state == ScramState::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const SERVER_FIRST: &[u8] =
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

    #[test]
    fn rfc7677_scram_sha256_vector() {
        let mut c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        assert_eq!(
            c.client_first(),
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO".to_vec()
        );
        let fin = c.handle_server_first(SERVER_FIRST).unwrap();
        assert_eq!(
            std::str::from_utf8(&fin).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert!(!c.is_done());
        c.handle_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(c.is_done());
    }

    #[test]
    fn wrong_server_signature_is_rejected() {
        let mut c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        c.client_first();
        c.handle_server_first(SERVER_FIRST).unwrap();
        let err = c
            .handle_server_final(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(err.0.contains("mismatch"));
        assert!(!c.is_done());
    }

    #[test]
    fn server_errors_and_bad_nonces() {
        let mut c = ScramClient::with_nonce(ScramHash::Sha512, "user", "pencil", NONCE);
        c.client_first();
        assert!(
            c.handle_server_first(b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
                .is_err()
        );
        assert!(
            c.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000")
                .is_err()
        );
        let mut c = ScramClient::with_nonce(ScramHash::Sha512, "user", "pencil", NONCE);
        c.client_first();
        c.handle_server_first(b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        assert!(
            c.handle_server_final(b"e=invalid-proof")
                .unwrap_err()
                .0
                .contains("invalid-proof")
        );
    }

    #[test]
    fn saslname_is_escaped_and_nonce_random() {
        let mut c = ScramClient::with_nonce(ScramHash::Sha256, "a=b,c", "p", "n");
        assert_eq!(c.client_first(), b"n,,n=a=3Db=2Cc,r=n".to_vec());
        let a = ScramClient::new(ScramHash::Sha256, "u", "p");
        let b = ScramClient::new(ScramHash::Sha256, "u", "p");
        assert_ne!(a.nonce, b.nonce);
        assert!(!a.nonce.contains(','));
    }

    #[test]
    fn debug_redacts_the_password() {
        let c = SaslConfig::scram_sha512("alice", "secret");
        assert!(!format!("{c:?}").contains("secret"));
    }

    #[test]
    fn shortcuts_pick_their_mechanism() {
        let plain = SaslConfig::plain("alice", "pw");
        assert_eq!(
            (plain.mechanism, plain.mechanism_name()),
            (SaslMechanism::Plain, "PLAIN")
        );
        assert_eq!(
            SaslConfig::scram_sha256("a", "p").mechanism_name(),
            "SCRAM-SHA-256"
        );
        assert_eq!(
            SaslConfig::scram_sha512("a", "p").mechanism_name(),
            "SCRAM-SHA-512"
        );
        assert_eq!(
            SaslConfig::new(SaslMechanism::ScramSha512, "a", "p"),
            SaslConfig::scram_sha512("a", "p")
        );
    }

    #[test]
    fn plain_message_is_empty_authzid_then_nul_separated_user_and_password() {
        assert_eq!(plain_message("u", "p"), b"\0u\0p");
    }

    #[test]
    fn random_nonce_client_first_names_the_user() {
        let mut c = ScramClient::new(ScramHash::Sha256, "alice", "pw");
        let first = String::from_utf8(c.client_first()).unwrap();
        assert!(first.starts_with("n,,n=alice,r=") && first.len() > "n,,n=alice,r=".len());
    }

    /// The error a fresh SHA-256 client (nonce [`NONCE`]) gets for `server_first`.
    fn server_first_error(server_first: &[u8]) -> ScramError {
        let mut c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", NONCE);
        c.client_first();
        c.handle_server_first(server_first).unwrap_err()
    }

    #[test]
    fn server_nonce_not_extending_ours_is_refused_with_its_message() {
        let err = server_first_error(b"r=someone-else,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        assert_eq!(
            err.to_string(),
            "SCRAM: server nonce does not extend the client nonce"
        );
    }

    #[test]
    fn iteration_count_below_4096_is_refused_and_named() {
        let err =
            server_first_error(b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000");
        assert!(err.to_string().contains("iteration count 1000"), "{err}");
    }
}
