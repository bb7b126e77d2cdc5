//! When to fetch the next token (Java's `ExpiringCredentialRefreshingLogin`
//! rules, sans-IO: time and randomness passed in), and the driver that
//! keeps a fresh token in the background.

use super::token::{SharedTokenProvider, Token, TokenError, TokenProvider};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

/// How long after a failed refresh (or a computed time in the past) the
/// next attempt comes (Java's fixed 10 s).
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(10);

/// The least time a cached token must have left to be handed out; one
/// closer to its expiry is fetched again. The broker grants a session no
/// longer than the token's life, and checks its expiry when it reads the
/// SaslAuthenticate request: a token about to expire (a refresh that came
/// late on a loaded machine, or failed) would give a session too short to
/// re-authenticate in, or a refusal.
const LEAST_TOKEN_LIFE: Duration = Duration::from_secs(1);

/// The refresh settings (`sasl.login.refresh.*`), Java's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefreshConfig {
    /// `sasl.login.refresh.window.factor` (0.5–1.0, default 0.8): the share
    /// of the token's lifetime after which it is refreshed.
    pub window_factor: f64,
    /// `sasl.login.refresh.window.jitter` (0–0.25, default 0.05): random
    /// share added to the factor.
    pub window_jitter: f64,
    /// `sasl.login.refresh.min.period.seconds` (0–900, default 60): the
    /// least time between refreshes.
    pub min_period: Duration,
    /// `sasl.login.refresh.buffer.seconds` (0–3600, default 300): the least
    /// time left on the old token when it is refreshed.
    pub buffer: Duration,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        Self {
            window_factor: 0.8,
            window_jitter: 0.05,
            min_period: Duration::from_secs(60),
            buffer: Duration::from_secs(300),
        }
    }
}

impl RefreshConfig {
    /// When a token issued at `issued_at` (or obtained at `now` when
    /// unknown) and expiring at `expires_at` should be refreshed, computed
    /// at `now`; `random` in `[0, 1)` draws the jitter. Java's rules:
    ///
    /// 1. when `now + min_period + buffer` is past expiry, at
    ///    `now + (expiry - now) × (factor + jitter × random)`: the buffers
    ///    cannot both be honoured, so they are ignored;
    /// 2. else at `start + (expiry - start) × pct`, moved back to
    ///    `expiry - buffer` if later, and forward to `now + min_period` if
    ///    earlier;
    /// 3. a token already expired is retried [`RETRY_AFTER_FAILURE`] later.
    ///
    /// ```
    /// use kafka_client::oauth::RefreshConfig;
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    /// // A one-hour token with Java's defaults and no jitter: after 48 minutes.
    /// let at = RefreshConfig::default().refresh_at(Some(now), now + Duration::from_secs(3600), now, 0.0);
    /// assert_eq!(at, now + Duration::from_secs(48 * 60));
    /// ```
    pub fn refresh_at(
        &self,
        issued_at: Option<SystemTime>,
        expires_at: SystemTime,
        now: SystemTime,
        random: f64,
    ) -> SystemTime {
        let Ok(left) = expires_at.duration_since(now) else {
            return now + RETRY_AFTER_FAILURE;
        };
        if left.is_zero() {
            return now + RETRY_AFTER_FAILURE;
        }
        let pct = self.window_factor + self.window_jitter * random.clamp(0.0, 1.0);
        if left < self.min_period + self.buffer {
            return now + left.mul_f64(pct);
        }
        let start = issued_at.filter(|s| *s <= now).unwrap_or(now);
        let lifetime = expires_at.duration_since(start).unwrap_or_default();
        let proposed = start + lifetime.mul_f64(pct);
        let latest = expires_at - self.buffer;
        let earliest = now + self.min_period;
        let at = if proposed > latest {
            latest
        } else if proposed < earliest {
            earliest
        } else {
            proposed
        };
        if at < now {
            now + RETRY_AFTER_FAILURE
        } else {
            at
        }
    }
}

/// What the refresher knows.
#[derive(Debug, Default)]
struct Cache {
    /// The newest token (the one with the latest expiry, as Java picks).
    token: Option<Token>,
    /// Whether the background refresh task runs.
    refreshing: bool,
}

#[derive(Debug)]
struct Inner {
    /// Where tokens come from.
    source: SharedTokenProvider,
    /// When to refresh.
    config: RefreshConfig,
    /// The current token.
    cache: Mutex<Cache>,
    /// One fetch at a time when the cache is empty or stale.
    fetching: tokio::sync::Mutex<()>,
    /// Tokens fetched so far.
    fetched: AtomicU64,
}

