//! HTTP/1.1 on the wire, sans-IO: a request's bytes, and a response parsed
//! incrementally from whatever the connection delivers.

use super::url::HttpUrl;

/// The largest response head (status line and headers) accepted.
pub const MAX_HEAD: usize = 64 * 1024;

/// A request method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// The bytes of a request for `url` with `headers` and `body`. `Host` and
/// `Content-Length` (when there is a body, or the method is POST or PUT)
/// are added, and `Connection: close` unless `keep_alive`.
///
/// ```
/// use kafka_client::http::{HttpUrl, Method, encode_request};
/// let url = HttpUrl::parse("http://sr:8081/subjects").unwrap();
/// let bytes = encode_request(Method::Get, &url, &[("Accept", "application/json")], b"", true);
/// assert_eq!(bytes, b"GET /subjects HTTP/1.1\r\nHost: sr:8081\r\nAccept: application/json\r\n\r\n");
/// ```
pub fn encode_request(
    method: Method,
    url: &HttpUrl,
    headers: &[(&str, &str)],
    body: &[u8],
    keep_alive: bool,
) -> Vec<u8> {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {}\r\n",
        method.as_str(),
        url.path,
        url.host_header()
    );
    for (k, v) in headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    if !body.is_empty() || matches!(method, Method::Post | Method::Put) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A complete response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (compared ignoring case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why bytes are not an acceptable response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not HTTP/1.x: a bad status line, header, length or chunk.
    #[error("malformed HTTP response: {0}")]
    Malformed(String),
    /// The head or body exceeds the limit the client set.
    #[error("the HTTP response exceeds {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The peer closed the connection before the response ended.
    #[error("the connection closed before the HTTP response ended")]
    Truncated,
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// `Content-Length` bytes.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the peer closes the connection.
    UntilClose,
}

/// A parsed head: status, headers, framing.
type Head = (u16, Vec<(String, String)>, Framing);

/// Where the parser is in the chunked body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Expecting a chunk-size line.
    Size,
    /// Inside a chunk's data: this many bytes remain.
    Data(usize),
    /// Expecting the CRLF after a chunk's data.
    DataEnd,
    /// After the last (zero) chunk: trailer lines until an empty one.
    Trailers,
}

/// A response parsed as its bytes arrive: [`feed`](Self::feed) what the
/// connection delivered, [`eof`](Self::eof) when it closed. Memory follows
/// the bytes received and never exceeds the limits.
///
/// ```
/// use kafka_client::http::ResponseParser;
/// let mut p = ResponseParser::new(1024);
/// assert!(p.feed(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap().is_none());
/// let done = p.feed(b"ngth: 2\r\n\r\n{}").unwrap().unwrap();
/// assert_eq!((done.status, done.body.as_slice()), (200, &b"{}"[..]));
/// assert!(p.reusable(), "keep-alive: the connection can carry the next request");
/// ```
#[derive(Debug)]
pub struct ResponseParser {
    /// The largest body accepted.
    max_body: usize,
    /// Bytes received and not yet consumed (the head, or the chunked body
    /// being parsed).
    buf: Vec<u8>,
    /// Where in `buf` the search for the head's end resumes.
    scanned: usize,
    /// The parsed head: status, headers, framing.
    head: Option<Head>,
    /// The body so far.
    body: Vec<u8>,
    /// The chunked body's state.
    chunk: ChunkState,
    /// The peer asked to close (`Connection: close`, or HTTP/1.0 without
    /// keep-alive), or the body ended at the close.
    close: bool,
    /// Bytes after the end of the response (a peer that sent more than
    /// asked: the connection is not reused).
    excess: bool,
    /// The response is complete.
    done: bool,
}

impl ResponseParser {
    /// A parser for one response whose body may have at most `max_body`
    /// bytes.
    pub fn new(max_body: usize) -> Self {
        Self {
            max_body,
            buf: Vec::new(),
            scanned: 0,
            head: None,
            body: Vec::new(),
            chunk: ChunkState::Size,
            close: false,
            excess: false,
            done: false,
        }
    }

    /// Whether the connection may carry another request after this
    /// complete response.
    pub fn reusable(&self) -> bool {
        self.done && !self.close && !self.excess
    }

