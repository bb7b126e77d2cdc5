//! Test machinery of the client crates, public only with the `internals`
//! cargo feature (as rustls exposes `internal`): for the tests, benches and
//! fuzz targets of kafka-eos itself. Not part of the supported API; it may
//! change in any release.
//!
//! ```
//! # #[cfg(feature = "internals")]
//! use kafka_client::internals::scripted_peer::fast_config;
//! # #[cfg(feature = "internals")]
//! assert!(fast_config().request_timeout.as_secs() <= 5);
//! ```

pub mod scripted_peer;

/// KIP-368 re-authentications completed by every connection of this
/// process so far.
pub fn reauthentications() -> u64 {
    crate::connection::REAUTHENTICATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

pub use crate::sasl::{SCRAM_MIN_ITERATIONS, ScramClient, ScramHash, plain_message};
pub use crate::versions::{
    API_VERSIONS_MAX, ApiVersionsOutcome, PRODUCE_MIN_VERSION, client_versions,
    decode_api_versions_body, highest_common, on_api_versions_response,
};
