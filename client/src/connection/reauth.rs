//! SASL authentication on a connection, and KIP-368 re-authentication
//! before the session the broker granted ends.
//!
//! A re-authentication runs between requests on the live connection:
//! 1. at 85–95 % of the session lifetime (Java's `ReauthInfo`), but no
//!    later than the hold margin before it ends ([`hold_margin`]: at least
//!    two seconds, half of a session shorter than four, and twice the
//!    slowest recent round trip), the
//!    re-authenticator task takes a token first (OAUTHBEARER), so that an
//!    identity provider's hiccup never stalls the connection;
//! 2. it then holds ordinary requests (they queue, in order, without
//!    being written) and sends SaslHandshake and SaslAuthenticate with
//!    correlation ids from the reserved range; responses to requests sent
//!    earlier still arrive first (the broker answers in order) and are
//!    routed by correlation id as usual;
//! 3. once the broker accepts, the held requests are written in order and
//!    the next re-authentication is scheduled from the new lifetime.
//!
//! From the same point on, ordinary requests are held even if the
//! re-authenticator has not run yet (a busy runtime can wake it late):
//! the broker closes the connection on any request it reads after the
//! session ended, but still takes the SaslHandshake that begins a
//! re-authentication. The broker reads a connection's requests one at a
//! time, so a request written before that point can wait behind the ones
//! in flight; the margin gives them time to be read, and grows with the
//! round trips the connection sees. The first request held wakes the
//! re-authenticator if it is not due yet.
//!
//! A refused re-authentication closes the connection (the broker closes it
//! too). A token that cannot be had is asked for again each second until
//! the session ends; then the connection is closed before the broker
//! would kill it on the next request.

