//! Every proxy fault, against a real broker behind `with_proxies(true)`.

use crate::common;

use kafka_proto::frame::decode_response_frame;
use kafka_proto::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_testcontainers::wire::KafkaConnection;
use kafka_testcontainers::{Direction, HarnessError, KafkaCluster};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn api_versions_request() -> ApiVersionsRequest {
    ApiVersionsRequest {
        client_software_name: "proxy-test".into(),
        client_software_version: "1".into(),
        ..Default::default()
    }
}

async fn round_trip(addr: std::net::SocketAddr) -> Result<Duration, HarnessError> {
    let mut conn = KafkaConnection::connect(addr).await?;
    let t = Instant::now();
    conn.api_versions().await?;
    Ok(t.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_faults_take_effect() {
    let cluster = KafkaCluster::builder()
        .with_proxies(true)
        .start()
        .await
        .expect("start with proxies");
    let proxy = cluster.proxy(0).clone();
    let addr = proxy.listen_addr();
    assert_eq!(cluster.bootstrap(), addr.to_string());
    assert_ne!(cluster.direct_broker_addrs()[0], addr);

    // Brokers advertise the proxy: Metadata fetched through it lists it.
    {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        let versions = conn.api_versions().await.unwrap();
        let md = conn.metadata_brokers(&versions).await.unwrap();
        assert_eq!(md.brokers.len(), 1);
        assert_eq!(md.brokers[0].port, i32::from(addr.port()));
    }

    // Latency: at least the injected amount, per direction.
    let baseline = round_trip(addr).await.unwrap();
    proxy.set_latency(Direction::ClientToServer, Duration::from_millis(150));
    proxy.set_latency(Direction::ServerToClient, Duration::from_millis(100));
    let slow = round_trip(addr).await.unwrap();
    assert!(
        slow >= Duration::from_millis(250),
        "round trip {slow:?} with 250 ms injected (baseline {baseline:?})"
    );
    proxy.clear_faults();

    // Reset: an established connection sees EOF or a reset.
    {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        conn.api_versions().await.unwrap();
        common::wait_for("connection to be tracked", Duration::from_secs(5), || {
            proxy.active_connections() >= 1
        })
        .await;
        proxy.reset_connections();
        let err = conn
            .read_frame_timeout(Duration::from_secs(5))
            .await
            .expect_err("connection must be closed");
        match err {
            HarnessError::Io { source, .. } => assert!(
                matches!(
                    source.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                ),
                "{source:?}"
            ),
            other => panic!("expected EOF/reset, got {other}"),
        }
        // New connections still work.
        round_trip(addr).await.unwrap();
    }

    // Black hole: the connection is accepted but a request gets no answer.
    proxy.set_black_hole(true);
    {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        let (_, frame) = conn.encode(&api_versions_request(), 3).unwrap();
        conn.send_raw(&frame).await.unwrap();
        let err = conn
            .read_frame_timeout(Duration::from_millis(700))
            .await
            .expect_err("black hole must not answer");
        assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
    }
    proxy.set_black_hole(false);
    round_trip(addr).await.unwrap();

    // Pause/resume one direction: the response is held, then delivered.
    {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        proxy.pause(Direction::ServerToClient);
        let (_, frame) = conn.encode(&api_versions_request(), 3).unwrap();
        conn.send_raw(&frame).await.unwrap();
        let err = conn
            .read_frame_timeout(Duration::from_millis(500))
            .await
            .expect_err("paused response must not arrive");
        assert!(matches!(err, HarnessError::Timeout { .. }), "{err}");
        proxy.resume(Direction::ServerToClient);
        let body = conn
            .read_frame_timeout(Duration::from_secs(5))
            .await
            .unwrap();
        let (_, resp) = decode_response_frame::<ApiVersionsResponse>(&body, 3).unwrap();
        assert_eq!(resp.error_code, 0);
    }

    // Drop the Nth response: N never arrives, N+1 does.
    {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        proxy.drop_nth_response(2);
        let mut ids = Vec::new();
        for _ in 0..3 {
            let (id, frame) = conn.encode(&api_versions_request(), 3).unwrap();
            conn.send_raw(&frame).await.unwrap();
            ids.push(id);
        }
        let mut got = Vec::new();
        for _ in 0..2 {
            let body = conn
                .read_frame_timeout(Duration::from_secs(5))
                .await
                .unwrap();
            let (h, _) = decode_response_frame::<ApiVersionsResponse>(&body, 3).unwrap();
            got.push(h.correlation_id);
        }
        assert_eq!(got, vec![ids[0], ids[2]]);
        assert!(
            conn.read_frame_timeout(Duration::from_millis(300))
                .await
                .is_err()
        );
        assert_eq!(proxy.responses_dropped(), 1);
    }

    // Corrupt: the next K bytes of a direction are flipped.
    {
        let req =
            kafka_proto::frame::encode_request_frame(&api_versions_request(), 3, 7, None).unwrap();
        let read_response = |corrupt: bool| {
            let proxy = proxy.clone();
            let req = req.clone();
            async move {
                let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                if corrupt {
                    proxy.corrupt_next(Direction::ServerToClient, 2);
                }
                s.write_all(&req).await.unwrap();
                let mut len = [0u8; 4];
                s.read_exact(&mut len).await.unwrap();
                len
            }
        };
        let clean = read_response(false).await;
        let bad = read_response(true).await;
        assert_eq!(bad[0], clean[0] ^ 0xFF);
        assert_eq!(bad[1], clean[1] ^ 0xFF);
        assert_eq!(&bad[2..], &clean[2..]);
        // And client→server: a corrupted request makes the broker drop the
        // connection instead of answering normally.
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        proxy.corrupt_next(Direction::ClientToServer, 8);
        let (_, frame) = conn.encode(&api_versions_request(), 3).unwrap();
        conn.send_raw(&frame).await.unwrap();
        let r = conn.read_frame_timeout(Duration::from_secs(5)).await;
        assert!(
            r.is_err() || {
                let body = r.unwrap();
                decode_response_frame::<ApiVersionsResponse>(&body, 3).is_err()
            }
        );
    }
    proxy.clear_faults();
    round_trip(addr).await.unwrap();
}