/// A [`TokenProvider`] that keeps the last token and fetches the next one
/// in the background before it expires ([`RefreshConfig::refresh_at`]),
/// so that a re-authenticating connection never waits for the identity
/// provider. A connection asking when no valid token is cached (at
/// start, or after failed refreshes) waits for a fetch.
///
/// The background task starts with the first token and ends when the last
/// handle is dropped.
#[derive(Debug, Clone)]
pub struct RefreshingTokenProvider {
    inner: Arc<Inner>,
}

impl RefreshingTokenProvider {
    /// Refreshes the tokens of `source` by `config`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::oauth::TokenError> {
    /// use kafka_client::oauth::{RefreshConfig, RefreshingTokenProvider, TokenProvider, UnsecuredTokenProvider};
    /// let tokens = RefreshingTokenProvider::new(UnsecuredTokenProvider::new("alice"), RefreshConfig::default());
    /// let token = tokens.token().await?; // fetched now, refreshed in the background from here on
    /// # Ok(()) }
    /// ```
    pub fn new(source: impl TokenProvider, config: RefreshConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                source: SharedTokenProvider::new(source),
                config,
                cache: Mutex::new(Cache::default()),
                fetching: tokio::sync::Mutex::new(()),
                fetched: AtomicU64::new(0),
            }),
        }
    }

    /// How many tokens have been fetched from the source.
    pub fn fetched(&self) -> u64 {
        self.inner.fetched.load(Ordering::Relaxed)
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached token if it is still valid at `now` for at least
    /// [`LEAST_TOKEN_LIFE`].
    fn valid(&self, now: SystemTime) -> Option<Token> {
        self.lock()
            .token
            .as_ref()
            .filter(|t| t.expires_at() > now + LEAST_TOKEN_LIFE)
            .cloned()
    }

    /// Fetches a token and caches it if it outlives the cached one.
    async fn fetch(&self) -> Result<Token, TokenError> {
        let token = self.source.token().await?;
        self.fetched.fetch_add(1, Ordering::Relaxed);
        let mut cache = self.lock();
        if cache
            .token
            .as_ref()
            .is_none_or(|t| t.expires_at() <= token.expires_at())
        {
            cache.token = Some(token.clone());
        }
        Ok(token)
    }
}

/// The background refresher: sleeps until the refresh time of the cached
/// token, fetches, repeats; stops when the provider is dropped.
async fn refresh_loop(inner: Weak<Inner>) {
    loop {
        let delay = {
            let Some(inner) = inner.upgrade() else { return };
            let now = SystemTime::now();
            let at = match &inner.lock().token {
                Some(t) => inner.config.refresh_at(
                    t.issued_at(),
                    t.expires_at(),
                    now,
                    rand::random::<f64>(),
                ),
                None => now,
            };
            at.duration_since(now).unwrap_or_default()
        };
        tokio::time::sleep(delay).await;
        let Some(inner) = inner.upgrade() else { return };
        let _one = inner.fetching.lock().await;
        match inner.fetch().await {
            Ok(t) => {
                tracing::debug!(principal = t.principal(), expires_in = ?t.remaining(SystemTime::now()), "OAUTHBEARER token refreshed");
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?RETRY_AFTER_FAILURE, "OAUTHBEARER token refresh failed");
                drop(_one);
                drop(inner);
                tokio::time::sleep(RETRY_AFTER_FAILURE).await;
            }
        }
    }
}

