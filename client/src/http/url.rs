//! `http://` and `https://` URLs: what a request needs of them.

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpUrl {
    /// `https`?
    pub https: bool,
    /// Host name or IP (IPv6 without brackets).
    pub host: String,
    /// Port (80 / 443 by default).
    pub port: u16,
    /// Path and query, at least `/`.
    pub path: String,
}

impl HttpUrl {
    /// Parses `http(s)://host[:port][/path]`; credentials in the URL are
    /// refused (see [`Self::parse_with_user_info`]).
    ///
    /// ```
    /// use kafka_client::http::HttpUrl;
    /// let u = HttpUrl::parse("http://registry:8081/apis/ccompat/v7").unwrap();
    /// assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("registry", 8081, "/apis/ccompat/v7"));
    /// ```
    pub fn parse(url: &str) -> Result<Self, String> {
        match Self::parse_with_user_info(url)? {
            (_, Some(_)) => Err("credentials in the URL are not supported".into()),
            (u, None) => Ok(u),
        }
    }

    /// Parses `http(s)://[user:password@]host[:port][/path]`: the URL and
    /// its user info (`user:password`, as given), if any.
    pub fn parse_with_user_info(url: &str) -> Result<(Self, Option<String>), String> {
        let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(format!("{url:?} is not an http:// or https:// URL"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let (user_info, authority) = match authority.rsplit_once('@') {
            Some((u, a)) => (Some(u.to_string()), a),
            None => (None, authority),
        };
        let default_port = if https { 443 } else { 80 };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("unclosed [ in the URL")?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse().map_err(|_| format!("bad port {p:?}"))?,
                None if after.is_empty() => default_port,
                None => return Err("junk after ] in the URL".into()),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_string(),
                    p.parse().map_err(|_| format!("bad port {p:?}"))?,
                ),
                None => (authority.to_string(), default_port),
            }
        };
        if host.is_empty() {
            return Err("no host in the URL".into());
        }
        let url = Self {
            https,
            host,
            port,
            path,
        };
        Ok((url, user_info))
    }

    /// This URL with `path` (which starts with `/`, and may carry a query)
    /// appended to its own path, without doubling the `/` between them.
    pub fn join(&self, path: &str) -> Self {
        let base = self.path.trim_end_matches('/');
        Self {
            path: format!("{base}{path}"),
            ..self.clone()
        }
    }

    /// The `Host` header's value: the port only when it is not the
    /// scheme's default.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.https { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl std::fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.host_header(), self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_default_and_explicit_ports() {
        let u = HttpUrl::parse("https://idp.example/oauth2/token?x=1").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.port, u.path.as_str()),
            (true, "idp.example", 443, "/oauth2/token?x=1")
        );
        let u = HttpUrl::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!((u.port, u.path.as_str()), (8080, "/"));
        let u = HttpUrl::parse("http://[::1]:9/t").unwrap();
        assert_eq!(
            (u.host.as_str(), u.host_header()),
            ("::1", "[::1]:9".to_string())
        );
        for bad in [
            "ftp://x",
            "http://",
            "http://h:port",
            "http://u:p@h/",
            "http://[::1",
        ] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn user_info_and_join() {
        let (u, info) = HttpUrl::parse_with_user_info("http://fred:s3:cr@t@sr:8081/api/").unwrap();
        assert_eq!(info.as_deref(), Some("fred:s3:cr@t"));
        assert_eq!((u.host.as_str(), u.port), ("sr", 8081));
        assert_eq!(u.join("/subjects?x=1").path, "/api/subjects?x=1");
        let u = HttpUrl::parse("http://sr").unwrap();
        assert_eq!(u.join("/schemas/ids/1").path, "/schemas/ids/1");
        assert_eq!(u.to_string(), "http://sr/");
    }
}
