//! Property-testing support: a version-aware strategy per message and the
//! round-trip check every message × version runs. Enabled in tests and with the
//! `arbitrary` feature (used by fuzz targets and the differential tests).

use crate::Message;
use crate::primitives::TaggedFields;
use crate::primitives::Uuid;
use bytes::Bytes;
use proptest::prelude::*;

/// A message that can generate random values valid for a given version: fields
/// the version cannot carry hold their defaults.
pub trait VersionedArbitrary: Message {
    /// A strategy for values encodable at `version`.
    fn arbitrary(version: i16) -> BoxedStrategy<Self>;
}

/// A short string when `present`, else the empty default.
pub fn arb_string(present: bool) -> BoxedStrategy<String> {
    if present {
        "[a-zA-Z0-9._-]{0,12}".boxed()
    } else {
        Just(String::new()).boxed()
    }
}

/// A nullable string when `present`, else `None`.
pub fn opt_nullable_string(present: bool) -> BoxedStrategy<Option<String>> {
    if present {
        proptest::option::of("[a-z0-9.]{0,10}").boxed()
    } else {
        Just(None).boxed()
    }
}

/// A string with a non-empty default when the field is absent.
pub fn arb_string_or(present: bool, default: &'static str) -> BoxedStrategy<String> {
    if present {
        "[a-zA-Z0-9._-]{0,12}".boxed()
    } else {
        Just(default.to_owned()).boxed()
    }
}

/// Random bytes when `present`, else empty.
pub fn arb_bytes(present: bool) -> BoxedStrategy<Bytes> {
    if present {
        proptest::collection::vec(any::<u8>(), 0..16)
            .prop_map(Bytes::from)
            .boxed()
    } else {
        Just(Bytes::new()).boxed()
    }
}

/// A value of `T` when `present`, else `default`.
pub fn arb_or<T: Arbitrary + Clone + std::fmt::Debug + 'static>(
    present: bool,
    default: T,
) -> BoxedStrategy<T> {
    if present {
        any::<T>().boxed()
    } else {
        Just(default).boxed()
    }
}

/// A random UUID when `present`, else all zeros.
pub fn arb_uuid(present: bool) -> BoxedStrategy<Uuid> {
    arb_or(present, [0u8; 16])
}

/// A vector of `elem` (0..4 items) when `present`, else empty.
pub fn arb_vec<T: std::fmt::Debug + Clone + 'static>(
    present: bool,
    elem: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Vec<T>> {
    if present {
        proptest::collection::vec(elem, 0..4).boxed()
    } else {
        Just(Vec::new()).boxed()
    }
}

/// Unknown tagged fields (tags 16 and up, ascending) when `flexible`, else none.
pub fn arb_tagged(flexible: bool) -> BoxedStrategy<TaggedFields> {
    if flexible {
        proptest::collection::btree_map(
            16u32..40,
            proptest::collection::vec(any::<u8>(), 0..6),
            0..3,
        )
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, Bytes::from(v))).collect())
        .boxed()
    } else {
        Just(Vec::new()).boxed()
    }
}

/// Encodes `m` at `version`, decodes it, checks equality, and checks that the
/// re-encoding is byte-identical.
pub fn check_round_trip<M: Message>(m: &M, version: i16) -> Result<(), TestCaseError> {
    let bytes = m
        .encode_to_vec(version)
        .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
    let back =
        M::decode(&bytes, version).map_err(|e| TestCaseError::fail(format!("decode: {e}")))?;
    prop_assert_eq!(&back, m);
    let again = back
        .encode_to_vec(version)
        .map_err(|e| TestCaseError::fail(format!("re-encode: {e}")))?;
    prop_assert_eq!(again, bytes);
    Ok(())
}

/// Failing cases are saved under `proptest-regressions/` (committed) and
/// replayed first on every later run.
fn persistence(
    kind: &str,
    name: &str,
) -> Option<Box<dyn proptest::test_runner::FailurePersistence>> {
    let path: &'static str = Box::leak(
        format!(
            "proptest-regressions/{kind}/{}.txt",
            name.rsplit("::").next().unwrap_or(name)
        )
        .into_boxed_str(),
    );
    Some(Box::new(
        proptest::test_runner::FileFailurePersistence::Direct(path),
    ))
}

/// Runs the round trip for every version of `M` with `cases` random values each.
pub fn round_trip_all_versions<M: VersionedArbitrary>(cases: u32) {
    for version in M::VERSIONS.iter() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases,
            failure_persistence: persistence("round_trip", std::any::type_name::<M>()),
            ..ProptestConfig::default()
        });
        runner
            .run(&M::arbitrary(version), |m| check_round_trip(&m, version))
            .unwrap_or_else(|e| panic!("{:?} v{version}: {e}", M::API_KEY));
    }
}

/// Truncating any valid encoding must fail cleanly (never panic).
pub fn truncations_fail_cleanly<M: VersionedArbitrary>(cases: u32) {
    for version in M::VERSIONS.iter() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases,
            failure_persistence: persistence("truncation", std::any::type_name::<M>()),
            ..ProptestConfig::default()
        });
        runner
            .run(&M::arbitrary(version), |m| {
                let bytes = m.encode_to_vec(version).unwrap();
                for cut in 0..bytes.len() {
                    let _ = M::decode(&bytes[..cut], version);
                }
                let mut extra = bytes.clone();
                extra.push(0);
                prop_assert!(
                    M::decode(&extra, version).is_err(),
                    "trailing byte accepted"
                );
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{:?} v{version}: {e}", M::API_KEY));
    }
}
