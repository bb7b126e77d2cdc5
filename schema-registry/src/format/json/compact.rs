//! The JSON text Confluent's Java serializer writes: Jackson's compact
//! form, with Java's number and escape spellings.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io;

/// Appends `value` to `out` as Jackson's `ObjectMapper.writeValueAsBytes`
/// writes it with Confluent's settings (no indentation).
///
/// serde_json's compact form already matches Jackson's in layout (no
/// whitespace), in what it escapes (`"`, `\`, the control characters; not
/// `/`, not non-ASCII) and in integers; two spellings differ and are
/// Jackson's here:
///
/// 1. control characters other than `\b \t \n \f \r` are `\u00XX` with
///    upper-case hex digits (Jackson's `CharTypes` table);
/// 2. a `double` (`float`) is written as Java's `Double.toString`
///    (`Float.toString`): see [`java_double`].
///
/// A non-finite float is written as `null`, as serde_json writes it
/// (Jackson writes `"NaN"`; a `serde_json::Value` cannot hold one).
pub(crate) fn write_jackson_compact<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(out, JacksonCompact);
    value.serialize(&mut ser)
}

/// serde_json's compact formatter with Jackson's float and escape
/// spellings.
struct JacksonCompact;

impl Formatter for JacksonCompact {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(java_double(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        writer.write_all(java_float(value).as_bytes())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        let short = match escape {
            CharEscape::Quote => b'"',
            CharEscape::ReverseSolidus => b'\\',
            CharEscape::Solidus => b'/',
            CharEscape::Backspace => b'b',
            CharEscape::FormFeed => b'f',
            CharEscape::LineFeed => b'n',
            CharEscape::CarriageReturn => b'r',
            CharEscape::Tab => b't',
            CharEscape::AsciiControl(byte) => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xF)]];
                return writer.write_all(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
            }
        };
        writer.write_all(&[b'\\', short])
    }
}

/// A finite `double` spelled as Java's `Double.toString` (JDK 19 and
/// later, and Jackson's fast writer): the shortest decimal that reads back
/// as the same double (with at least two significant digits, the closer
/// one when a single digit would do), written plainly when its magnitude is
/// in `[10^-3, 10^7)` (`0.001`, `1.0`, `1234567.5`) and as `d.dddE±n`
/// otherwise (`1.0E7`, `1.0E-4`, `4.9E-324`).
pub(crate) fn java_double(value: f64) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_string();
    }
    let shortest = format!("{value:e}");
    // A one-digit shortest decimal: Java picks the closest two-digit one
    // (`{:.1e}` rounds the exact value correctly).
    let sci = if digits_of(&shortest).len() == 1 {
        format!("{value:.1e}")
    } else {
        shortest
    };
    java_layout(&sci, value.abs() >= 1e-3 && value.abs() < 1e7)
}

/// [`java_double`] for a `float` (Java's `Float.toString`).
pub(crate) fn java_float(value: f32) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_string();
    }
    let shortest = format!("{value:e}");
    let sci = if digits_of(&shortest).len() == 1 {
        format!("{value:.1e}")
    } else {
        shortest
    };
    java_layout(&sci, value.abs() >= 1e-3 && value.abs() < 1e7)
}

/// The significant digits of Rust's `{:e}` form (`-1.25e-7` -> `125`).
fn digits_of(sci: &str) -> String {
    let mantissa = sci.split('e').next().unwrap_or_default();
    mantissa.chars().filter(char::is_ascii_digit).collect()
}

/// Rust's `{:e}` form (`-1.25e-7`) laid out as Java lays it out.
fn java_layout(sci: &str, plain: bool) -> String {
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    // The two-digit choice may end in a zero (`1.0e16`): Java prints the
    // digits without it (`1.0E16` from `1`, `0.1` from `10`).
    let kept = digits.trim_end_matches('0').len().max(1);
    let digits = &digits[..kept];
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    let (first, rest) = digits.split_at(1);
    if !plain {
        out.push_str(first);
        out.push('.');
        out.push_str(if rest.is_empty() { "0" } else { rest });
        out.push('E');
        out.push_str(&exponent.to_string());
    } else if exponent >= 0 {
        // `exponent + 1` digits before the point, padded with zeros.
        let int_len = exponent as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
        out.push_str(digits);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Java's `Double.toString` spellings (JDK 19+), from its specification:
    /// plain in `[10^-3, 10^7)`, `E` notation outside, at least one
    /// fractional digit, two significant digits at least.
    #[test]
    fn doubles_read_as_java_writes_them() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (-1.0, "-1.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.001, "0.001"),
            (0.000_999, "9.99E-4"),
            (1e-4, "1.0E-4"),
            (123.456, "123.456"),
            (1_234_567.5, "1234567.5"),
            (9_999_999.0, "9999999.0"),
            (1e7, "1.0E7"),
            (12_345_678.0, "1.2345678E7"),
            (1e16, "1.0E16"),
            (-2.5e-10, "-2.5E-10"),
            (1e100, "1.0E100"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (5e-324, "4.9E-324"),
            (100.0, "100.0"),
            (0.3, "0.3"),
            (2.0f64.sqrt(), "1.4142135623730951"),
        ];
        for &(v, java) in cases {
            assert_eq!(java_double(v), java, "{v:e}");
            // The spelling reads back as the same double.
            assert_eq!(java.parse::<f64>().unwrap(), v, "{java}");
        }
    }

    /// Java's `Float.toString` follows the same layout.
    #[test]
    fn floats_read_as_java_writes_them() {
        let cases: &[(f32, &str)] = &[
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e7, "1.0E7"),
            (1.0e-5, "1.0E-5"),
            (3.4028235e38, "3.4028235E38"),
        ];
        for &(v, java) in cases {
            assert_eq!(java_float(v), java, "{v:e}");
        }
    }

    /// Jackson's escapes: short forms for `\b \t \n \f \r`, upper-case hex
    /// for the other control characters; `/`, DEL and non-ASCII raw.
    #[test]
    fn strings_are_escaped_as_jackson_escapes_them() {
        let mut out = Vec::new();
        write_jackson_compact(
            &json!({"s": "a\"b\\c/d\u{8}\t\n\u{c}\r\u{1}\u{1f}\u{7f}é€😀\u{2028}"}),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"s\":\"a\\\"b\\\\c/d\\b\\t\\n\\f\\r\\u0001\\u001F\u{7f}é€😀\u{2028}\"}"
        );
    }

    /// No whitespace anywhere; integers as written.
    #[test]
    fn layout_is_compact() {
        let mut out = Vec::new();
        let v = json!({"a": [1, -2, 18446744073709551615u64, 1.0, null, true, {}], "b": {"c": []}});
        write_jackson_compact(&v, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":[1,-2,18446744073709551615,1.0,null,true,{}],"b":{"c":[]}}"#
        );
    }

    /// A struct's members in declaration order (Jackson's POJO order).
    #[test]
    fn struct_fields_keep_their_order() {
        #[derive(Serialize)]
        struct Order {
            zeta: u32,
            alpha: f64,
        }
        let mut out = Vec::new();
        write_jackson_compact(
            &Order {
                zeta: 1,
                alpha: 2e7,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(out, br#"{"zeta":1,"alpha":2.0E7}"#);
    }
}
