//! Kafka's unsecured OAUTHBEARER tokens, for development brokers that run
//! the default `OAuthBearerUnsecuredValidatorCallbackHandler`.

use super::jwt::unsecured_jws;
use super::token::{Token, TokenError, TokenProvider};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Unsigned JWS tokens (`alg: none`) naming a principal, as Java's
/// `OAuthBearerUnsecuredLoginCallbackHandler` makes from
/// `unsecuredLoginStringClaim_sub`. Never for production: anyone can make
/// one; a broker validating signatures refuses them.
#[derive(Debug, Clone)]
pub struct UnsecuredTokenProvider {
    /// The `sub` claim.
    principal: String,
    /// `unsecuredLoginLifetimeSeconds` (default 3600).
    lifetime: Duration,
    /// Other `unsecuredLoginStringClaim_<name>` claims.
    claims: Vec<(String, String)>,
    /// `unsecuredLoginExtension_<name>` SASL extensions.
    extensions: BTreeMap<String, String>,
}

impl UnsecuredTokenProvider {
    /// Tokens for `principal`, valid one hour.
    ///
    /// ```
    /// use kafka_client::oauth::UnsecuredTokenProvider;
    /// use std::time::Duration;
    /// let dev = UnsecuredTokenProvider::new("alice").lifetime(Duration::from_secs(600)).claim("scope", "kafka");
    /// # let _ = dev;
    /// ```
    pub fn new(principal: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
            lifetime: Duration::from_secs(3600),
            claims: Vec::new(),
            extensions: BTreeMap::new(),
        }
    }

    /// Sets the tokens' lifetime.
    pub fn lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// Adds a string claim.
    pub fn claim(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.claims.push((name.into(), value.into()));
        self
    }

    /// Adds a SASL extension.
    pub fn extension(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extensions.insert(key.into(), value.into());
        self
    }
}

impl TokenProvider for UnsecuredTokenProvider {
    async fn token(&self) -> Result<Token, TokenError> {
        let now = SystemTime::now();
        let jws = unsecured_jws(&self.principal, now, self.lifetime, &self.claims);
        let mut token = Token::new(jws, now + self.lifetime, &self.principal).with_issued_at(now);
        for (k, v) in &self.extensions {
            token = token.with_extension(k, v);
        }
        Ok(token)
    }
}
