//! A scripted in-memory broker for tests: a `TcpListener` on 127.0.0.1:0
//! answering each request with the frames a handler builds (or none, to
//! hold it). The unit tests of the client, producer and consumer crates
//! drive their connections, senders and coordinators against it; other
//! crates reach it through the `internals` feature.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use kafka_client::internals::scripted_peer::{Step, peer};
//! let (addr, log) = peer(|| |_seen| Step::Reply(Vec::new())).await; // holds every request
//! assert!(addr.starts_with("127.0.0.1:"));
//! assert!(log.lock().unwrap().is_empty());
//! # }
//! ```

use crate::ConnectionConfig;
use bytes::{Bytes, BytesMut};
use kafka_proto::ApiKey;
use kafka_proto::frame::{
    FrameDecoder, RequestHeaderStart, encode_response_frame, peek_request_header,
};
use kafka_proto::messages::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the peer saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request's API.
    pub api: ApiKey,
    /// Its version.
    pub version: i16,
    /// Its correlation id.
    pub correlation_id: i32,
    /// The whole request frame (header and body).
    pub body: Bytes,
}

/// What the peer does with a request.
#[derive(Debug)]
pub enum Step {
    /// Write these frames (possibly none: hold the request).
    Reply(Vec<BytesMut>),
    /// Write these frames, then close the socket.
    ReplyAndClose(Vec<BytesMut>),
}

/// The (API, version) of every request the peer saw, in order.
pub type Log = Arc<Mutex<Vec<(ApiKey, i16)>>>;

/// Starts a peer that serves every accepted connection with a fresh handler.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kafka_client::internals::scripted_peer::{Step, api_versions, fast_config, peer};
/// use kafka_client::Connection;
/// use kafka_proto::ApiKey;
/// use kafka_proto::frame::encode_response_frame;
/// let (addr, log) = peer(|| {
///     |seen| {
///         let answer = api_versions(&[(ApiKey::ApiVersions, 0, 3), (ApiKey::Produce, 3, 11)]);
///         Step::Reply(vec![
///             encode_response_frame(&answer, seen.version, seen.correlation_id).unwrap(),
///         ])
///     }
/// })
/// .await;
/// let conn = Connection::connect(&addr, &fast_config()).await.unwrap();
/// assert!(conn.negotiated_version(kafka_proto::ApiKey::Produce).is_some());
/// assert_eq!(log.lock().unwrap()[0].0, kafka_proto::ApiKey::ApiVersions);
/// # }
/// ```
pub async fn peer<F, H>(make: F) -> (String, Log)
where
    F: Fn() -> H + Send + 'static,
    H: FnMut(Seen) -> Step + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let log: Log = Arc::default();
    let log2 = log.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut handler = make();
            let log = log2.clone();
            tokio::spawn(async move {
                let mut dec = FrameDecoder::default();
                let mut buf = BytesMut::new();
                loop {
                    while let Some(frame) = dec.decode(&mut buf).unwrap() {
                        let RequestHeaderStart {
                            api_key: api,
                            api_version: version,
                            correlation_id,
                        } = peek_request_header(&frame).expect("a request header");
                        log.lock().unwrap().push((api, version));
                        let step = handler(Seen {
                            api,
                            version,
                            correlation_id,
                            body: frame,
                        });
                        let (frames, close) = match step {
                            Step::Reply(f) => (f, false),
                            Step::ReplyAndClose(f) => (f, true),
                        };
                        for f in frames {
                            if sock.write_all(&f).await.is_err() {
                                return;
                            }
                        }
                        if close {
                            return;
                        }
                    }
                    match sock.read_buf(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                }
            });
        }
    });
    (addr, log)
}

/// An ApiVersions answer listing `keys` as (api, min, max).
pub fn api_versions(keys: &[(ApiKey, i16, i16)]) -> ApiVersionsResponse {
    ApiVersionsResponse::listing(keys)
}

/// A Metadata answer: broker 1 at `addr`, leader of every partition of
/// `topic` (`partitions` of them, topic id `topic_id`).
pub fn metadata_reply_with(
    s: &Seen,
    topic: &str,
    topic_id: [u8; 16],
    partitions: i32,
    addr: &str,
) -> BytesMut {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let resp = MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: host.into(),
            port: port.parse().unwrap(),
            ..Default::default()
        }],
        cluster_id: Some("scripted".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some(topic.into()),
            topic_id,
            partitions: (0..partitions)
                .map(|p| MetadataResponsePartition {
                    partition_index: p,
                    leader_id: 1,
                    leader_epoch: 3,
                    replica_nodes: vec![1],
                    isr_nodes: vec![1],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    encode_response_frame(&resp, s.version, s.correlation_id).unwrap()
}

/// Connection settings with short timeouts for tests against the peer.
pub fn fast_config() -> ConnectionConfig {
    ConnectionConfig {
        request_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    }
}
