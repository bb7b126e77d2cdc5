//! One module per Kafka message. Each request and response type implements
//! [`crate::Message`] with its API key and version range; field names are the
//! snake_case of the Kafka schema names.

pub mod api_versions;

pub use api_versions::*;

#[cfg(test)]
mod round_trip {
    //! Every message × every version: encode → decode → equal, re-encode identical.
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    macro_rules! round_trips {
        ($($name:ident: $ty:ty,)*) => {$(
            #[test]
            fn $name() {
                round_trip_all_versions::<$ty>(64);
                truncations_fail_cleanly::<$ty>(8);
            }
        )*};
    }

    round_trips! {
        api_versions_request: ApiVersionsRequest,
        api_versions_response: ApiVersionsResponse,
    }
}
