//! Each message described once.
//!
//! A message (or a struct nested in one) is written as a table with the
//! crate's `message!` and `nested!` macros: one
//! line per field with its Rust type, and where they differ from the
//! defaults its default value, the versions that carry it, the versions in
//! which it may be null and its tag. Everything else follows from that one
//! description:
//!
//! - the struct, with `unknown_tagged_fields` last (unless the message is
//!   never flexible), and its `Default`;
//! - encoding: first every field a version cannot carry is checked to hold
//!   its default (else [`EncodeErrorKind::FieldNotInVersion`], naming the
//!   field's path; an ignorable field is dropped instead) and every null to be allowed
//!   ([`EncodeErrorKind::NullNotAllowed`]), then the fields are written in
//!   order, tagged fields last in one tagged section (flexible versions only;
//!   a tagged field holding its default is not written);
//! - decoding: the fields in order, the tagged section in flexible versions
//!   (known tags into their fields, the rest kept verbatim), a null where the
//!   version does not allow one is [`DecodeErrorKind::UnexpectedNull`];
//! - the encoded size, and for messages the API key, version range and first
//!   flexible version ([`Message`](crate::Message));
//! - with the `arbitrary` feature (and in tests), a proptest strategy per
//!   message and version ([`VersionedArbitrary`](crate::testing::VersionedArbitrary)):
//!   random values for the fields the version carries (null only where it
//!   may be), defaults for the others, random unknown tags where flexible.
//!
//! Adding a message is writing its two tables (request and response) and its
//! line in [`for_each_message!`](crate::for_each_message), which runs its
//! round trip for every version in the tests and adds it to the fuzz targets.
//!
//! The wire type follows from the Rust type ([`Field`]): `bool`, `i8`, `i16`,
//! `u16`, `i32`, `u32`, `i64`, `f64`, [`Uuid`], `String` (STRING /
//! COMPACT_STRING), `Bytes` (BYTES, also the RECORDS type), `Vec<T>` (ARRAY /
//! COMPACT_ARRAY), a nested struct, and `Option<String>`, `Option<Bytes>`,
//! `Option<Vec<T>>` and `Option<Struct>` (an INT8 presence marker, -1 for
//! null) for nullable ones.
//!
//! **Nulls, one rule.** A nullable field is an `Option`. It may be `None`
//! only in the versions its `nullable` range names (the schema's
//! `nullableVersions`); elsewhere `None` is refused on encode and a null on
//! the wire is refused on decode. Its default is the schema's default: `None`
//! where the schema says `"default": "null"`, otherwise the empty value.
//!
//! A field line reads
//!
//! ```text
//! /// Doc comment.
//! name: Type [= default] [, versions RANGE] [, nullable RANGE] [, tag N];
//! ```
//!
//! with the options in that order, `RANGE` any `i16` range expression
//! (`5..`, `..=12`, `3..=7`, `..`), and the field path for error messages
//! made of the struct's path and the field name.
//!
//! **Ignorable fields.** A field the schema marks `"ignorable": true` has
//! its versions written `versions ignorable(RANGE)`. Encoding at a version
//! without it drops a non-default value silently (as Kafka's generated Java
//! writers do) instead of failing with
//! [`EncodeErrorKind::FieldNotInVersion`]; decoding is unchanged.

use crate::primitives::{
    Reader, TaggedFields, Uuid, put_array, put_bool, put_bytes, put_nullable_array,
    put_nullable_bytes, put_nullable_string, put_string, put_uuid, uvarint_len,
};
use crate::{DecodeError, EncodeError};
#[cfg(doc)]
use crate::{DecodeErrorKind, EncodeErrorKind};
use bytes::{BufMut, Bytes};
use std::ops::{Bound, RangeBounds};

/// True when `versions` holds `version` (any `i16` range expression).
#[inline(always)]
pub(crate) fn has(versions: impl RangeBounds<i16>, version: i16) -> bool {
    versions.contains(&version)
}

/// The versions of a field the schema marks `"ignorable": true`: encoding
/// at a version outside `R` drops the field's value instead of failing (see
/// the [module docs](self)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ignorable<R>(R);

/// Marks a field's version range as ignorable (`versions ignorable(3..)`).
pub(crate) const fn ignorable<R>(versions: R) -> Ignorable<R> {
    Ignorable(versions)
}

