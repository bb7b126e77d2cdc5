//! Writes the seed corpus under `fuzz/corpus/<target>/`: valid encodings made from
//! kafka-proto's proptest strategies with a deterministic RNG, so regenerating
//! gives the same files.
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --features gen --example gen_corpus
//! ```
//!
//! Each target directory is emptied and rewritten.

use bytes::Bytes;
use kafka_proto::frame::{encode_request_frame, encode_response_frame};
use kafka_proto::record::{
    Compression, ControlRecord, Record, RecordBatch, RecordBatchBuilder, TimestampType,
};
use kafka_proto::testing::VersionedArbitrary;
use kafka_proto_fuzz::FRAME_MODE;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::fs;
use std::path::{Path, PathBuf};

/// Collected seeds: (target, file name, bytes).
#[derive(Debug, Default)]
struct Corpus {
    files: Vec<(&'static str, String, Vec<u8>)>,
    /// Request frames (with their length prefix) for the frame-decoder streams.
    request_frames: Vec<Vec<u8>>,
}

/// A deterministic random value of `M` valid at `version`.
fn sample<M: VersionedArbitrary>(runner: &mut TestRunner, version: i16) -> M {
    M::arbitrary(version)
        .new_tree(runner)
        .expect("strategy")
        .current()
}

impl Corpus {
    /// Body-mode and frame-mode seeds of one response type, every version.
    fn response<M: VersionedArbitrary>(&mut self, runner: &mut TestRunner) {
        let key = u8::try_from(M::API_KEY.code()).expect("API key < 256");
        for v in M::VERSIONS.iter() {
            let m = sample::<M>(runner, v);
            let mut body = vec![key, v as u8];
            body.extend(m.encode_to_vec(v).expect("encode"));
            let name = format!("{:?}-v{v}", M::API_KEY);
            self.files
                .push(("response_decoders", format!("{name}-body"), body));
            let frame = encode_response_frame(&m, v, 7).expect("encode frame");
            let mut f = vec![key, FRAME_MODE | v as u8];
            f.extend_from_slice(&frame[4..]);
            self.files
                .push(("response_decoders", format!("{name}-frame"), f));
        }
    }

    /// Body-mode and frame-mode seeds of one request type, every version.
    fn request<M: VersionedArbitrary>(&mut self, runner: &mut TestRunner) {
        let key = u8::try_from(M::API_KEY.code()).expect("API key < 256");
        for v in M::VERSIONS.iter() {
            let m = sample::<M>(runner, v);
            let mut body = vec![key, v as u8];
            body.extend(m.encode_to_vec(v).expect("encode"));
            let name = format!("{:?}-v{v}", M::API_KEY);
            self.files
                .push(("request_decoders", format!("{name}-body"), body));
            let frame = encode_request_frame(&m, v, 7, Some("fuzz")).expect("encode frame");
            let mut f = vec![key, FRAME_MODE];
            f.extend_from_slice(&frame[4..]);
            self.files
                .push(("request_decoders", format!("{name}-frame"), f));
            if v == M::VERSIONS.max {
                self.request_frames.push(frame.to_vec());
            }
        }
    }