    /// Takes `data` received from the connection: the response once it is
    /// complete.
    pub fn feed(&mut self, data: &[u8]) -> Result<Option<Response>, ParseError> {
        if self.done {
            self.excess |= !data.is_empty();
            return Ok(None);
        }
        self.buf.extend_from_slice(data);
        if self.head.is_none() && !self.parse_head()? {
            return Ok(None);
        }
        self.parse_body()
    }

    /// The peer closed the connection: the response if its body ends there,
    /// else [`ParseError::Truncated`].
    pub fn eof(&mut self) -> Result<Response, ParseError> {
        match self.head {
            Some((status, ref headers, Framing::UntilClose)) if !self.done => {
                self.done = true;
                self.close = true;
                Ok(Response {
                    status,
                    headers: headers.clone(),
                    body: std::mem::take(&mut self.body),
                })
            }
            _ => Err(ParseError::Truncated),
        }
    }

    /// Parses the head once it is complete; `false` while it is not.
    fn parse_head(&mut self) -> Result<bool, ParseError> {
        loop {
            let from = self.scanned.saturating_sub(3);
            let Some(end) = self.buf[from..]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| from + i)
            else {
                self.scanned = self.buf.len();
                if self.buf.len() > MAX_HEAD {
                    return Err(ParseError::TooLarge { limit: MAX_HEAD });
                }
                return Ok(false);
            };
            if end > MAX_HEAD {
                return Err(ParseError::TooLarge { limit: MAX_HEAD });
            }
            let head = std::str::from_utf8(&self.buf[..end])
                .map_err(|_| malformed("the response head is not UTF-8"))?;
            let mut lines = head.split("\r\n");
            let status_line = lines.next().unwrap_or_default();
            let mut parts = status_line.splitn(3, ' ');
            let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
                return Err(malformed(format!("bad status line {status_line:?}")));
            };
            let http10 = match version {
                "HTTP/1.1" => false,
                "HTTP/1.0" => true,
                _ => return Err(malformed(format!("bad status line {status_line:?}"))),
            };
            let status: u16 = code
                .parse()
                .ok()
                .filter(|s| (100..1000).contains(s))
                .ok_or_else(|| malformed(format!("bad status line {status_line:?}")))?;
            let mut headers = Vec::new();
            let mut length = None;
            let mut chunked = false;
            let mut close = http10;
            for line in lines {
                let (k, v) = line
                    .split_once(':')
                    .ok_or_else(|| malformed(format!("bad header line {line:?}")))?;
                let v = v.trim();
                if k.eq_ignore_ascii_case("content-length") {
                    let n = v
                        .parse::<usize>()
                        .map_err(|_| malformed(format!("bad Content-Length {v:?}")))?;
                    if length.is_some_and(|l| l != n) {
                        return Err(malformed("two different Content-Length headers"));
                    }
                    length = Some(n);
                } else if k.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = v
                        .rsplit(',')
                        .next()
                        .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
                } else if k.eq_ignore_ascii_case("connection") {
                    for token in v.split(',').map(str::trim) {
                        if token.eq_ignore_ascii_case("close") {
                            close = true;
                        } else if token.eq_ignore_ascii_case("keep-alive") && http10 {
                            close = false;
                        }
                    }
                }
                headers.push((k.to_string(), v.to_string()));
            }
            self.buf.drain(..end + 4);
            self.scanned = 0;
            // 1xx: an interim response; the real one follows.
            if (100..200).contains(&status) {
                continue;
            }
            let framing = if status == 204 || status == 304 {
                Framing::Length(0)
            } else if chunked {
                Framing::Chunked
            } else if let Some(n) = length {
                if n > self.max_body {
                    return Err(ParseError::TooLarge {
                        limit: self.max_body,
                    });
                }
                Framing::Length(n)
            } else {
                close = true;
                Framing::UntilClose
            };
            self.close = close;
            self.head = Some((status, headers, framing));
            return Ok(true);
        }
    }

    /// Moves what `buf` holds into the body; the response once complete.
    fn parse_body(&mut self) -> Result<Option<Response>, ParseError> {
        let Some((_, _, framing)) = self.head else {
            return Ok(None);
        };
        let complete = match framing {
            Framing::Length(n) => {
                let want = n - self.body.len();
                let take = want.min(self.buf.len());
                self.body.extend(self.buf.drain(..take));
                self.excess |= !self.buf.is_empty();
                self.body.len() == n
            }
            Framing::UntilClose => {
                self.body.append(&mut self.buf);
                if self.body.len() > self.max_body {
                    return Err(ParseError::TooLarge {
                        limit: self.max_body,
                    });
                }
                false
            }
            Framing::Chunked => self.parse_chunks()?,
        };
        if !complete {
            return Ok(None);
        }
        self.done = true;
        let Some((status, headers, _)) = self.head.take() else {
            return Ok(None);
        };
        Ok(Some(Response {
            status,
            headers,
            body: std::mem::take(&mut self.body),
        }))
    }

    /// Parses chunks from `buf`; `true` once the last chunk and the
    /// trailers are in.
    fn parse_chunks(&mut self) -> Result<bool, ParseError> {
        let mut at = 0;
        let result = loop {
            let rest = &self.buf[at..];
            match self.chunk {
                ChunkState::Size | ChunkState::Trailers => {
                    let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                        if rest.len() > 1024 {
                            break Err(malformed("a chunk-size or trailer line is too long"));
                        }
                        break Ok(false);
                    };
                    let line = &rest[..eol];
                    at += eol + 2;
                    if self.chunk == ChunkState::Trailers {
                        if line.is_empty() {
                            self.excess |= at < self.buf.len();
                            at = self.buf.len();
                            break Ok(true);
                        }
                        continue;
                    }
                    let text = std::str::from_utf8(line)
                        .ok()
                        .map(|t| t.split(';').next().unwrap_or_default().trim())
                        .unwrap_or_default();
                    let size = usize::from_str_radix(text, 16)
                        .map_err(|_| malformed(format!("bad chunk size {text:?}")));
                    let size = match size {
                        Ok(s) => s,
                        Err(e) => break Err(e),
                    };
                    if size > self.max_body.saturating_sub(self.body.len()) {
                        break Err(ParseError::TooLarge {
                            limit: self.max_body,
                        });
                    }
                    self.chunk = if size == 0 {
                        ChunkState::Trailers
                    } else {
                        ChunkState::Data(size)
                    };
                }
                ChunkState::Data(left) => {
                    if rest.is_empty() {
                        break Ok(false);
                    }
                    let take = left.min(rest.len());
                    self.body.extend_from_slice(&rest[..take]);
                    at += take;
                    self.chunk = if take == left {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left - take)
                    };
                }
                ChunkState::DataEnd => {
                    if rest.len() < 2 {
                        break Ok(false);
                    }
                    if &rest[..2] != b"\r\n" {
                        break Err(malformed("chunk data not followed by CRLF"));
                    }
                    at += 2;
                    self.chunk = ChunkState::Size;
                }
            }
        };
        self.buf.drain(..at);
        result
    }
}

