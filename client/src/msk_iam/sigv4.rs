//! AWS Signature Version 4, query-string ("presigned URL") form, for a
//! `GET /` with an empty body and `host` as the only signed header: the
//! request shape of Amazon MSK's IAM authentication. Pure computation:
//! time and credentials are passed in.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// SHA-256 of the empty payload (a `GET` has no body).
pub(crate) const EMPTY_PAYLOAD_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// What is signed.
#[derive(Debug)]
pub(crate) struct Presign<'a> {
    /// The `host` header (the only signed header).
    pub(crate) host: &'a str,
    /// The region of the credential scope.
    pub(crate) region: &'a str,
    /// The service of the credential scope (`kafka-cluster` for MSK).
    pub(crate) service: &'a str,
    /// Query parameters besides the `X-Amz-*` ones (unencoded).
    pub(crate) params: &'a [(&'a str, &'a str)],
    /// The access key id.
    pub(crate) access_key_id: &'a str,
    /// The secret access key.
    pub(crate) secret_access_key: &'a str,
    /// The session token of temporary credentials.
    pub(crate) session_token: Option<&'a str>,
    /// Seconds since the Unix epoch: the signing time.
    pub(crate) unix_time: u64,
    /// `X-Amz-Expires`, seconds.
    pub(crate) expires_secs: u64,
}

/// The pieces of a presigned request; the tests compare each with the
/// published test suite.
#[derive(Debug)]
pub(crate) struct Presigned {
    /// The canonical request (the text that is hashed); read by the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) canonical_request: String,
    /// The string to sign; read by the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) string_to_sign: String,
    /// `X-Amz-Signature`, lower-case hex.
    pub(crate) signature: String,
    /// The full query string: the canonical query then `X-Amz-Signature`.
    pub(crate) query: String,
    /// `X-Amz-Date`, `YYYYMMDD'T'HHMMSS'Z'`.
    pub(crate) amz_date: String,
}