impl<R: RangeBounds<i16>> RangeBounds<i16> for Ignorable<R> {
    #[inline(always)]
    fn start_bound(&self) -> Bound<&i16> {
        self.0.start_bound()
    }
    #[inline(always)]
    fn end_bound(&self) -> Bound<&i16> {
        self.0.end_bound()
    }
}

/// A field's version range: plain (a value outside it must be the default)
/// or [`Ignorable`].
pub(crate) trait Versions {
    /// True when a value outside the range is dropped on encode.
    #[inline(always)]
    fn ignorable(&self) -> bool {
        false
    }
}

impl Versions for std::ops::Range<i16> {}
impl Versions for std::ops::RangeFrom<i16> {}
impl Versions for std::ops::RangeTo<i16> {}
impl Versions for std::ops::RangeInclusive<i16> {}
impl Versions for std::ops::RangeToInclusive<i16> {}
impl Versions for std::ops::RangeFull {}
impl<R> Versions for Ignorable<R> {
    #[inline(always)]
    fn ignorable(&self) -> bool {
        true
    }
}

/// Writes `version` (INT16) then the struct `write` writes: the layout of
/// the version-prefixed data Kafka embeds in other messages (the consumer
/// protocol's subscription and assignment). A negative version is refused;
/// one above `max` is written as `max`, as Java's `ConsumerProtocol` does.
pub(crate) fn write_version_prefixed(
    version: i16,
    max: i16,
    size: impl FnOnce(i16) -> usize,
    write: impl FnOnce(&mut Vec<u8>, i16) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    if version < 0 {
        return Err(EncodeError::new(
            "version",
            crate::EncodeErrorKind::UnsupportedVersion,
        ));
    }
    let version = version.min(max);
    let mut buf = Vec::with_capacity(2 + size(version));
    buf.put_i16(version);
    write(&mut buf, version)?;
    Ok(buf)
}

