//! The sender's saturation rule against a scripted broker that answers
//! Produce requests only when the test says so.
//!
//! Invariant: a batch appended while every leader has `max.in.flight`
//! requests outstanding (appends then do not wake the sender) is sent as
//! soon as a response frees a slot, and every send resolves Ok at the
//! offset the broker gave it: no record waits for a wake-up that never
//! comes.

use crate::{Producer, ProducerConfig, ProducerRecord};
use bytes::BytesMut;
use kafka_client::internals::scripted_peer::{
    Seen, idempotent_api_versions_reply, metadata_reply_with,
};
use kafka_proto::ApiKey;
use kafka_proto::frame::{
    FrameDecoder, decode_request_frame, encode_response_frame, peek_request_header,
};
use kafka_proto::messages::*;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const TOPIC: &str = "saturated";

/// A Produce request the broker holds, and the way back to its connection.
struct HeldProduce {
    version: i16,
    correlation_id: i32,
    request: ProduceRequest,
    reply: mpsc::UnboundedSender<BytesMut>,
}

impl HeldProduce {
    /// Answers every partition of the request without error, the batch of
    /// partition 0 at `base_offset`.
    fn answer(self, base_offset: i64) {
        let responses = self
            .request
            .topic_data
            .iter()
            .map(|t| ProduceResponseTopicProduceResponse {
                name: t.name.clone(),
                topic_id: t.topic_id,
                partition_responses: t
                    .partition_data
                    .iter()
                    .map(|p| ProduceResponsePartitionProduceResponse {
                        index: p.index,
                        base_offset,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect();
        let resp = ProduceResponse {
            responses,
            ..Default::default()
        };
        let frame = encode_response_frame(&resp, self.version, self.correlation_id).unwrap();
        self.reply.send(frame).unwrap();
    }
}

/// A one-partition broker: answers ApiVersions, Metadata and
/// InitProducerId at once and hands every Produce request to the test.
async fn holding_broker() -> (String, mpsc::UnboundedReceiver<HeldProduce>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (held_tx, held_rx) = mpsc::unbounded_channel();
    let me = addr.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let (mut rd, mut wr) = sock.into_split();
            let (frames_tx, mut frames_rx) = mpsc::unbounded_channel::<BytesMut>();
            let (held_tx, me) = (held_tx.clone(), me.clone());
            tokio::spawn(async move {
                let mut dec = FrameDecoder::default();
                let mut buf = BytesMut::new();
                loop {
                    while let Ok(Some(frame)) = dec.decode(&mut buf) {
                        let header = peek_request_header(&frame).expect("a request header");
                        let s = Seen {
                            api: header.api_key,
                            version: header.api_version,
                            correlation_id: header.correlation_id,
                            body: frame,
                        };
                        let reply = match s.api {
                            ApiKey::ApiVersions => idempotent_api_versions_reply(&s),
                            ApiKey::Metadata => metadata_reply_with(&s, TOPIC, [5; 16], 1, &me),
                            ApiKey::InitProducerId => encode_response_frame(
                                &InitProducerIdResponse {
                                    producer_id: 42,
                                    producer_epoch: 0,
                                    ..Default::default()
                                },
                                s.version,
                                s.correlation_id,
                            )
                            .unwrap(),
                            ApiKey::Produce => {
                                let (_, request) =
                                    decode_request_frame::<ProduceRequest>(&s.body).unwrap();
                                let _ = held_tx.send(HeldProduce {
                                    version: s.version,
                                    correlation_id: s.correlation_id,
                                    request,
                                    reply: frames_tx.clone(),
                                });
                                continue;
                            }
                            other => panic!("unexpected request {other:?}"),
                        };
                        let _ = frames_tx.send(reply);
                    }
                    tokio::select! {
                        read = rd.read_buf(&mut buf) => match read {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        },
                        Some(f) = frames_rx.recv() => {
                            if wr.write_all(&f).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    (addr, held_rx)
}

/// Waits for a condition the producer's tasks make true.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_appended_while_in_flight_is_full_is_sent_when_a_response_frees_a_slot() {
    let (addr, mut held) = holding_broker().await;
    let config = ProducerConfig::builder(&addr)
        .max_in_flight(1usize)
        .linger(Duration::ZERO)
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let first = producer.send(ProducerRecord::new(TOPIC).partition(0).value("first"));
    let request_1 = tokio::time::timeout(Duration::from_secs(10), held.recv())
        .await
        .expect("the first batch is sent")
        .unwrap();
    // One request outstanding on the only leader: the sender waits saturated.
    until("the sender waits saturated", || {
        producer.accumulator().sender_saturated()
    })
    .await;
    let second = producer.send(ProducerRecord::new(TOPIC).partition(0).value("second"));
    assert!(
        producer.accumulator().sender_saturated(),
        "the append woke the sender though it could not send"
    );
    assert!(
        held.try_recv().is_err(),
        "a second request beyond max.in.flight"
    );
    request_1.answer(0);
    let request_2 = tokio::time::timeout(Duration::from_secs(10), held.recv())
        .await
        .expect("the batch appended while saturated is sent once the slot is free")
        .unwrap();
    request_2.answer(1);
    let first = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("first resolves")
        .unwrap();
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("second resolves")
        .unwrap();
    assert_eq!((first.offset, second.offset), (Some(0), Some(1)));
    producer.close(Duration::from_secs(5)).await.unwrap();
}