    /// Streams of real request frames for `frame_decoder`.
    fn frame_streams(&mut self) {
        let all: Vec<u8> = self.request_frames.concat();
        let first = self.request_frames.first().cloned().unwrap_or_default();
        // Largest max (1020 bytes), several chunkings.
        for seed in [0u8, 3, 200] {
            let mut s = vec![255, seed];
            s.extend_from_slice(&all[..all.len().min(4096)]);
            self.files
                .push(("frame_decoder", format!("requests-seed{seed}"), s));
        }
        // A frame followed by an oversized length.
        let mut s = vec![16, 1];
        s.extend_from_slice(&[0, 0, 0, 2, 0xab, 0xcd]);
        s.extend_from_slice(&[0, 0, 0x40, 0, 1, 2, 3]);
        self.files.push(("frame_decoder", "oversized".into(), s));
        // A negative length.
        self.files.push((
            "frame_decoder",
            "negative".into(),
            vec![8, 5, 0xff, 0xff, 0xff, 0xfe, 0],
        ));
        // Empty frames and a partial trailing frame.
        let mut s = vec![4, 9];
        s.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1]);
        self.files
            .push(("frame_decoder", "empty-and-partial".into(), s));
        let mut s = vec![255, 17];
        s.extend_from_slice(&first);
        s.extend_from_slice(&first);
        self.files.push(("frame_decoder", "two-frames".into(), s));
    }

    /// Batches for `record_batch`: every codec, a control batch, and a Fetch-like
    /// concatenation ending in a truncated batch.
    fn record_batches(&mut self) {
        // Flags: 32 KiB limit (7); +0x08 recompute CRCs; +0x10 concatenated.
        const LIMIT: u8 = 7;
        let codecs = [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        let mut all = Vec::new();
        for (i, codec) in codecs.into_iter().enumerate() {
            let mut b = RecordBatchBuilder::new(codec)
                .producer(1000 + i as i64, 3, 17)
                .transactional(i % 2 == 0)
                .base_offset(40 * i as i64)
                .timestamp_type(if i == 3 {
                    TimestampType::LogAppend
                } else {
                    TimestampType::Create
                });
            for r in 0..4i64 {
                let value = format!("value-{r}-").repeat(1 + r as usize * 3);
                let mut rec = Record::new(
                    1_700_000_000_000 + r,
                    (r != 2).then(|| Bytes::from(format!("key-{r}"))),
                    (r != 3).then(|| Bytes::from(value)),
                );
                if r == 1 {
                    rec = rec
                        .with_header("trace", Some(Bytes::from_static(b"abc")))
                        .with_header("null", None);
                }
                b.push(rec);
            }
            let bytes = b.build().encode_to_vec().expect("encode batch");
            let mut f = vec![LIMIT];
            f.extend_from_slice(&bytes);
            self.files
                .push(("record_batch", format!("batch-{}", codec.name()), f));
            all.extend_from_slice(&bytes);
        }
        let marker = RecordBatch::control(200, 1000, 3, 1_700_000_000_100, ControlRecord::abort(9))
            .encode_to_vec()
            .expect("encode control batch");
        let mut f = vec![LIMIT | 0x08];
        f.extend_from_slice(&marker);
        self.files.push(("record_batch", "control-abort".into(), f));
        all.extend_from_slice(&marker);
        let mut f = vec![LIMIT | 0x10];
        f.extend_from_slice(&all);
        f.extend_from_slice(&marker[..30]);
        self.files
            .push(("record_batch", "fetch-concatenated-truncated".into(), f));
        // A small limit: the compressed batches exceed it once inflated.
        let mut f = vec![0x08 | 0x10];
        f.extend_from_slice(&all);
        self.files.push(("record_batch", "small-limit".into(), f));
    }

    fn write(&self, root: &Path) -> std::io::Result<()> {
        let mut targets: Vec<&str> = self.files.iter().map(|f| f.0).collect();
        targets.dedup();
        for t in &targets {
            let dir = root.join(t);
            if dir.exists() {
                fs::remove_dir_all(&dir)?;
            }
            fs::create_dir_all(&dir)?;
        }
        let mut total = 0;
        for (t, name, bytes) in &self.files {
            fs::write(root.join(t).join(name), bytes)?;
            total += bytes.len();
        }
        println!(
            "wrote {} seeds ({total} bytes) under {}",
            self.files.len(),
            root.display()
        );
        Ok(())
    }
}

macro_rules! gen_messages {
    ($(($key:ident, $req:ident, $resp:ident)),* $(,)?) => {
        fn gen_messages(c: &mut Corpus, runner: &mut TestRunner) {
            $(
                c.request::<kafka_proto::messages::$req>(runner);
                c.response::<kafka_proto::messages::$resp>(runner);
            )*
        }
    };
}
kafka_proto::for_each_message!(gen_messages);

fn main() -> std::io::Result<()> {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let mut runner = TestRunner::deterministic();
    let mut c = Corpus::default();
    gen_messages(&mut c, &mut runner);
    c.frame_streams();
    c.record_batches();
    c.write(&root)
}