/// Reads version-prefixed data (see [`write_version_prefixed`]) as Java's
/// `ConsumerProtocol` does: a negative version is an error, a version above
/// `max` is read as `max` (a newer version only appends fields), and bytes
/// after the fields of the version read are ignored. Returns the version on
/// the wire and the value.
pub(crate) fn read_version_prefixed<T>(
    bytes: &[u8],
    max: i16,
    read: impl FnOnce(&mut Reader<'_>, i16) -> Result<T, DecodeError>,
) -> Result<(i16, T), DecodeError> {
    let mut r = Reader::new(bytes);
    let version = r.i16("version")?;
    let with_version = |mut e: DecodeError| {
        e.version.get_or_insert(version);
        e
    };
    if version < 0 {
        return Err(with_version(DecodeError::new(
            "version",
            crate::DecodeErrorKind::UnsupportedVersion,
        )));
    }
    let value = read(&mut r, version.min(max)).map_err(with_version)?;
    Ok((version, value))
}

/// Checks version-prefixed data at every version in `versions`: 64 random
/// values each (from `arbitrary`) decode back to the same value and version
/// and re-encode to the same bytes, and every truncation fails.
#[cfg(test)]
pub(crate) fn check_version_prefixed_round_trips<T: Clone + std::fmt::Debug + PartialEq>(
    versions: crate::VersionRange,
    arbitrary: impl Fn(i16) -> proptest::strategy::BoxedStrategy<T>,
    encode: impl Fn(&T, i16) -> Result<Vec<u8>, EncodeError>,
    decode: impl Fn(&[u8]) -> Result<(i16, T), DecodeError>,
) {
    use proptest::test_runner::{Config, TestRunner};
    for version in versions.iter() {
        let mut runner = TestRunner::new(Config {
            cases: 64,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&arbitrary(version), |value| {
                let bytes = encode(&value, version).unwrap();
                let (v, back) = decode(&bytes).unwrap();
                proptest::prop_assert_eq!(v, version);
                proptest::prop_assert_eq!(&back, &value);
                proptest::prop_assert_eq!(encode(&back, version).unwrap(), bytes.clone());
                for cut in 0..bytes.len() {
                    proptest::prop_assert!(decode(&bytes[..cut]).is_err());
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("v{version}: {e}"));
    }
}

/// The tagged fields of a struct that is never flexible: none.
pub(crate) static NO_TAGS: TaggedFields = Vec::new();

/// True when `value` equals its field's `default`.
#[inline(always)]
pub(crate) fn is_default<T: PartialEq>(value: &T, default: T) -> bool {
    *value == default
}

/// A value with a Kafka wire form; its encoding may depend on the message
/// version and on whether that version is flexible (compact lengths, tagged
/// sections).
pub(crate) trait Field: Sized {
    /// Writes the value; `name` is the field's path for errors.
    fn put<B: BufMut>(
        &self,
        buf: &mut B,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<(), EncodeError>;

    /// Reads a value.
    fn get(
        r: &mut Reader<'_>,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<Self, DecodeError>;

    /// The number of bytes [`put`](Field::put) writes.
    fn size(&self, version: i16, flex: bool) -> usize;

    /// True for the null of a nullable type.
    #[inline(always)]
    fn is_null(&self) -> bool {
        false
    }
}

macro_rules! fixed_width {
    ($($ty:ty => $put:ident, $get:ident, $width:expr;)*) => {$(
        impl Field for $ty {
            #[inline(always)]
            fn put<B: BufMut>(&self, buf: &mut B, _: i16, _: bool, _: &'static str) -> Result<(), EncodeError> {
                buf.$put(*self);
                Ok(())
            }
            #[inline(always)]
            fn get(r: &mut Reader<'_>, _: i16, _: bool, name: &'static str) -> Result<Self, DecodeError> {
                r.$get(name)
            }
            #[inline(always)]
            fn size(&self, _: i16, _: bool) -> usize {
                $width
            }
        }
    )*};
}

fixed_width! {
    i8 => put_i8, i8, 1;
    i16 => put_i16, i16, 2;
    u16 => put_u16, u16, 2;
    i32 => put_i32, i32, 4;
    u32 => put_u32, u32, 4;
    i64 => put_i64, i64, 8;
    f64 => put_f64, f64, 8;
}

impl Field for bool {
    #[inline(always)]
    fn put<B: BufMut>(
        &self,
        buf: &mut B,
        _: i16,
        _: bool,
        _: &'static str,
    ) -> Result<(), EncodeError> {
        put_bool(buf, *self);
        Ok(())
    }
    #[inline(always)]
    fn get(r: &mut Reader<'_>, _: i16, _: bool, name: &'static str) -> Result<Self, DecodeError> {
        r.bool(name)
    }
    #[inline(always)]
    fn size(&self, _: i16, _: bool) -> usize {
        1
    }
}

impl Field for Uuid {
    #[inline(always)]
    fn put<B: BufMut>(
        &self,
        buf: &mut B,
        _: i16,
        _: bool,
        _: &'static str,
    ) -> Result<(), EncodeError> {
        put_uuid(buf, self);
        Ok(())
    }
    #[inline(always)]
    fn get(r: &mut Reader<'_>, _: i16, _: bool, name: &'static str) -> Result<Self, DecodeError> {
        r.uuid(name)
    }
    #[inline(always)]
    fn size(&self, _: i16, _: bool) -> usize {
        16
    }
}

/// The length prefix's size: compact `uvarint(len + 1)`, classic `width`.
#[inline(always)]
fn prefix_size(len: Option<usize>, flex: bool, width: usize) -> usize {
    match (len, flex) {
        (None, true) => 1,
        (Some(n), true) => uvarint_len((n as u32).wrapping_add(1)),
        (_, false) => width,
    }
}

macro_rules! length_prefixed {
    ($($ty:ty => $put:ident, $put_nullable:ident, $get:ident, $get_nullable:ident, $classic_width:expr;)*) => {$(
        impl Field for $ty {
            #[inline]
            fn put<B: BufMut>(&self, buf: &mut B, _: i16, flex: bool, name: &'static str) -> Result<(), EncodeError> {
                $put(buf, name, self, flex)
            }
            #[inline]
            fn get(r: &mut Reader<'_>, _: i16, flex: bool, name: &'static str) -> Result<Self, DecodeError> {
                r.$get(name, flex)
            }
            #[inline]
            fn size(&self, _: i16, flex: bool) -> usize {
                prefix_size(Some(self.len()), flex, $classic_width) + self.len()
            }
        }

        impl Field for Option<$ty> {
            #[inline]
            fn put<B: BufMut>(&self, buf: &mut B, _: i16, flex: bool, name: &'static str) -> Result<(), EncodeError> {
                $put_nullable(buf, name, self.as_deref(), flex)
            }
            #[inline]
            fn get(r: &mut Reader<'_>, _: i16, flex: bool, name: &'static str) -> Result<Self, DecodeError> {
                r.$get_nullable(name, flex)
            }
            #[inline]
            fn size(&self, _: i16, flex: bool) -> usize {
                let len = self.as_ref().map(|v| v.len());
                prefix_size(len, flex, $classic_width) + len.unwrap_or(0)
            }
            #[inline(always)]
            fn is_null(&self) -> bool {
                self.is_none()
            }
        }
    )*};
}

length_prefixed! {
    String => put_string, put_nullable_string, string, nullable_string, 2;
    Bytes => put_bytes, put_nullable_bytes, bytes, nullable_bytes, 4;
}

impl<T: Field> Field for Vec<T> {
    #[inline]
    fn put<B: BufMut>(
        &self,
        buf: &mut B,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<(), EncodeError> {
        put_array(buf, name, self, flex, |b, x| x.put(b, version, flex, name))
    }
    #[inline]
    fn get(
        r: &mut Reader<'_>,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<Self, DecodeError> {
        r.array(name, flex, |r| T::get(r, version, flex, name))
    }
    #[inline]
    fn size(&self, version: i16, flex: bool) -> usize {
        prefix_size(Some(self.len()), flex, 4)
            + self.iter().map(|x| x.size(version, flex)).sum::<usize>()
    }
}

impl<T: Field> Field for Option<Vec<T>> {
    #[inline]
    fn put<B: BufMut>(
        &self,
        buf: &mut B,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<(), EncodeError> {
        put_nullable_array(buf, name, self.as_deref(), flex, |b, x| {
            x.put(b, version, flex, name)
        })
    }
    #[inline]
    fn get(
        r: &mut Reader<'_>,
        version: i16,
        flex: bool,
        name: &'static str,
    ) -> Result<Self, DecodeError> {
        r.nullable_array(name, flex, |r| T::get(r, version, flex, name))
    }
    #[inline]
    fn size(&self, version: i16, flex: bool) -> usize {
        match self {
            None => prefix_size(None, flex, 4),
            Some(v) => v.size(version, flex),
        }
    }
    #[inline(always)]
    fn is_null(&self) -> bool {
        self.is_none()
    }
}

/// A random value of a field's type for `version` (tests, fuzzing and the
/// differential tests); `nullable` says whether this version allows null.
///
/// Values are drawn straight from the test runner's random source instead
/// of being built from proptest combinators: a combinator tree per field
/// (a tuple, a map and a box for each of several hundred fields) made the
/// crate's test build three times as slow. The price is shrinking: a
/// failing message is not reduced, it is replayed from the seed proptest
/// saves under `proptest-regressions/`.
#[cfg(any(test, feature = "arbitrary"))]
pub(crate) trait RandomValue: Sized + Clone + std::fmt::Debug + 'static {
    /// A value valid at `version`, null only where `nullable`.
    fn random(rng: &mut proptest::test_runner::TestRng, version: i16, nullable: bool) -> Self;
}

#[cfg(any(test, feature = "arbitrary"))]
pub(crate) use random::{NullableValue, drawn, generated, random_tagged};

#[cfg(any(test, feature = "arbitrary"))]
mod random {
    use super::RandomValue;
    use crate::primitives::{TaggedFields, Uuid};
    use bytes::Bytes;
    use proptest::prelude::Rng;
    use proptest::strategy::{BoxedStrategy, Just, NewTree, Strategy};
    use proptest::test_runner::{TestRng, TestRunner};

    /// A number below `n` (`n` > 0; the bias of the modulo is irrelevant here).
    fn below(rng: &mut TestRng, n: u32) -> u32 {
        rng.next_u32() % n
    }

    // Integers: one draw in eight is 0, one the type's maximum, one its
    // minimum, one a small number (the varint and length edges), the rest
    // uniform over the type.
    macro_rules! random_int {
        ($($ty:ty),*) => {$(
            impl RandomValue for $ty {
                fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
                    match below(rng, 8) {
                        0 => 0,
                        1 => <$ty>::MAX,
                        2 => <$ty>::MIN,
                        3 => below(rng, 200) as $ty,
                        _ => rng.next_u64() as $ty,
                    }
                }
            }
        )*};
    }
    random_int!(i8, i16, u16, i32, u32, i64);

    impl RandomValue for bool {
        fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
            below(rng, 2) == 1
        }
    }

    impl RandomValue for Uuid {
        fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
            let mut id = [0; 16];
            rng.fill_bytes(&mut id);
            id
        }
    }

    impl RandomValue for f64 {
        /// Finite, in ±1e9: NaN never equals itself.
        fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            -1.0e9 + unit * 2.0e9
        }
    }

    impl RandomValue for String {
        /// Up to 12 characters of `[a-zA-Z0-9._-]`.
        fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
            const ALPHABET: &[u8] =
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
            (0..below(rng, 13))
                .map(|_| ALPHABET[below(rng, ALPHABET.len() as u32) as usize] as char)
                .collect()
        }
    }

    /// Up to `max` random bytes.
    fn random_bytes(rng: &mut TestRng, max: u32) -> Vec<u8> {
        let mut bytes = vec![0; below(rng, max + 1) as usize];
        rng.fill_bytes(&mut bytes);
        bytes
    }

    impl RandomValue for Bytes {
        /// Up to 15 bytes.
        fn random(rng: &mut TestRng, _: i16, _: bool) -> Self {
            Bytes::from(random_bytes(rng, 15))
        }
    }

    impl<T: RandomValue> RandomValue for Vec<T> {
        /// Up to 3 elements.
        fn random(rng: &mut TestRng, version: i16, _: bool) -> Self {
            (0..below(rng, 4))
                .map(|_| T::random(rng, version, false))
                .collect()
        }
    }

    /// The types whose wire form has a null (STRING, BYTES, ARRAY, and the
    /// structs `nested!` describes).
    pub(crate) trait NullableValue: RandomValue {}
    impl NullableValue for String {}
    impl NullableValue for Bytes {}
    impl<T: RandomValue> NullableValue for Vec<T> {}

    impl<T: NullableValue> RandomValue for Option<T> {
        /// Null in half the draws where the version allows it.
        fn random(rng: &mut TestRng, version: i16, nullable: bool) -> Self {
            if nullable && below(rng, 2) == 0 {
                None
            } else {
                Some(T::random(rng, version, false))
            }
        }
    }

    /// Unknown tagged fields (up to two, tags 16 to 39, ascending, up to 5
    /// bytes each) when `flexible`, else none.
    pub(crate) fn random_tagged(rng: &mut TestRng, flexible: bool) -> TaggedFields {
        if !flexible {
            return Vec::new();
        }
        let mut fields = std::collections::BTreeMap::new();
        for _ in 0..below(rng, 3) {
            fields.insert(16 + below(rng, 24), Bytes::from(random_bytes(rng, 5)));
        }
        fields.into_iter().collect()
    }

    /// A strategy whose values `draw` takes from the runner's random
    /// source (no shrinking: see [`RandomValue`]).
    struct Drawn<T>(Box<dyn Fn(&mut TestRng) -> T>);

    impl<T> std::fmt::Debug for Drawn<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Drawn")
        }
    }

    impl<T: Clone + std::fmt::Debug> Strategy for Drawn<T> {
        type Tree = Just<T>;
        type Value = T;
        fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
            Ok(Just((self.0)(runner.rng())))
        }
    }

    /// The values `draw` makes, as a proptest strategy.
    pub(crate) fn drawn<T: Clone + std::fmt::Debug + 'static>(
        draw: impl Fn(&mut TestRng) -> T + 'static,
    ) -> BoxedStrategy<T> {
        Drawn(Box::new(draw)).boxed()
    }

    /// Random values of `T` valid at `version`, as a proptest strategy.
    pub(crate) fn generated<T: RandomValue>(version: i16) -> BoxedStrategy<T> {
        drawn(move |rng| T::random(rng, version, false))
    }
}

