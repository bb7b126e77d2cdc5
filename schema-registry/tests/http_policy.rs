//! The client's retry policy on a loopback HTTP server that answers with
//! scripted statuses (Apicurio cannot be made to answer 5xx or 429 on
//! demand): 5xx and 429 are retried up to `max.retries` with the request
//! sent again, any other 4xx is not, the headers Confluent's client sends
//! are sent, and OAUTHBEARER tokens come from the issuer endpoint once and
//! ride on every request.

use kafka_client::Properties;
use kafka_schema_registry::{RegistryError, SchemaRegistryClient};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server answering the n-th request with `answers[n]` (the last one
/// after that); it records each request's head.
async fn scripted(answers: Vec<(u16, &'static str)>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let log = log.clone();
            let answers = answers.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    while buf.len() < end + 4 + length {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..end + 4 + length);
                    let n = {
                        let mut l = log.lock().unwrap();
                        l.push(head);
                        l.len() - 1
                    };
                    let (status, body) = answers[n.min(answers.len() - 1)];
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, seen)
}

fn client(port: u16, retries: &str) -> SchemaRegistryClient {
    let mut p = Properties::new([
        (
            "schema.registry.url",
            format!("http://127.0.0.1:{port}/api").as_str(),
        ),
        ("max.retries", retries),
        ("retries.wait.ms", "1"),
        ("retries.max.wait.ms", "4"),
        ("basic.auth.credentials.source", "USER_INFO"),
        ("basic.auth.user.info", "fred:s3cret"),
    ]);
    let c = SchemaRegistryClient::from_properties(&mut p).unwrap();
    p.finish().unwrap();
    c
}

const UNAVAILABLE: (u16, &str) = (503, r#"{"error_code":50003,"message":"busy"}"#);
const SCHEMA: (u16, &str) = (200, r#"{"schema":"\"string\""}"#);

/// Invariant: 5xx and 429 answers are retried until one succeeds, within
/// `max.retries`.
#[tokio::test]
async fn unavailable_answers_are_retried() {
    let (port, seen) = scripted(vec![UNAVAILABLE, (429, "slow down"), SCHEMA]).await;
    let schema = client(port, "2").schema_by_id(1).await.unwrap();
    assert_eq!(schema.schema, "\"string\"");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|h| h.starts_with("GET /api/schemas/ids/1 HTTP/1.1"))
    );
    // Confluent's headers and the credentials on every attempt.
    for h in seen.iter() {
        assert!(
            h.contains("Accept: application/vnd.schemaregistry.v1+json"),
            "{h}"
        );
        assert!(h.contains("Authorization: Basic ZnJlZDpzM2NyZXQ="), "{h}");
    }
}

/// Invariant: after `max.retries` retries the last unavailable answer is
/// the error, retriable, with the number of attempts.
#[tokio::test]
async fn retries_end_after_max_retries() {
    let (port, seen) = scripted(vec![UNAVAILABLE]).await;
    let e = client(port, "1").schema_by_id(1).await.unwrap_err();
    assert!(
        matches!(
            e,
            RegistryError::Unavailable {
                status: 503,
                code: 50003,
                attempts: 2,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.is_retriable());
    assert_eq!(seen.lock().unwrap().len(), 2);
}

/// Invariant: a 4xx is never retried.
#[tokio::test]
async fn refusals_are_not_retried() {
    let (port, seen) = scripted(vec![(
        404,
        r#"{"error_code":40403,"message":"Schema 1 not found"}"#,
    )])
    .await;
    let e = client(port, "5").schema_by_id(1).await.unwrap_err();
    assert!(matches!(e, RegistryError::SchemaNotFound(_)), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    let (port, seen) = scripted(vec![(401, "")]).await;
    let e = client(port, "5").subjects().await.unwrap_err();
    assert!(
        matches!(e, RegistryError::Unauthorized { status: 401, .. }),
        "{e}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// Invariant: a non-JSON 200 answer is a typed malformed-answer error.
#[tokio::test]
async fn unreadable_answers_are_malformed() {
    let (port, _) = scripted(vec![(200, "<html>proxy login</html>")]).await;
    let e = client(port, "0").subjects().await.unwrap_err();
    assert!(matches!(e, RegistryError::Malformed { .. }), "{e}");
}

/// Invariant: with OAUTHBEARER every request carries the issuer's token,
/// fetched once and reused while valid, with Confluent Cloud's headers.
#[tokio::test]
async fn oauthbearer_tokens_ride_on_every_request() {
    use std::time::{Duration, SystemTime};
    let jwt = kafka_client::oauth::unsecured_jws(
        "sr-client",
        SystemTime::now(),
        Duration::from_secs(3600),
        &[],
    );
    let token_answer: &'static str = Box::leak(
        format!(r#"{{"access_token":"{jwt}","token_type":"bearer","expires_in":3600}}"#)
            .into_boxed_str(),
    );
    let (idp, idp_seen) = scripted(vec![(200, token_answer)]).await;
    let (port, seen) = scripted(vec![SCHEMA]).await;
    let mut p = Properties::new([
        (
            "schema.registry.url",
            format!("http://127.0.0.1:{port}/api").as_str(),
        ),
        ("bearer.auth.credentials.source", "OAUTHBEARER"),
        (
            "bearer.auth.issuer.endpoint.url",
            format!("http://127.0.0.1:{idp}/token").as_str(),
        ),
        ("bearer.auth.client.id", "sr-client"),
        ("bearer.auth.client.secret", "hunter2"),
        ("bearer.auth.scope", "registry"),
        ("bearer.auth.logical.cluster", "lsrc-1"),
        ("bearer.auth.identity.pool.id", "pool-1"),
    ]);
    let c = SchemaRegistryClient::from_properties(&mut p).unwrap();
    p.finish().unwrap();
    c.schema_by_id(1).await.unwrap();
    c.schema_by_id(2).await.unwrap();
    let idp_seen = idp_seen.lock().unwrap();
    assert_eq!(idp_seen.len(), 1, "one token fetch for two requests");
    assert!(idp_seen[0].starts_with("POST /token "), "{}", idp_seen[0]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for h in seen.iter() {
        assert!(h.contains(&format!("Authorization: Bearer {jwt}")), "{h}");
        assert!(h.contains("target-sr-cluster: lsrc-1"), "{h}");
        assert!(h.contains("Confluent-Identity-Pool-Id: pool-1"), "{h}");
    }
}

/// Invariant: an issuer that refuses the client is a typed credentials
/// error, and the registry is not asked.
#[tokio::test]
async fn a_refused_token_is_a_credentials_error() {
    let (idp, _) = scripted(vec![(401, r#"{"error":"invalid_client"}"#)]).await;
    let (port, seen) = scripted(vec![SCHEMA]).await;
    let mut p = Properties::new([
        (
            "schema.registry.url",
            format!("http://127.0.0.1:{port}/api").as_str(),
        ),
        ("bearer.auth.credentials.source", "OAUTHBEARER"),
        (
            "bearer.auth.issuer.endpoint.url",
            format!("http://127.0.0.1:{idp}/token").as_str(),
        ),
        ("bearer.auth.client.id", "sr-client"),
        ("bearer.auth.client.secret", "wrong"),
    ]);
    let c = SchemaRegistryClient::from_properties(&mut p).unwrap();
    let e = c.schema_by_id(1).await.unwrap_err();
    assert!(
        matches!(
            e,
            RegistryError::Credentials {
                retriable: false,
                ..
            }
        ),
        "{e}"
    );
    assert!(seen.lock().unwrap().is_empty());
}