use super::Shared;
use crate::error::ConnError;
use crate::oauth::{ERROR_ACK, Token, client_first_message};
use crate::sasl::{SaslConfig, SaslMechanism, ScramClient, ScramHash, plain_message};
use crate::versions::BrokerVersions;
use bytes::Bytes;
use kafka_proto::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The least time between two re-authentications (the broker refuses
/// faster ones with ILLEGAL_SASL_STATE).
const MIN_REAUTH_INTERVAL: Duration = Duration::from_secs(1);

/// Re-authentications completed by every connection of this process (the
/// tests' count; each connection has its own in
/// [`Connection::reauthentications`](crate::Connection::reauthentications)).
pub(crate) static REAUTHENTICATIONS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// How often a missing token is asked for again while the session lasts.
const TOKEN_RETRY: Duration = Duration::from_secs(1);

/// The least time before a session ends from which ordinary requests are
/// held (at most half a short session; see [`hold_margin`]). A broker on a
/// loaded machine can leave a written request unread for over a second.
const LEAST_HOLD_MARGIN: Duration = Duration::from_secs(2);

/// The earliest re-authentication after a session began: a margin over the
/// broker's one second (its clock starts when the handshake arrives).
const EARLIEST_REAUTH: Duration = MIN_REAUTH_INTERVAL.saturating_add(Duration::from_millis(100));

/// How long before the end of a session of `lifetime` no ordinary request
/// is written, on a connection whose slowest recent round trip was
/// `slowest_round_trip`:
/// 1. Java's 5 % (its latest re-authentication point), but at least
///    [`LEAST_HOLD_MARGIN`] (at most half the lifetime): a share
///    alone is too little on short sessions;
/// 2. at least twice the slowest recent round trip: a request written just
///    before the hold waits at the broker behind the others in flight, and
///    a broker slow to answer (a loaded machine, a collection pause) reads
///    it late; if it reads it after the session ended, it closes the
///    connection;
/// 3. never so much that the re-authentication would come sooner than
///    [`EARLIEST_REAUTH`] after the session began (the broker refuses it).
pub(crate) fn hold_margin(lifetime: Duration, slowest_round_trip: Duration) -> Duration {
    let margin = (lifetime / 20).max(LEAST_HOLD_MARGIN.min(lifetime / 2));
    let latency = slowest_round_trip
        .saturating_mul(2)
        .min(lifetime.saturating_sub(EARLIEST_REAUTH));
    margin.max(latency)
}

/// When to re-authenticate a session of `lifetime` that began at
/// `authenticated`: at `0.85 + 0.10 × random` of it (Java's rule), no
/// later than [`hold_margin`] before it ends, and at least
/// [`EARLIEST_REAUTH`] after it began.
pub(crate) fn reauth_at(
    authenticated: Instant,
    lifetime: Duration,
    slowest_round_trip: Duration,
    random: f64,
) -> Instant {
    let share = 0.85 + 0.10 * random.clamp(0.0, 1.0);
    let latest = lifetime - hold_margin(lifetime, slowest_round_trip);
    authenticated
        + lifetime
            .mul_f64(share)
            .min(latest)
            .max(EARLIEST_REAUTH.min(lifetime))
}

/// A SASL session the broker granted (KIP-368).
#[derive(Debug, Clone, Copy)]
pub(super) struct Session {
    /// When the exchange's last SaslAuthenticate was sent: no later than
    /// the broker's start of the session (when it read that request).
    authenticated: Instant,
    /// How long the broker lets it last.
    lifetime: Duration,
}

impl Session {
    /// When the broker ends the session.
    pub(super) fn expiry(&self) -> Instant {
        self.authenticated + self.lifetime
    }

    /// The last moment at which an ordinary request is written on a
    /// connection whose slowest recent round trip was `slowest_round_trip`.
    pub(super) fn write_deadline(&self, slowest_round_trip: Duration) -> Instant {
        self.expiry() - hold_margin(self.lifetime, slowest_round_trip)
    }

    /// When to re-authenticate (see [`reauth_at`]).
    fn reauth_at(&self, slowest_round_trip: Duration, random: f64) -> Instant {
        reauth_at(
            self.authenticated,
            self.lifetime,
            slowest_round_trip,
            random,
        )
    }
}

impl super::State {
    /// Records a new session; the round trips of the session before count
    /// half.
    fn start_session(&mut self, session: Session) {
        self.session = Some(session);
        self.slowest_round_trip /= 2;
    }

    /// Records a session without an end (the broker set no lifetime).
    fn end_session(&mut self) {
        self.session = None;
    }
}

/// The first authentication of a connection; with a session lifetime,
/// starts the re-authenticator task.
pub(super) async fn login(
    shared: &Arc<Shared>,
    versions: &BrokerVersions,
    sasl: &SaslConfig,
    timeout: Duration,
) -> Result<(), ConnError> {
    let token = credentials(shared, sasl).await?;
    let granted = authenticate(shared, versions, sasl, token.as_ref(), timeout).await?;
    if let Some(session) = granted.session {
        shared.lock().start_session(session);
        let task = tokio::spawn(reauth_loop(
            shared.clone(),
            versions.clone(),
            sasl.clone(),
            timeout,
            session,
            granted.answered,
        ));
        let mut st = shared.lock();
        if st.closed.is_some() {
            task.abort();
        } else {
            st.tasks.push(task.abort_handle());
        }
    }
    Ok(())
}

/// What the mechanism needs before the exchange: a token for OAUTHBEARER.
async fn credentials(shared: &Shared, sasl: &SaslConfig) -> Result<Option<Token>, ConnError> {
    if sasl.mechanism != SaslMechanism::OAuthBearer {
        return Ok(None);
    }
    let provider = sasl
        .token_provider
        .as_ref()
        .ok_or_else(|| ConnError::AuthenticationFailed {
            message: "OAUTHBEARER needs a token provider (SaslConfig::oauth_bearer)".into(),
        })?;
    provider
        .token()
        .await
        .map(Some)
        .map_err(|source| ConnError::Token {
            addr: shared.addr.clone(),
            source,
        })
}

/// The re-authenticator, while the broker grants sessions with an end:
/// 1. sleeps until the next re-authentication time, or until a request is
///    held past the session's write deadline (the margin widened), but in
///    any case until [`EARLIEST_REAUTH`] after the broker answered the last
///    exchange (the broker counts its second from when it read that
///    exchange's handshake, which was before its answer);
/// 2. takes a token (OAUTHBEARER), holds ordinary requests and
///    re-authenticates;
/// 3. starts the next session and writes the held requests.
async fn reauth_loop(
    shared: Arc<Shared>,
    versions: BrokerVersions,
    sasl: SaslConfig,
    timeout: Duration,
    mut session: Session,
    mut answered: Instant,
) {
    loop {
        let expiry = session.expiry();
        let earliest = answered + EARLIEST_REAUTH;
        let slowest = shared.lock().slowest_round_trip;
        let at = session
            .reauth_at(slowest, rand::random::<f64>())
            .max(earliest);
        tokio::select! {
            () = tokio::time::sleep_until(at.into()) => {}
            () = held_past_deadline(&shared) => {
                tokio::time::sleep_until(earliest.into()).await;
            }
        }
        let token = loop {
            match credentials(&shared, &sasl).await {
                Ok(t) => break t,
                Err(e) if Instant::now() + TOKEN_RETRY < expiry => {
                    tracing::warn!(addr = %shared.addr, error = %e, "no token to re-authenticate with; asking again");
                    tokio::time::sleep(TOKEN_RETRY).await;
                }
                Err(e) => {
                    shared.fail_all(&format!(
                        "the SASL session ends and no token could be had to re-authenticate: {e}"
                    ));
                    return;
                }
            }
        };
        shared.hold();
        let result = authenticate(&shared, &versions, &sasl, token.as_ref(), timeout).await;
        match result {
            Ok(granted) => {
                shared.reauthentications.fetch_add(1, Ordering::Relaxed);
                REAUTHENTICATIONS.fetch_add(1, Ordering::Relaxed);
                match granted.session {
                    Some(next) => shared.lock().start_session(next),
                    None => shared.lock().end_session(),
                }
                shared.release();
                tracing::debug!(addr = %shared.addr, mechanism = sasl.mechanism_name(),
                    lifetime = ?granted.session.map(|s| s.lifetime), "re-authenticated");
                // A session without an end needs no more re-authentication.
                let Some(next) = granted.session else { return };
                session = next;
                answered = granted.answered;
            }
            Err(e) => {
                tracing::warn!(addr = %shared.addr, error = %e, "re-authentication failed; closing the connection");
                shared.fail_all(&format!("re-authentication failed: {e}"));
                return;
            }
        }
    }
}

/// Returns once a request is held past the session's write deadline (the
/// connection's round trips grew, and so did the hold margin); a wake-up
/// left from an earlier session, with nothing held, is ignored.
async fn held_past_deadline(shared: &Shared) {
    loop {
        shared.reauth_due.notified().await;
        if shared.lock().held.is_some() {
            return;
        }
    }
}

/// What a successful SASL exchange established.
pub(super) struct Granted {
    /// The session, if the broker set it a lifetime.
    session: Option<Session>,
    /// When the broker's last answer arrived.
    answered: Instant,
}

/// SaslHandshake v1 then the mechanism's SaslAuthenticate rounds, with
/// reserved correlation ids; returns the session the broker granted.
pub(super) async fn authenticate(
    shared: &Shared,
    versions: &BrokerVersions,
    sasl: &SaslConfig,
    token: Option<&Token>,
    timeout: Duration,
) -> Result<Granted, ConnError> {
    let hv = versions.version_for::<SaslHandshakeRequest>()?;
    if hv < 1 {
        return Err(ConnError::UnsupportedVersion {
            api: ApiKey::SaslHandshake,
            client: kafka_proto::VersionRange::new(1, 1),
            broker: versions.broker_range(ApiKey::SaslHandshake),
        });
    }
    let sasl_send = async |req: &SaslHandshakeRequest| {
        shared
            .send(req, hv, shared.next_sasl_correlation_id(), timeout, true)
            .await
    };
    let mechanism = sasl.mechanism.name();
    let resp = sasl_send(&SaslHandshakeRequest {
        mechanism: mechanism.to_string(),
    })
    .await?;
    match ErrorCode::from(resp.error_code) {
        ErrorCode::None => {}
        ErrorCode::UnsupportedSaslMechanism => {
            return Err(ConnError::UnsupportedSaslMechanism {
                mechanism: mechanism.to_string(),
                enabled: resp.mechanisms,
            });
        }
        error => {
            return Err(ConnError::Broker {
                api: ApiKey::SaslHandshake,
                version: hv,
                error,
                message: None,
            });
        }
    }
    let av = versions.version_for::<SaslAuthenticateRequest>()?;
    let mut step = Step {
        shared,
        version: av,
        timeout,
        last_sent: Instant::now(),
    };
    let failed = |message: String| ConnError::AuthenticationFailed { message };
    let last = match sasl.mechanism {
        SaslMechanism::Plain => {
            step.send(plain_message(&sasl.username, &sasl.password))
                .await?
        }
        SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
            let hash = if sasl.mechanism == SaslMechanism::ScramSha256 {
                ScramHash::Sha256
            } else {
                ScramHash::Sha512
            };
            let mut scram = ScramClient::new(hash, &sasl.username, &sasl.password);
            let first = step.send(scram.client_first()).await?;
            let fin = scram
                .handle_server_first(&first.auth_bytes)
                .map_err(|e| failed(e.to_string()))?;
            let last = step.send(fin).await?;
            scram
                .handle_server_final(&last.auth_bytes)
                .map_err(|e| failed(e.to_string()))?;
            last
        }
        SaslMechanism::OAuthBearer => {
            let token = token.ok_or_else(|| failed("OAUTHBEARER needs a token".into()))?;
            let first = client_first_message(token.value(), None, token.extensions())
                .map_err(|e| failed(e.to_string()))?;
            let resp = step.send(first).await?;
            if !resp.auth_bytes.is_empty() {
                // The broker's error challenge: acknowledge it so that the
                // broker fails the exchange with its reason.
                let challenge = String::from_utf8_lossy(&resp.auth_bytes).into_owned();
                return Err(match step.send(ERROR_ACK.to_vec()).await {
                    Err(ConnError::AuthenticationFailed { message }) => failed(format!(
                        "the broker refused the token for {}: {message}",
                        token.principal()
                    )),
                    _ => failed(format!(
                        "the broker refused the token for {}: {challenge}",
                        token.principal()
                    )),
                });
            }
            resp
        }
        SaslMechanism::AwsMskIam => {
            let signer = sasl.aws_msk_iam.as_ref().ok_or_else(|| {
                failed(format!(
                    "AWS_MSK_IAM needs a signer: sasl.jaas.config={} required; (and a region: an MSK \
                     bootstrap host name or AWS_REGION)",
                    crate::msk_iam::LOGIN_MODULE
                ))
            })?;
            let host = crate::msk_iam::strip_port(&shared.addr);
            let payload = signer
                .aws_msk_iam_payload(host, std::time::SystemTime::now())
                .map_err(|e| failed(format!("cannot sign the AWS_MSK_IAM message: {e}")))?;
            let resp = step.send(payload.into_bytes()).await?;
            // The plugin answers success with a JSON object (version and
            // request id); an empty answer is a refusal.
            if resp.auth_bytes.is_empty() {
                return Err(failed(
                    "the broker answered the AWS_MSK_IAM message with an empty reply (a refusal)"
                        .into(),
                ));
            }
            resp
        }
    };
    tracing::debug!(addr = %shared.addr, mechanism, lifetime_ms = last.session_lifetime_ms, "SASL authenticated");
    Ok(Granted {
        session: (last.session_lifetime_ms > 0).then(|| Session {
            authenticated: step.last_sent,
            lifetime: Duration::from_millis(last.session_lifetime_ms as u64),
        }),
        answered: Instant::now(),
    })
}

