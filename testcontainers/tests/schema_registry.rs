//! The schema registry harness against the real Apicurio Registry.

use kafka_testcontainers::SchemaRegistry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.0 request to the registry; the status code and body.
async fn request(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: not an HTTP response: {out:?}"));
    let body = out
        .split_once("\r\n\r\n")
        .map(|x| x.1)
        .unwrap_or("")
        .to_string();
    (status, body)
}

/// Invariant: a started registry serves Confluent's API (register, then
/// read back by id), and a killed one stops answering.
#[tokio::test(flavor = "multi_thread")]
async fn registry_serves_confluents_api_until_killed() {
    let registry = SchemaRegistry::start().await.expect("start the registry");
    let port = registry.port();
    let (status, body) = request(
        port,
        "POST",
        "/apis/ccompat/v7/subjects/harness-value/versions",
        r#"{"schema":"\"string\""}"#,
    )
    .await;
    assert_eq!(status, 200, "register: {body}");
    let id: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = id["id"].as_i64().expect("an id");
    let (status, body) = request(
        port,
        "GET",
        &format!("/apis/ccompat/v7/schemas/ids/{id}"),
        "",
    )
    .await;
    assert_eq!(status, 200, "by id: {body}");
    assert!(body.contains("string"), "{body}");
    registry.kill();
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err(),
        "a killed registry still accepts connections"
    );
}
