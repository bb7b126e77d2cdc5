//! A tiny async Kafka client for the harness: connect, send one request, read
//! one response frame. All encoding and decoding is done by `kafka-proto`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
//! use kafka_testcontainers::wire::KafkaConnection;
//! let mut conn = KafkaConnection::connect("127.0.0.1:9092").await?;
//! let versions = conn.api_versions().await?;
//! assert_eq!(versions.error_code, 0);
//! # Ok(()) }
//! ```

use crate::Result;
use crate::error::HarnessError;
use bytes::{Bytes, BytesMut};
use kafka_proto::frame::{FrameDecoder, decode_response_frame, encode_request_frame};
use kafka_proto::messages::{
    ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, FindCoordinatorResponse,
    MetadataRequest, MetadataResponse, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_proto::{Message, Request};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};

/// The client id the harness sends.
pub const CLIENT_ID: &str = "kafka-eos-harness";

/// Default bound on connect and on each request/response exchange.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(10);

/// One TCP connection to a broker.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_proto::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
/// use kafka_testcontainers::wire::{KafkaConnection, negotiate};
/// let mut conn = KafkaConnection::connect("127.0.0.1:9092").await?;
/// let versions = conn.api_versions().await?;
/// let v = negotiate::<DescribeTransactionsRequest>(&versions).expect("Kafka 3.0+");
/// let req = DescribeTransactionsRequest {
///     transactional_ids: vec!["orders-0".into()],
///     ..Default::default()
/// };
/// let resp: DescribeTransactionsResponse = conn.request(&req, v).await?;
/// # let _ = resp;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct KafkaConnection {
    stream: TcpStream,
    next_correlation_id: i32,
    decoder: FrameDecoder,
    buf: BytesMut,
    io_timeout: Duration,
}

impl KafkaConnection {
    /// Connects (bounded by [`DEFAULT_IO_TIMEOUT`]).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # use kafka_testcontainers::wire::KafkaConnection;
    /// # let cluster = kafka_testcontainers::KafkaCluster::builder().start().await?;
    /// let conn = KafkaConnection::connect(cluster.broker_addrs()[0]).await?;
    /// assert_eq!(conn.stream().peer_addr()?, cluster.broker_addrs()[0]);
    /// # Ok(()) }
    /// ```
    pub async fn connect(addr: impl ToSocketAddrs) -> Result<Self> {
        let stream = tokio::time::timeout(DEFAULT_IO_TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| HarnessError::Protocol("connect timed out".into()))?
            .map_err(|e| HarnessError::io("connecting to broker", e))?;
        stream
            .set_nodelay(true)
            .map_err(|e| HarnessError::io("setting TCP_NODELAY", e))?;
        Ok(KafkaConnection {
            stream,
            next_correlation_id: 1,
            decoder: FrameDecoder::default(),
            buf: BytesMut::with_capacity(4096),
            io_timeout: DEFAULT_IO_TIMEOUT,
        })
    }

    /// Changes the bound on each exchange (default [`DEFAULT_IO_TIMEOUT`]).
    pub fn set_io_timeout(&mut self, timeout: Duration) {
        self.io_timeout = timeout;
    }

    /// The underlying stream (e.g. to check the peer address).
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Encodes `req` as a full frame with the next correlation id, returning
    /// `(correlation_id, frame)` without sending it.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # use kafka_testcontainers::wire::KafkaConnection;
    /// use kafka_proto::messages::MetadataRequest;
    /// let mut conn = KafkaConnection::connect("127.0.0.1:9092").await?;
    /// let (id1, frame) = conn.encode(&MetadataRequest::all_topics(), 12)?;
    /// let (id2, _) = conn.encode(&MetadataRequest::all_topics(), 12)?;
    /// assert_eq!(id2, id1 + 1);
    /// conn.send_raw(&frame[..frame.len() - 1]).await?; // a truncated request
    ///     
    /// # Ok(()) }
    /// ```
    pub fn encode<M: Message>(&mut self, req: &M, version: i16) -> Result<(i32, BytesMut)> {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let frame = encode_request_frame(req, version, correlation_id, Some(CLIENT_ID))
            .map_err(|e| HarnessError::Protocol(format!("encoding request: {e}")))?;
        Ok((correlation_id, frame))
    }