fn malformed(reason: impl Into<String>) -> ParseError {
    ParseError::Malformed(reason.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` in pieces of `step`; the response, or the first error.
    fn parse_in_steps(
        bytes: &[u8],
        step: usize,
        limit: usize,
    ) -> Result<(Option<Response>, ResponseParser), ParseError> {
        let mut p = ResponseParser::new(limit);
        for piece in bytes.chunks(step.max(1)) {
            if let Some(r) = p.feed(piece)? {
                return Ok((Some(r), p));
            }
        }
        Ok((None, p))
    }

    #[test]
    fn requests_carry_method_host_length_and_connection() {
        let u = HttpUrl::parse("http://idp:8080/token").unwrap();
        let req = encode_request(
            Method::Post,
            &u,
            &[("Accept", "application/json")],
            b"a=b",
            false,
        );
        assert_eq!(
            req,
            b"POST /token HTTP/1.1\r\nHost: idp:8080\r\nAccept: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\na=b"
        );
        let req = encode_request(Method::Delete, &u, &[], b"", true);
        assert_eq!(req, b"DELETE /token HTTP/1.1\r\nHost: idp:8080\r\n\r\n");
        let req = encode_request(Method::Put, &u, &[], b"", true);
        assert_eq!(
            req,
            b"PUT /token HTTP/1.1\r\nHost: idp:8080\r\nContent-Length: 0\r\n\r\n"
        );
    }

    #[test]
    fn a_length_framed_response_parses_from_any_split() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Type: x\r\nContent-Length: 5\r\n\r\nhello";
        for step in 1..r.len() {
            let (got, p) = parse_in_steps(r, step, 100).unwrap();
            let got = got.unwrap_or_else(|| panic!("step {step}: incomplete"));
            assert_eq!((got.status, got.body.as_slice()), (200, &b"hello"[..]));
            assert_eq!(got.header("content-type"), Some("x"));
            assert!(p.reusable());
        }
    }

    #[test]
    fn a_chunked_response_parses_from_any_split() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n1;ext=1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n";
        for step in 1..r.len() {
            let (got, p) = parse_in_steps(r, step, 100).unwrap();
            let got = got.unwrap_or_else(|| panic!("step {step}: incomplete"));
            assert_eq!(got.body, b"{\"}");
            assert!(p.reusable());
        }
    }

    #[test]
    fn a_body_until_close_ends_at_eof_and_closes() {
        let mut p = ResponseParser::new(100);
        assert_eq!(p.feed(b"HTTP/1.0 503 Busy\r\n\r\nlat").unwrap(), None);
        assert_eq!(p.feed(b"er").unwrap(), None);
        let r = p.eof().unwrap();
        assert_eq!((r.status, r.body.as_slice()), (503, &b"later"[..]));
        assert!(!p.reusable());
    }

    #[test]
    fn connection_close_and_excess_bytes_forbid_reuse() {
        let (r, p) = parse_in_steps(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            100,
            10,
        )
        .unwrap();
        assert!(r.is_some() && !p.reusable());
        let (r, p) =
            parse_in_steps(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", 100, 10).unwrap();
        assert_eq!(r.unwrap().body, b"a");
        assert!(!p.reusable());
        let (_, p) = parse_in_steps(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
            100,
            10,
        )
        .unwrap();
        assert!(p.reusable(), "HTTP/1.0 with keep-alive");
    }

    #[test]
    fn interim_and_bodiless_responses() {
        let (r, _) = parse_in_steps(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            7,
            10,
        )
        .unwrap();
        assert_eq!(r.unwrap().status, 204);
    }

    #[test]
    fn oversized_bodies_are_refused_before_they_are_read() {
        let e =
            parse_in_steps(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", 100, 10).unwrap_err();
        assert_eq!(e, ParseError::TooLarge { limit: 10 });
        let e = parse_in_steps(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n123456\r\n5\r\n",
            100,
            10,
        )
        .unwrap_err();
        assert_eq!(e, ParseError::TooLarge { limit: 10 });
        let mut p = ResponseParser::new(4);
        p.feed(b"HTTP/1.1 200 OK\r\n\r\n1234").unwrap();
        assert_eq!(p.feed(b"5").unwrap_err(), ParseError::TooLarge { limit: 4 });
        let mut p = ResponseParser::new(4);
        let huge_head = vec![b'a'; MAX_HEAD + 1];
        assert_eq!(
            p.feed(&huge_head).unwrap_err(),
            ParseError::TooLarge { limit: MAX_HEAD }
        );
    }

    #[test]
    fn garbage_and_truncation_are_typed_errors() {
        for bad in [
            &b"garbage\r\n\r\n"[..],
            b"HTTP/2 200 OK\r\n\r\n",
            b"HTTP/1.1 abc OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nno-colon\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
        ] {
            assert!(
                matches!(parse_in_steps(bad, 3, 100), Err(ParseError::Malformed(_))),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut p = ResponseParser::new(100);
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}")
            .unwrap();
        assert_eq!(p.eof().unwrap_err(), ParseError::Truncated);
        let mut p = ResponseParser::new(100);
        p.feed(b"HTTP/1.1 200").unwrap();
        assert_eq!(p.eof().unwrap_err(), ParseError::Truncated);
    }
}
