//! The checks of each fuzz target, one module per target (named as its
//! `fuzz_targets/` file), each with `run(data)`: the libFuzzer binaries call
//! it on every input, and the workspace's tests (`kafka-eos-tests`,
//! `fuzz_corpus`) call it on every seed of `corpus/` and every input of
//! `regressions/`, on every CI run without a fuzzing build.

pub mod frame_decoder;
pub mod http_response;
pub mod record_batch;
pub mod registry_frame;
pub mod request_decoders;
pub mod response_decoders;