/// One SaslAuthenticate round.
struct Step<'a> {
    /// The connection.
    shared: &'a Shared,
    /// The SaslAuthenticate version.
    version: i16,
    /// The request timeout.
    timeout: Duration,
    /// When the last round was sent: the broker began the session after
    /// it read that round.
    last_sent: Instant,
}

impl Step<'_> {
    async fn send(&mut self, auth_bytes: Vec<u8>) -> Result<SaslAuthenticateResponse, ConnError> {
        self.last_sent = Instant::now();
        let req = SaslAuthenticateRequest {
            auth_bytes: Bytes::from(auth_bytes),
            ..Default::default()
        };
        let resp = self
            .shared
            .send(
                &req,
                self.version,
                self.shared.next_sasl_correlation_id(),
                self.timeout,
                true,
            )
            .await?;
        match ErrorCode::from(resp.error_code) {
            ErrorCode::None => Ok(resp),
            ErrorCode::SaslAuthenticationFailed => Err(ConnError::AuthenticationFailed {
                message: resp
                    .error_message
                    .unwrap_or_else(|| "SASL_AUTHENTICATION_FAILED".into()),
            }),
            error => Err(ConnError::Broker {
                api: ApiKey::SaslAuthenticate,
                version: self.version,
                error,
                message: resp.error_message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's window: 85–95 % of the lifetime, never under a second.
    #[test]
    fn reauth_time_is_85_to_95_percent_of_a_long_lifetime() {
        let t = Instant::now();
        let fast = Duration::from_millis(5);
        // (lifetime, random draw in [0, 1], reauthenticate this long after `t`)
        let cases = [
            (Duration::from_secs(100), 0.0, Duration::from_secs(85)),
            (Duration::from_secs(100), 1.0, Duration::from_secs(95)),
            // A short session: no later than two seconds before its end,
            (Duration::from_secs(10), 0.0, Duration::from_secs(8)),
            // and no later than half of a shorter one.
            (Duration::from_secs(3), 1.0, Duration::from_millis(1500)),
            (Duration::from_millis(1000), 0.0, Duration::from_secs(1)),
            (
                Duration::from_millis(1200),
                0.0,
                Duration::from_millis(1100),
            ),
            (Duration::from_millis(500), 0.0, Duration::from_millis(500)),
        ];
        for (lifetime, random, after) in cases {
            assert_eq!(
                reauth_at(t, lifetime, fast, random),
                t + after,
                "lifetime {lifetime:?}, random {random}"
            );
        }
    }

    /// Requests stop 5 % before the end of a long session, two seconds
    /// before the end of a short one, half of a very short one before its
    /// end, on a connection answered quickly.
    #[test]
    fn requests_are_held_at_least_two_seconds_before_the_session_ends() {
        let fast = Duration::from_millis(5);
        let cases = [
            (Duration::from_secs(100), Duration::from_secs(5)),
            (Duration::from_secs(40), Duration::from_secs(2)),
            (Duration::from_secs(20), Duration::from_secs(2)),
            (Duration::from_secs(3), Duration::from_millis(1500)),
            (Duration::from_millis(1500), Duration::from_millis(750)),
        ];
        for (lifetime, margin) in cases {
            assert_eq!(hold_margin(lifetime, fast), margin, "{lifetime:?}");
        }
    }

    /// A slow connection holds requests twice its slowest round trip before
    /// the end, but never before 1.1 s into the session (the broker
    /// refuses a re-authentication sooner than a second).
    #[test]
    fn the_hold_margin_is_twice_the_slowest_round_trip() {
        let cases = [
            // (lifetime, slowest round trip, margin)
            (
                Duration::from_secs(100),
                Duration::from_secs(4),
                Duration::from_secs(8),
            ),
            (
                Duration::from_secs(20),
                Duration::from_millis(1500),
                Duration::from_secs(3),
            ),
            (
                Duration::from_secs(3),
                Duration::from_millis(800),
                Duration::from_millis(1600),
            ),
            (
                Duration::from_secs(3),
                Duration::from_secs(2),
                Duration::from_millis(1900),
            ),
            (
                Duration::from_millis(1500),
                Duration::from_secs(2),
                Duration::from_millis(750),
            ),
        ];
        for (lifetime, slowest, margin) in cases {
            assert_eq!(
                hold_margin(lifetime, slowest),
                margin,
                "{lifetime:?}, {slowest:?}"
            );
        }
        let t = Instant::now();
        assert_eq!(
            reauth_at(t, Duration::from_secs(3), Duration::from_secs(2), 1.0),
            t + Duration::from_millis(1100)
        );
    }
}