impl TokenProvider for RefreshingTokenProvider {
    async fn token(&self) -> Result<Token, TokenError> {
        if let Some(t) = self.inner.valid(SystemTime::now()) {
            return Ok(t);
        }
        let _one = self.inner.fetching.lock().await;
        // Another caller may have fetched while this one waited.
        let token = match self.inner.valid(SystemTime::now()) {
            Some(t) => t,
            None => self.inner.fetch().await?,
        };
        let start = {
            let mut cache = self.inner.lock();
            !std::mem::replace(&mut cache.refreshing, true)
        };
        if start {
            tokio::spawn(refresh_loop(Arc::downgrade(&self.inner)));
        }
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn t0() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    /// A one-hour token: between 48 and 51 minutes (factor 0.8, jitter 0.05).
    #[test]
    fn one_hour_token_refreshes_between_48_and_51_minutes() {
        let c = RefreshConfig::default();
        let exp = t0() + s(3600);
        assert_eq!(c.refresh_at(Some(t0()), exp, t0(), 0.0), t0() + s(48 * 60));
        assert_eq!(c.refresh_at(Some(t0()), exp, t0(), 1.0), t0() + s(51 * 60));
    }

    /// A 15-minute (MSK-like) token: the proposal (12 min) is later than
    /// expiry minus the 300 s buffer, so 10 minutes.
    #[test]
    fn fifteen_minute_token_is_capped_by_the_buffer() {
        let c = RefreshConfig::default();
        let at = c.refresh_at(Some(t0()), t0() + s(900), t0(), 0.5);
        assert_eq!(at, t0() + s(600));
    }

    /// A 30-second token: rule 1, 80–85 % of the time left.
    #[test]
    fn short_token_ignores_the_buffers() {
        let c = RefreshConfig::default();
        assert_eq!(
            c.refresh_at(Some(t0()), t0() + s(30), t0(), 0.0),
            t0() + s(24)
        );
        assert_eq!(
            c.refresh_at(Some(t0()), t0() + s(30), t0(), 1.0),
            t0() + Duration::from_millis(25_500)
        );
        // Computed later in its life: from now, not from iat.
        let now = t0() + s(10);
        assert_eq!(
            c.refresh_at(Some(t0()), t0() + s(30), now, 0.0),
            now + s(16)
        );
    }

    /// A proposal earlier than `now + min_period` moves to it.
    #[test]
    fn min_period_moves_an_early_refresh_forward() {
        let c = RefreshConfig::default();
        // Two-hour token issued 100 min ago: proposal (96 min after iat) is
        // already past, so now + 60 s; 20 min left > 360 s.
        let iat = t0();
        let now = t0() + s(100 * 60);
        assert_eq!(
            c.refresh_at(Some(iat), t0() + s(7200), now, 0.0),
            now + s(60)
        );
    }

    /// An expired token is retried 10 s later.
    #[test]
    fn expired_token_retries_in_ten_seconds() {
        let c = RefreshConfig::default();
        let now = t0() + s(100);
        assert_eq!(
            c.refresh_at(None, t0(), now, 0.5),
            now + RETRY_AFTER_FAILURE
        );
        assert_eq!(c.refresh_at(None, now, now, 0.5), now + RETRY_AFTER_FAILURE);
    }

    /// Without `iat` the window starts now.
    #[test]
    fn unknown_issue_time_starts_now() {
        let c = RefreshConfig {
            window_jitter: 0.0,
            ..RefreshConfig::default()
        };
        assert_eq!(
            c.refresh_at(None, t0() + s(3600), t0(), 0.7),
            t0() + s(48 * 60)
        );
    }

    #[derive(Debug)]
    struct Counting {
        calls: AtomicU64,
        lifetime: Duration,
        fail: bool,
    }

    impl TokenProvider for Counting {
        async fn token(&self) -> Result<Token, TokenError> {
            let n = self.calls.fetch_add(1, Ordering::Relaxed);
            if self.fail {
                return Err(TokenError::Unavailable {
                    message: "down".into(),
                });
            }
            Ok(Token::new(
                format!("t{n}"),
                SystemTime::now() + self.lifetime,
                "p",
            ))
        }
    }

    /// A refreshing provider (default refresh settings) over a [`Counting`]
    /// source whose tokens live `lifetime`, or that always fails if `fail`.
    fn counting(lifetime: Duration, fail: bool) -> RefreshingTokenProvider {
        RefreshingTokenProvider::new(
            Counting {
                calls: AtomicU64::new(0),
                lifetime,
                fail,
            },
            RefreshConfig::default(),
        )
    }

    /// Concurrent first callers share one fetch; the cached token is
    /// returned until the background refresh replaces it.
    #[tokio::test]
    async fn first_callers_share_one_fetch() {
        let p = counting(s(3600), false);
        let (a, b) = tokio::join!(p.token(), p.token());
        assert_eq!(a.unwrap().value(), "t0");
        assert_eq!(b.unwrap().value(), "t0");
        assert_eq!(p.fetched(), 1);
    }

    /// A short-lived token is replaced in the background before it expires.
    #[tokio::test]
    async fn short_tokens_are_refreshed_in_the_background() {
        let p = counting(Duration::from_millis(300), false);
        assert_eq!(p.token().await.unwrap().value(), "t0");
        tokio::time::timeout(s(10), async {
            while p.fetched() < 3 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("three tokens fetched in the background");
        assert_ne!(p.token().await.unwrap().value(), "t0");
    }

    /// A cached token with less than a second left is not handed out: the
    /// caller waits for a fresh one.
    #[tokio::test]
    async fn a_token_about_to_expire_is_fetched_again() {
        let p = counting(Duration::from_millis(900), false);
        assert_eq!(p.token().await.unwrap().value(), "t0");
        assert_eq!(p.token().await.unwrap().value(), "t1");
        assert_eq!(p.fetched(), 2);
    }

    /// A failing source gives its typed error to the caller.
    #[tokio::test]
    async fn a_failing_source_gives_its_error() {
        let p = counting(s(1), true);
        let e = p.token().await.unwrap_err();
        assert!(e.is_retriable(), "{e}");
    }
}