    /// Writes raw bytes (normally a complete frame).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<()> {
        tokio::time::timeout(self.io_timeout, self.stream.write_all(bytes))
            .await
            .map_err(|_| HarnessError::Protocol("write timed out".into()))?
            .map_err(|e| HarnessError::io("writing request", e))
    }

    /// Reads one response frame body (without its length prefix), waiting at
    /// most `timeout`. End of stream is an `Io` error of kind `UnexpectedEof`.
    pub async fn read_frame_timeout(&mut self, timeout: Duration) -> Result<Bytes> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(frame) = self
                .decoder
                .decode(&mut self.buf)
                .map_err(|e| HarnessError::Protocol(format!("bad frame: {e}")))?
            {
                return Ok(frame);
            }
            let n = tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf))
                .await
                .map_err(|_| HarnessError::Timeout {
                    what: "a response frame".into(),
                    elapsed: timeout,
                    last: format!("{} bytes buffered", self.buf.len()),
                })?
                .map_err(|e| HarnessError::io("reading response", e))?;
            if n == 0 {
                return Err(HarnessError::io(
                    "reading response",
                    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"),
                ));
            }
        }
    }

    /// Reads one response frame body with the connection's I/O timeout.
    pub async fn read_frame(&mut self) -> Result<Bytes> {
        self.read_frame_timeout(self.io_timeout).await
    }

    /// Sends `req` at `version` and returns its decoded response, checking
    /// the correlation id.
    pub async fn request<R: Request>(&mut self, req: &R, version: i16) -> Result<R::Response> {
        let (correlation_id, frame) = self.encode(req, version)?;
        self.send_raw(&frame).await?;
        let body = self.read_frame().await?;
        let (header, resp) = decode_response_frame::<R::Response>(&body, version)
            .map_err(|e| HarnessError::Protocol(format!("decoding response: {e}")))?;
        if header.correlation_id != correlation_id {
            return Err(HarnessError::Protocol(format!(
                "correlation id {} != expected {correlation_id}",
                header.correlation_id
            )));
        }
        Ok(resp)
    }

    /// ApiVersions v3 (supported by every Kafka 2.4+ broker; carries the
    /// finalized features). A non-zero error code is an error.
    pub async fn api_versions(&mut self) -> Result<ApiVersionsResponse> {
        let req = ApiVersionsRequest {
            client_software_name: "kafka-eos-harness".into(),
            client_software_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        };
        let resp = self.request(&req, 3).await?;
        if resp.error_code != 0 {
            return Err(HarnessError::Kafka {
                api: "ApiVersions",
                code: resp.error_code,
                message: None,
            });
        }
        Ok(resp)
    }
}

impl KafkaConnection {
    /// Metadata for no topics (brokers, controller and cluster id), at the
    /// highest version both sides support per `versions`.
    pub async fn metadata_brokers(
        &mut self,
        versions: &ApiVersionsResponse,
    ) -> Result<MetadataResponse> {
        let v = negotiate::<MetadataRequest>(versions).ok_or_else(|| {
            HarnessError::Protocol("broker lacks a usable Metadata version".into())
        })?;
        let req = MetadataRequest {
            topics: Some(Vec::new()),
            ..Default::default()
        };
        self.request(&req, v).await
    }

