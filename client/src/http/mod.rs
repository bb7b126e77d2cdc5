//! A small HTTP/1.1 client for the services around Kafka (an OAuth token
//! endpoint, a schema registry): GET, POST, PUT and DELETE with headers,
//! `Content-Length` and chunked responses, a bounded response size,
//! keep-alive with a few idle connections per (scheme, host, port),
//! timeouts, and `https://` with the brokers' TLS settings ([`TlsConfig`],
//! cargo feature `tls`).
//!
//! The protocol is sans-IO: [`encode_request`] writes a request's bytes and
//! [`ResponseParser`] reads a response from whatever pieces the connection
//! delivers. [`HttpClient`] is the thin tokio driver.
//!
//! [`TlsConfig`]: crate::TlsConfig

mod codec;
mod driver;
mod url;

pub use codec::{MAX_HEAD, Method, ParseError, Response, ResponseParser, encode_request};
pub use driver::{HttpClient, HttpConfig, HttpError};
pub use url::HttpUrl;
