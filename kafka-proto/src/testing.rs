//! Property-testing support: a version-aware strategy per message (derived
//! from the message's table, see the crate's `describe` module) and the
//! round-trip check every message × version runs. Enabled in tests and with the
//! `arbitrary` feature (used by fuzz targets and the differential tests).
//!
//! Every message module's tests run both checks over every version of its
//! request and response:
//!
//! ```
//! use kafka_proto::messages::{EndTxnRequest, EndTxnResponse};
//! use kafka_proto::testing::{round_trip_all_versions, truncations_fail_cleanly};
//! round_trip_all_versions::<EndTxnRequest>(16); // decode(encode(m)) == m, bytes stable
//! round_trip_all_versions::<EndTxnResponse>(16);
//! truncations_fail_cleanly::<EndTxnRequest>(8); // a cut never panics; a trailing byte fails
//! ```

use crate::Message;
use crate::primitives::TaggedFields;
use proptest::prelude::*;

/// A message that can generate random values valid for a given version: fields
/// the version cannot carry hold their defaults.
///
/// ```
/// use kafka_proto::{Message, messages::EndTxnRequest, testing::VersionedArbitrary};
/// use proptest::{
///     strategy::{Strategy, ValueTree},
///     test_runner::TestRunner,
/// };
/// let mut runner = TestRunner::deterministic();
/// let req = EndTxnRequest::arbitrary(0)
///     .new_tree(&mut runner)
///     .unwrap()
///     .current();
/// assert!(req.unknown_tagged_fields.is_empty(), "v0 is not flexible");
/// assert!(req.encode_to_vec(0).is_ok());
/// ```
pub trait VersionedArbitrary: Message {
    /// A strategy for values encodable at `version`.
    fn arbitrary(version: i16) -> BoxedStrategy<Self>;
}

/// Unknown tagged fields (tags 16 and up, ascending) when `flexible`, else none.
pub fn arb_tagged(flexible: bool) -> BoxedStrategy<TaggedFields> {
    crate::describe::drawn(move |rng| crate::describe::random_tagged(rng, flexible))
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

/// Decodes a byte fixture written by hand at `version` and checks that the
/// message encodes back to the same bytes; the test then asserts its fields.
///
/// # Panics
///
/// If the bytes do not decode, or the message encodes to other bytes.
pub fn decode_fixture<M: Message>(bytes: &[u8], version: i16) -> M {
    let m = M::decode(bytes, version)
        .unwrap_or_else(|e| panic!("{:?} v{version}: fixture does not decode: {e}", M::API_KEY));
    let again = m.encode_to_vec(version).unwrap_or_else(|e| {
        panic!(
            "{:?} v{version}: fixture does not re-encode: {e}",
            M::API_KEY
        )
    });
    assert_eq!(
        again,
        bytes,
        "{:?} v{version}: fixture re-encodes differently",
        M::API_KEY
    );
    m
}

/// Checks that `m` is refused at `version` because its `field` (dotted path)
/// holds a value that version cannot carry: an error, never a silent drop.
///
/// # Panics
///
/// If `m` encodes at `version`, or fails for another reason or field.
pub fn assert_not_in_version<M: Message>(m: &M, version: i16, field: &str) {
    let err = m.encode_to_vec(version).err().unwrap_or_else(|| {
        panic!(
            "{:?} v{version}: encoded, expected `{field}` refused",
            M::API_KEY
        )
    });
    assert_eq!(
        (err.kind, err.field),
        (crate::EncodeErrorKind::FieldNotInVersion, field),
        "{:?} v{version}",
        M::API_KEY
    );
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

/// Runs `check` on `cases` random values of every version of `M`, saving
/// failures under `proptest-regressions/{kind}/`; panics naming the API and
/// version of the first failure.
fn check_every_version<M: VersionedArbitrary>(
    kind: &str,
    cases: u32,
    check: impl Fn(M, i16) -> Result<(), TestCaseError>,
) {
    for version in M::VERSIONS.iter() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases,
            failure_persistence: persistence(kind, std::any::type_name::<M>()),
            ..ProptestConfig::default()
        });
        runner
            .run(&M::arbitrary(version), |m| check(m, version))
            .unwrap_or_else(|e| panic!("{:?} v{version}: {e}", M::API_KEY));
    }
}

/// Runs the round trip for every version of `M` with `cases` random values each.
pub fn round_trip_all_versions<M: VersionedArbitrary>(cases: u32) {
    check_every_version::<M>("round_trip", cases, |m, version| {
        check_round_trip(&m, version)
    });
}

/// Truncating any valid encoding must fail cleanly (never panic).
pub fn truncations_fail_cleanly<M: VersionedArbitrary>(cases: u32) {
    check_every_version::<M>("truncation", cases, |m, version| {
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
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ApiVersionsRequest;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    #[test]
    fn flexible_tags_are_sorted_and_above_the_known_ones() {
        let mut runner = TestRunner::deterministic();
        for _ in 0..20 {
            let tags = arb_tagged(true).new_tree(&mut runner).unwrap().current();
            assert!(tags.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(tags.iter().all(|(t, _)| *t >= 16));
        }
    }

    #[test]
    fn non_flexible_versions_get_no_tags() {
        let mut runner = TestRunner::deterministic();
        assert!(
            arb_tagged(false)
                .new_tree(&mut runner)
                .unwrap()
                .current()
                .is_empty()
        );
    }

    #[test]
    fn arbitrary_leaves_fields_the_version_lacks_at_their_default() {
        let mut runner = TestRunner::deterministic();
        for _ in 0..20 {
            let req = ApiVersionsRequest::arbitrary(2)
                .new_tree(&mut runner)
                .unwrap()
                .current();
            assert_eq!(req.client_software_name, "", "v2 cannot carry the name");
        }
    }
}