/// The size of a tagged section holding `known` (tag, payload size) pairs
/// and `unknown` fields.
#[inline]
pub(crate) fn tagged_section_size(
    known_count: usize,
    known_bytes: usize,
    unknown: &TaggedFields,
) -> usize {
    let unknown_bytes: usize = unknown
        .iter()
        .map(|(tag, p)| uvarint_len(*tag) + uvarint_len(p.len() as u32) + p.len())
        .sum();
    uvarint_len((known_count + unknown.len()) as u32) + known_bytes + unknown_bytes
}

/// The size one known tagged field adds to its section.
#[inline]
pub(crate) fn tagged_field_size(tag: u32, payload: usize) -> usize {
    uvarint_len(tag) + uvarint_len(payload as u32) + payload
}

/// Describes a struct nested in a message (see the [module docs](self)):
/// `[in "path.", flexible N]` gives the prefix of its fields' paths and the
/// message's first flexible version (`never` if none).
macro_rules! nested {
    (
        $(#[$meta:meta])*
        pub struct $name:ident [in $path:literal, flexible $flex:tt] {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty $(= $default:expr)? $(, versions $versions:expr)? $(, nullable $nullable:expr)? $(, tag $tag:literal)?;
            )*
        }
    ) => {
        $crate::describe::describe_struct! {
            $(#[$meta])*
            pub struct $name [$path, $flex] {
                $( $(#[$fmeta])* $field : $ty $(= $default)? $(, versions $versions)? $(, nullable $nullable)? $(, tag $tag)?; )*
            }
        }

        impl $crate::describe::Field for $name {
            #[inline]
            fn put<B: ::bytes::BufMut>(&self, buf: &mut B, version: i16, _: bool, _: &'static str) -> Result<(), $crate::EncodeError> {
                self.write_body(buf, version)
            }
            #[inline]
            fn get(r: &mut $crate::primitives::Reader<'_>, version: i16, _: bool, _: &'static str) -> Result<Self, $crate::DecodeError> {
                Self::read_body(r, version)
            }
            #[inline]
            fn size(&self, version: i16, _: bool) -> usize {
                self.body_size(version)
            }
        }

        /// A nullable struct field: an INT8 marker (-1 null, 1 present; on
        /// read any negative value is null, as Kafka's generated readers
        /// do), then the struct.
        impl $crate::describe::Field for Option<$name> {
            #[inline]
            fn put<B: ::bytes::BufMut>(&self, buf: &mut B, version: i16, _: bool, _: &'static str) -> Result<(), $crate::EncodeError> {
                match self {
                    None => {
                        buf.put_i8(-1);
                        Ok(())
                    }
                    Some(v) => {
                        buf.put_i8(1);
                        v.write_body(buf, version)
                    }
                }
            }
            #[inline]
            fn get(r: &mut $crate::primitives::Reader<'_>, version: i16, _: bool, name: &'static str) -> Result<Self, $crate::DecodeError> {
                if r.i8(name)? < 0 {
                    Ok(None)
                } else {
                    $name::read_body(r, version).map(Some)
                }
            }
            #[inline]
            fn size(&self, version: i16, _: bool) -> usize {
                1 + self.as_ref().map_or(0, |v| v.body_size(version))
            }
            #[inline(always)]
            fn is_null(&self) -> bool {
                self.is_none()
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        impl $crate::describe::NullableValue for $name {}
    };
}

/// Describes a top-level message (see the [module docs](self)):
/// `[message ApiKeyVariant, versions MIN..=MAX, flexible N, request Response]`
/// (or `, response` for a response).
macro_rules! message {
    (
        $(#[$meta:meta])*
        pub struct $name:ident [message $api:ident, versions $min:literal ..= $max:literal, flexible $flex:tt, $kind:ident $($response:ident)?] {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty $(= $default:expr)? $(, versions $versions:expr)? $(, nullable $nullable:expr)? $(, tag $tag:literal)?;
            )*
        }
    ) => {
        $crate::describe::describe_struct! {
            $(#[$meta])*
            pub struct $name ["", $flex] {
                $( $(#[$fmeta])* $field : $ty $(= $default)? $(, versions $versions)? $(, nullable $nullable)? $(, tag $tag)?; )*
            }
        }

        impl $crate::Message for $name {
            const API_KEY: $crate::ApiKey = $crate::ApiKey::$api;
            const VERSIONS: $crate::VersionRange = $crate::VersionRange::new($min, $max);
            const FLEXIBLE_MIN: i16 = $crate::describe::describe_struct!(@flex $flex);

            #[inline]
            fn encode_body<B: ::bytes::BufMut>(&self, buf: &mut B, version: i16) -> Result<(), $crate::EncodeError> {
                self.write_body(buf, version)
            }
            #[inline]
            fn decode_body(r: &mut $crate::primitives::Reader<'_>, version: i16) -> Result<Self, $crate::DecodeError> {
                Self::read_body(r, version)
            }
            #[inline]
            fn body_size(&self, version: i16) -> usize {
                self.body_size(version)
            }
        }

        $crate::describe::describe_struct!(@kind $name $kind $($response)?);

        #[cfg(any(test, feature = "arbitrary"))]
        impl $crate::testing::VersionedArbitrary for $name {
            fn arbitrary(version: i16) -> ::proptest::strategy::BoxedStrategy<Self> {
                $crate::describe::generated::<Self>(version)
            }
        }
    };
}

/// The part of `message!` and `nested!` they share: the struct, its
/// `Default` and its `write_body` / `read_body` / `body_size`.
macro_rules! describe_struct {
    (@flex never) => { i16::MAX };
    (@flex $n:literal) => { $n };
    (@kind $name:ident request $response:ident) => { impl $crate::Request for $name { type Response = $response; } };
    (@kind $name:ident response) => { impl $crate::Response for $name {} };
    (@default) => { Default::default() };
    (@default $d:expr) => { $d };
    (@has $version:ident) => { true };
    (@has $version:ident $v:expr) => { $crate::describe::has($v, $version) };
    (@ignorable) => { false };
    (@ignorable $v:expr) => { $crate::describe::Versions::ignorable(&$v) };
    (@nullable $version:ident) => { false };
    (@nullable $version:ident $v:expr) => { $crate::describe::has($v, $version) };
    (@tag) => { None::<u32> };
    (@unknown_ref never $($e:tt)*) => { &$crate::describe::NO_TAGS };
    (@unknown_ref $n:literal $($e:tt)*) => { &$($e)* };
    (@unknown_set never $m:ident $v:ident) => { let _ = $v; };
    (@unknown_random never $m:ident $rng:ident $flex_now:ident) => {};
    (@unknown_random $n:literal $m:ident $rng:ident $flex_now:ident) => {
        $m.unknown_tagged_fields = $crate::describe::random_tagged($rng, $flex_now);
    };
    (@unknown_set $n:literal $m:ident $v:ident) => { $m.unknown_tagged_fields = $v; };
    // A message that is never flexible has no tagged fields at all.
    (@def never [$(#[$meta:meta])*] $name:ident { $( [$(#[$fmeta:meta])*] $field:ident : $ty:ty = ($default:expr), )* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }
    };
    (@def $n:literal [$(#[$meta:meta])*] $name:ident { $( [$(#[$fmeta:meta])*] $field:ident : $ty:ty = ($default:expr), )* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// Unknown tagged fields (flexible versions), kept verbatim.
            pub unknown_tagged_fields: $crate::primitives::TaggedFields,
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $( $field: $default, )*
                    unknown_tagged_fields: Vec::new(),
                }
            }
        }
    };
    (@tag $t:literal) => { Some::<u32>($t) };

    (
        $(#[$meta:meta])*
        pub struct $name:ident [$path:literal, $flex:tt] {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty $(= $default:expr)? $(, versions $versions:expr)? $(, nullable $nullable:expr)? $(, tag $tag:literal)?;
            )*
        }
    ) => {
        $crate::describe::describe_struct! {
            @def $flex [$(#[$meta])*] $name {
                $( [$(#[$fmeta])*] $field : $ty = ($crate::describe::describe_struct!(@default $($default)?)), )*
            }
        }

        #[allow(clippy::needless_update, unused_variables, unused_mut)]
        impl $name {
            /// The first flexible version.
            const FLEX: i16 = $crate::describe::describe_struct!(@flex $flex);
            /// The path of the unknown tagged fields, for errors.
            const TAGS_PATH: &'static str = concat!($path, "_tagged_fields");

            /// Writes the struct at `version` (see [`crate::describe`]).
            #[inline]
            pub(crate) fn write_body<B: ::bytes::BufMut>(&self, buf: &mut B, version: i16) -> Result<(), $crate::EncodeError> {
                use $crate::describe::Field as _;
                let flex = version >= Self::FLEX;
                $(
                    if !$crate::describe::describe_struct!(@has version $($versions)?) {
                        if !$crate::describe::describe_struct!(@ignorable $($versions)?)
                            && !$crate::describe::is_default(&self.$field, $crate::describe::describe_struct!(@default $($default)?))
                        {
                            return Err($crate::EncodeError::not_in_version(concat!($path, stringify!($field))));
                        }
                    } else if !$crate::describe::describe_struct!(@nullable version $($nullable)?) && self.$field.is_null() {
                        return Err($crate::EncodeError::new(
                            concat!($path, stringify!($field)),
                            $crate::EncodeErrorKind::NullNotAllowed,
                        ));
                    }
                )*
                if !flex && !$crate::describe::describe_struct!(@unknown_ref $flex self.unknown_tagged_fields).is_empty() {
                    return Err($crate::EncodeError::not_in_version(Self::TAGS_PATH));
                }
                $(
                    if $crate::describe::describe_struct!(@tag $($tag)?).is_none() && $crate::describe::describe_struct!(@has version $($versions)?) {
                        self.$field.put(buf, version, flex, concat!($path, stringify!($field)))?;
                    }
                )*
                if flex {
                    let mut tags = $crate::primitives::TaggedWriter::new();
                    $(
                        if let Some(tag) = $crate::describe::describe_struct!(@tag $($tag)?) {
                            if $crate::describe::describe_struct!(@has version $($versions)?)
                                && !$crate::describe::is_default(&self.$field, $crate::describe::describe_struct!(@default $($default)?))
                            {
                                tags.field(tag, |b| self.$field.put(b, version, true, concat!($path, stringify!($field))))?;
                            }
                        }
                    )*
                    tags.finish(buf, $crate::describe::describe_struct!(@unknown_ref $flex self.unknown_tagged_fields))?;
                }
                Ok(())
            }

            /// Reads the struct at `version` (see [`crate::describe`]).
            pub(crate) fn read_body(r: &mut $crate::primitives::Reader<'_>, version: i16) -> Result<Self, $crate::DecodeError> {
                use $crate::describe::Field as _;
                let flex = version >= Self::FLEX;
                let mut m = Self::default();
                $(
                    if $crate::describe::describe_struct!(@tag $($tag)?).is_none() && $crate::describe::describe_struct!(@has version $($versions)?) {
                        m.$field = <$ty as $crate::describe::Field>::get(r, version, flex, concat!($path, stringify!($field)))?;
                        if !$crate::describe::describe_struct!(@nullable version $($nullable)?) && m.$field.is_null() {
                            return Err($crate::DecodeError::new(
                                concat!($path, stringify!($field)),
                                $crate::DecodeErrorKind::UnexpectedNull,
                            ));
                        }
                    }
                )*
                if flex {
                    let unknown = r.tagged_fields(Self::TAGS_PATH, |tag, sub| {
                        $(
                            if $crate::describe::describe_struct!(@tag $($tag)?) == Some(tag)
                                && $crate::describe::describe_struct!(@has version $($versions)?)
                            {
                                m.$field = <$ty as $crate::describe::Field>::get(sub, version, true, concat!($path, stringify!($field)))?;
                                return Ok(true);
                            }
                        )*
                        Ok(false)
                    })?;
                    $crate::describe::describe_struct!(@unknown_set $flex m unknown);
                }
                Ok(m)
            }

            /// The number of bytes [`write_body`](Self::write_body) writes at `version`.
            #[inline]
            pub(crate) fn body_size(&self, version: i16) -> usize {
                use $crate::describe::Field as _;
                let flex = version >= Self::FLEX;
                let mut n = 0usize;
                $(
                    if $crate::describe::describe_struct!(@tag $($tag)?).is_none() && $crate::describe::describe_struct!(@has version $($versions)?) {
                        n += self.$field.size(version, flex);
                    }
                )*
                if flex {
                    let (mut count, mut bytes) = (0usize, 0usize);
                    $(
                        if let Some(tag) = $crate::describe::describe_struct!(@tag $($tag)?) {
                            if $crate::describe::describe_struct!(@has version $($versions)?)
                                && !$crate::describe::is_default(&self.$field, $crate::describe::describe_struct!(@default $($default)?))
                            {
                                count += 1;
                                bytes += $crate::describe::tagged_field_size(tag, self.$field.size(version, true));
                            }
                        }
                    )*
                    n += $crate::describe::tagged_section_size(count, bytes, $crate::describe::describe_struct!(@unknown_ref $flex self.unknown_tagged_fields));
                }
                n
            }
        }

        /// A random value valid at a version: each field the version
        /// carries gets a random value (null only where allowed), the
        /// others keep their defaults.
        #[cfg(any(test, feature = "arbitrary"))]
        impl $crate::describe::RandomValue for $name {
            #[allow(unused_variables)]
            fn random(rng: &mut ::proptest::test_runner::TestRng, version: i16, _: bool) -> Self {
                let flex = version >= Self::FLEX;
                let mut m = Self::default();
                $(
                    if $crate::describe::describe_struct!(@has version $($versions)?) {
                        let nullable = $crate::describe::describe_struct!(@nullable version $($nullable)?);
                        m.$field = <$ty as $crate::describe::RandomValue>::random(rng, version, nullable);
                    }
                )*
                $crate::describe::describe_struct!(@unknown_random $flex m rng flex);
                m
            }
        }
    };
}

pub(crate) use describe_struct;
pub(crate) use message;
pub(crate) use nested;
