//! SASL/OAUTHBEARER (KIP-255): bearer tokens from a [`TokenProvider`],
//! OIDC client credentials (KIP-768), Kafka's unsecured development
//! tokens, and refresh ahead of expiry.
//!
//! A connection authenticating with OAUTHBEARER:
//! 1. asks the client's provider for a token (a [`RefreshingTokenProvider`]
//!    answers from its cache, refreshed in the background by Java's rules,
//!    [`RefreshConfig::refresh_at`]);
//! 2. sends the client-first message ([`client_first_message`]) in a
//!    SaslAuthenticate; an empty answer means authenticated, a non-empty
//!    one is the broker's error, acknowledged with [`ERROR_ACK`] before the
//!    broker fails the exchange;
//! 3. re-authenticates with the newest token before the session the broker
//!    granted ends (KIP-368; see [`Connection`](crate::Connection)).
//!
//! With properties, `sasl.mechanism=OAUTHBEARER` and either
//! `sasl.oauthbearer.token.endpoint.url` with client credentials, an
//! `OAuthBearerLoginModule` JAAS line with `unsecuredLoginStringClaim_sub`,
//! or Amazon MSK's `sasl.login.callback.handler.class=software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler`
//! (IAM tokens from [`MskIamTokenProvider`], region from the broker host
//! names or `AWS_REGION`):
//!
//! ```
//! use kafka_client::{ClientConfig, SaslMechanism};
//! let cfg = ClientConfig::from_properties([
//!     ("bootstrap.servers", "broker-1:9093"),
//!     ("security.protocol", "SASL_PLAINTEXT"),
//!     ("sasl.mechanism", "OAUTHBEARER"),
//!     ("sasl.oauthbearer.token.endpoint.url", "http://idp.internal/oauth2/token"),
//!     ("sasl.oauthbearer.client.credentials.client.id", "orders"),
//!     ("sasl.oauthbearer.client.credentials.client.secret", "s3cret"),
//!     ("sasl.oauthbearer.scope", "kafka"),
//! ])
//! .unwrap();
//! assert_eq!(cfg.sasl_mechanism, SaslMechanism::OAuthBearer);
//! assert!(!format!("{cfg:?}").contains("s3cret"));
//! ```

mod config;
mod jwt;
mod message;
mod oidc;
mod refresh;
mod token;
mod unsecured;

pub use crate::msk_iam::MskIamTokenProvider;
pub use config::OAuthBearerConfig;
pub(crate) use config::{aws_role_unsupported, is_oauth_jaas, jaas_options, take_from};
pub use jwt::{token_from_jwt, unsecured_jws};
pub use message::{
    ClientFirstMessage, ERROR_ACK, MessageError, check_extension, client_first_message,
    is_valid_bearer,
};
pub use oidc::{
    ClientCredentialsConfig, ClientCredentialsProvider, basic_authorization, form_urlencode,
    is_unretriable_status, parse_token_response, request_body, retry_wait,
};
pub use refresh::{RETRY_AFTER_FAILURE, RefreshConfig, RefreshingTokenProvider};
pub use token::{SharedTokenProvider, Token, TokenError, TokenProvider};
pub use unsecured::UnsecuredTokenProvider;
