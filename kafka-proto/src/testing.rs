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
    ///
    /// ```
    /// # use kafka_proto::{messages::ApiVersionsRequest, testing::VersionedArbitrary};
    /// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
    /// let mut runner = TestRunner::deterministic();
    /// let req = ApiVersionsRequest::arbitrary(2)
    ///     .new_tree(&mut runner)
    ///     .unwrap()
    ///     .current();
    /// assert_eq!(req.client_software_name, "", "v2 cannot carry the name");
    /// ```
    fn arbitrary(version: i16) -> BoxedStrategy<Self>;
}

/// A short string when `present`, else the empty default.
///
/// ```
/// use kafka_proto::testing::arb_string;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert_eq!(
///     arb_string(false).new_tree(&mut runner).unwrap().current(),
///     ""
/// );
/// assert!(
///     arb_string(true)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .len()
///         <= 12
/// );
/// ```
pub fn arb_string(present: bool) -> BoxedStrategy<String> {
    if present {
        "[a-zA-Z0-9._-]{0,12}".boxed()
    } else {
        Just(String::new()).boxed()
    }
}

/// A nullable string when `present`, else `None`.
///
/// ```
/// use kafka_proto::testing::opt_nullable_string;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert_eq!(
///     opt_nullable_string(false)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current(),
///     None
/// );
/// ```
pub fn opt_nullable_string(present: bool) -> BoxedStrategy<Option<String>> {
    if present {
        proptest::option::of("[a-z0-9.]{0,10}").boxed()
    } else {
        Just(None).boxed()
    }
}

/// A string with a non-empty default when the field is absent.
///
/// ```
/// use kafka_proto::testing::arb_string_or;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert_eq!(
///     arb_string_or(false, "PLAIN")
///         .new_tree(&mut runner)
///         .unwrap()
///         .current(),
///     "PLAIN"
/// );
/// ```
pub fn arb_string_or(present: bool, default: &'static str) -> BoxedStrategy<String> {
    if present {
        "[a-zA-Z0-9._-]{0,12}".boxed()
    } else {
        Just(default.to_owned()).boxed()
    }
}

/// Random bytes when `present`, else empty.
///
/// ```
/// use kafka_proto::testing::arb_bytes;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert!(
///     arb_bytes(false)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .is_empty()
/// );
/// assert!(
///     arb_bytes(true)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .len()
///         < 16
/// );
/// ```
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
///
/// ```
/// use kafka_proto::testing::arb_or;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert_eq!(
///     arb_or(false, -1i32)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current(),
///     -1
/// );
/// ```
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
///
/// ```
/// use kafka_proto::testing::arb_uuid;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert_eq!(
///     arb_uuid(false).new_tree(&mut runner).unwrap().current(),
///     [0; 16]
/// );
/// ```
pub fn arb_uuid(present: bool) -> BoxedStrategy<Uuid> {
    arb_or(present, [0u8; 16])
}

/// A vector of `elem` (0..4 items) when `present`, else empty.
///
/// ```
/// use kafka_proto::testing::arb_vec;
/// use proptest::prelude::any;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// assert!(
///     arb_vec(true, any::<i32>())
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .len()
///         < 4
/// );
/// assert!(
///     arb_vec(false, any::<i32>())
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .is_empty()
/// );
/// ```
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
///
/// ```
/// use kafka_proto::testing::arb_tagged;
/// # use proptest::{strategy::{Strategy, ValueTree}, test_runner::TestRunner};
/// let mut runner = TestRunner::deterministic();
/// let tags = arb_tagged(true).new_tree(&mut runner).unwrap().current();
/// assert!(tags.windows(2).all(|w| w[0].0 < w[1].0) && tags.iter().all(|(t, _)| *t >= 16));
/// assert!(
///     arb_tagged(false)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current()
///         .is_empty()
/// );
/// ```
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
///
/// ```
/// use kafka_proto::{messages::InitProducerIdRequest, testing::check_round_trip};
/// check_round_trip(&InitProducerIdRequest::transactional("orders-0", 60_000), 5).unwrap();
/// ```
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
///
/// ```
/// use kafka_proto::{messages::EndTxnRequest, testing::round_trip_all_versions};
/// round_trip_all_versions::<EndTxnRequest>(16); // panics on the first failing case
/// ```
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
///
/// ```
/// use kafka_proto::{messages::AddOffsetsToTxnRequest, testing::truncations_fail_cleanly};
/// truncations_fail_cleanly::<AddOffsetsToTxnRequest>(8);
/// ```
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