    /// FindCoordinator for `key` of `key_type` (0 group, 1 transaction).
    /// Returns `(node_id, host, port)`; a non-zero error code is an error.
    pub async fn find_coordinator(
        &mut self,
        versions: &ApiVersionsResponse,
        key_type: i8,
        key: &str,
    ) -> Result<(i32, String, i32)> {
        let v = negotiate::<FindCoordinatorRequest>(versions).ok_or_else(|| {
            HarnessError::Protocol("broker lacks a usable FindCoordinator version".into())
        })?;
        let mut req = FindCoordinatorRequest {
            key_type,
            ..Default::default()
        };
        if v >= 4 {
            req.coordinator_keys = vec![key.to_string()];
        } else {
            req.key = key.to_string();
        }
        let resp: FindCoordinatorResponse = self.request(&req, v).await?;
        let (code, message, node) = if v >= 4 {
            let c = resp.coordinators.first().ok_or_else(|| {
                HarnessError::Protocol("FindCoordinator returned no coordinators".into())
            })?;
            (
                c.error_code,
                c.error_message.clone(),
                (c.node_id, c.host.clone(), c.port),
            )
        } else {
            (
                resp.error_code,
                resp.error_message.clone(),
                (resp.node_id, resp.host.clone(), resp.port),
            )
        };
        if code != 0 {
            return Err(HarnessError::Kafka {
                api: "FindCoordinator",
                code,
                message,
            });
        }
        Ok(node)
    }

    /// SaslHandshake (v1, mechanism PLAIN) followed by SaslAuthenticate with
    /// `user`/`password`. A rejected password is `HarnessError::Kafka` with
    /// code 58 (SASL_AUTHENTICATION_FAILED).
    pub async fn sasl_plain(&mut self, user: &str, password: &str) -> Result<()> {
        let hs = self
            .request(
                &SaslHandshakeRequest {
                    mechanism: "PLAIN".into(),
                },
                1,
            )
            .await?;
        if hs.error_code != 0 {
            return Err(HarnessError::Kafka {
                api: "SaslHandshake",
                code: hs.error_code,
                message: Some(format!("enabled mechanisms: {:?}", hs.mechanisms)),
            });
        }
        let token = format!("\0{user}\0{password}");
        let auth = self
            .request(
                &SaslAuthenticateRequest {
                    auth_bytes: bytes::Bytes::from(token.into_bytes()),
                    ..Default::default()
                },
                2,
            )
            .await?;
        if auth.error_code != 0 {
            return Err(HarnessError::Kafka {
                api: "SaslAuthenticate",
                code: auth.error_code,
                message: auth.error_message,
            });
        }
        Ok(())
    }
}

/// The finalized level of feature `name` in an ApiVersions response, if any.
pub fn finalized_feature(resp: &ApiVersionsResponse, name: &str) -> Option<i16> {
    resp.finalized_features
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.max_version_level)
}

/// The highest version of `api_key` both the broker (per `resp`) and this
/// crate support, if any.
pub fn negotiate<M: Message>(resp: &ApiVersionsResponse) -> Option<i16> {
    let key = M::API_KEY.code();
    resp.api_keys
        .iter()
        .find(|k| k.api_key == key)
        .and_then(|k| {
            let hi = k.max_version.min(M::VERSIONS.max);
            let lo = k.min_version.max(M::VERSIONS.min);
            (lo <= hi).then_some(hi)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{ApiVersion, FinalizedFeatureKey, ProduceRequest};

    #[test]
    fn finalized_feature_is_the_max_level_of_that_name() {
        let resp = ApiVersionsResponse {
            finalized_features: vec![FinalizedFeatureKey {
                name: "transaction.version".into(),
                max_version_level: 2,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(finalized_feature(&resp, "transaction.version"), Some(2));
        assert_eq!(finalized_feature(&resp, "group.version"), None);
    }

    #[test]
    fn negotiate_is_the_highest_common_version() {
        let resp = ApiVersionsResponse {
            api_keys: vec![ApiVersion {
                api_key: 0,
                min_version: 0,
                max_version: 11,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(negotiate::<ProduceRequest>(&resp), Some(11));
    }
}