/// Signs `p`.
pub(crate) fn presign(p: &Presign<'_>) -> Presigned {
    let amz_date = amz_date(p.unix_time);
    let date = &amz_date[..8];
    let scope = format!("{date}/{}/{}/aws4_request", p.region, p.service);
    let credential = format!("{}/{scope}", p.access_key_id);
    let expires = p.expires_secs.to_string();
    let mut params: Vec<(String, String)> = p
        .params
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    let mut amz = vec![
        ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
        ("X-Amz-Credential", credential.as_str()),
        ("X-Amz-Date", amz_date.as_str()),
        ("X-Amz-Expires", expires.as_str()),
        ("X-Amz-SignedHeaders", "host"),
    ];
    if let Some(token) = p.session_token {
        amz.push(("X-Amz-Security-Token", token));
    }
    params.extend(amz.iter().map(|(k, v)| (uri_encode(k), uri_encode(v))));
    // Sorted by encoded name, then value (byte order).
    params.sort();
    let canonical_query = params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let canonical_request = format!(
        "GET\n/\n{canonical_query}\nhost:{}\n\nhost\n{EMPTY_PAYLOAD_SHA256}",
        p.host.trim()
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{}", p.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [p.region, p.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, string_to_sign.as_bytes()));
    let query = format!("{canonical_query}&X-Amz-Signature={signature}");
    Presigned {
        canonical_request,
        string_to_sign,
        signature,
        query,
        amz_date,
    }
}

/// HMAC-SHA-256.
fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC accepts a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// RFC 3986 percent-encoding as SigV4 wants it: everything but
/// `A-Z a-z 0-9 - _ . ~` as `%XX` (upper-case hex), UTF-8 bytes.
pub(crate) fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `YYYYMMDD'T'HHMMSS'Z'` of a Unix time (UTC; proleptic Gregorian).
pub(crate) fn amz_date(unix_time: u64) -> String {
    let days = unix_time / 86_400;
    let secs = unix_time % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// The date `days` after 1970-01-01 (the days-to-civil algorithm of
/// Howard Hinnant's date library, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    //! The AWS SigV4 test suite's query-signing cases (awslabs/aws-c-auth,
    //! `tests/aws-signing-test-suite/v4/<case>/`, all files of one commit):
    //! AKIDEXAMPLE, us-east-1, service `service`, 2015-08-30T12:36:00Z,
    //! host example.amazonaws.com, `GET /`, 3600 s.
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    /// 2015-08-30T12:36:00Z.
    const TIME: u64 = 1_440_938_160;

    fn suite(params: &[(&str, &str)], session_token: Option<&str>) -> Presigned {
        presign(&Presign {
            host: "example.amazonaws.com",
            region: "us-east-1",
            service: "service",
            params,
            access_key_id: "AKIDEXAMPLE",
            secret_access_key: SECRET,
            session_token,
            unix_time: TIME,
            expires_secs: 3600,
        })
    }

    /// The last line of a string to sign: the canonical request's hash.
    fn request_hash(p: &Presigned) -> &str {
        p.string_to_sign.rsplit('\n').next().unwrap()
    }

    #[test]
    fn get_vanilla() {
        let p = suite(&[], None);
        assert_eq!(
            p.canonical_request,
            "GET\n/\nX-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host\nhost:example.amazonaws.com\n\nhost\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            p.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb7705b4aa3cb8e8f5e1e0b3d4c0b64030797a313c8ceee43e33117cc43eadc5"
        );
        assert_eq!(
            p.signature,
            "e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d"
        );
    }

    #[test]
    fn get_vanilla_with_session_token() {
        let p = suite(
            &[],
            Some("6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"),
        );
        assert!(p.canonical_request.contains("&X-Amz-Expires=3600&X-Amz-Security-Token=6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267&X-Amz-SignedHeaders=host\n"));
        assert_eq!(
            request_hash(&p),
            "cb30434103085aa9e73780fc60dc9a9df818fd2a7b1de12a9f6f4d791f898761"
        );
        assert_eq!(
            p.signature,
            "7ff2b50b376cb4d151970630573d6291dc128cc5c2a12ffb237f73cc53f67b6c"
        );
    }

    /// Parameters are sorted by name, whatever order they come in.
    #[test]
    fn get_vanilla_query_order_key_case() {
        let p = suite(&[("Param2", "value2"), ("Param1", "value1")], None);
        assert!(
            p.canonical_request
                .starts_with("GET\n/\nParam1=value1&Param2=value2&X-Amz-Algorithm=")
        );
        assert_eq!(
            request_hash(&p),
            "b82878ecb2ab7ad194b9fe79b2946c2a36ee1627a219408089b2d774c1a0cedb"
        );
        assert_eq!(
            p.signature,
            "86012e2c9ad4d77369f5d81c11f75158aae4f895a085212cc6d3f923d300bed5"
        );
    }

    /// Unreserved characters are not encoded.
    #[test]
    fn get_vanilla_query_unreserved() {
        let unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let p = suite(&[(unreserved, unreserved)], None);
        assert_eq!(
            request_hash(&p),
            "c77f27ef2b499fbfee3f0b3c88bba7057b2b31ee9b62047078a5e0d6be91fd58"
        );
        assert_eq!(
            p.signature,
            "8e76a88a7433637b12778d5592799b29ad21ecd6cf6325051c21d86f0acda2bf"
        );
    }

    #[test]
    fn reserved_characters_are_percent_encoded_upper_case() {
        assert_eq!(
            uri_encode("kafka-cluster:Connect"),
            "kafka-cluster%3AConnect"
        );
        assert_eq!(uri_encode("a/b+c=d e"), "a%2Fb%2Bc%3Dd%20e");
        assert_eq!(uri_encode("é"), "%C3%A9");
    }

    #[test]
    fn amz_dates() {
        assert_eq!(amz_date(TIME), "20150830T123600Z");
        assert_eq!(amz_date(0), "19700101T000000Z");
        // A leap day and the turn of a century year.
        assert_eq!(amz_date(951_782_400), "20000229T000000Z");
        assert_eq!(amz_date(4_102_444_799), "20991231T235959Z");
        // 2100 is no leap year: Feb 28 is followed by Mar 1.
        assert_eq!(amz_date(4_107_542_399), "21000228T235959Z");
        assert_eq!(amz_date(4_107_542_400), "21000301T000000Z");
    }
}
