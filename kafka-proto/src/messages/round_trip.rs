//! The round trip of every message at every version, generated from
//! [`for_each_message!`](crate::for_each_message): random values encode,
//! decode back equal and re-encode to the same bytes; every cut of a valid
//! encoding fails cleanly and a trailing byte is refused.

macro_rules! round_trip_tests {
    ($(($key:ident, $request:ident, $response:ident)),* $(,)?) => {$(
        #[allow(non_snake_case)]
        mod $key {
            use crate::messages::{$request, $response};
            use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

            #[test]
            fn request_every_version() {
                round_trip_all_versions::<$request>(64);
                truncations_fail_cleanly::<$request>(8);
            }

            #[test]
            fn response_every_version() {
                round_trip_all_versions::<$response>(64);
                truncations_fail_cleanly::<$response>(8);
            }
        }
    )*};
}

crate::for_each_message!(round_trip_tests);
