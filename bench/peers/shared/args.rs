//! Command line and result line shared by the Rust benchmark programs
//! (`bench/peers/ours` and `bench/peers/rdkafka`), so both read the same
//! options and print the same JSON line. The Go program (`bench/peers/franz-go`)
//! takes the same options.
//!
//! ```text
//! --bootstrap HOST:PORT --topic T --records N --size S --window W
//! [--keyed] [--compression none|lz4|zstd] [--txn-ms C --txn-id ID]
//! ```

use std::time::Duration;

/// The workload of one run.
#[derive(Debug, Clone)]
pub struct Workload {
    pub bootstrap: String,
    pub topic: String,
    /// Records to send (the untimed first record not included).
    pub records: u64,
    /// Value size in bytes (every value has the same content).
    pub size: usize,
    /// Keys are the record index as a decimal string; otherwise null keys.
    pub keyed: bool,
    /// `none`, `lz4` or `zstd`.
    pub compression: String,
    /// At most this many records sent and not yet acknowledged, awaited
    /// oldest first.
    pub window: usize,
    /// Transactional: commit once this long has passed since the
    /// transaction began (checked after every send). `None`: idempotent only.
    pub txn_every: Option<Duration>,
    /// The transactional id (required with `--txn-ms`).
    pub txn_id: String,
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "error: {msg}\nusage: --bootstrap HOST:PORT --topic T --records N --size S --window W \
         [--keyed] [--compression none|lz4|zstd] [--txn-ms C --txn-id ID]"
    );
    std::process::exit(2)
}

fn num<T: std::str::FromStr>(name: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| usage(&format!("{name}: not a number: {v}")))
}

impl Workload {
    /// Parses `std::env::args()`; exits with status 2 on a bad command line.
    pub fn from_args() -> Workload {
        let mut w = Workload {
            bootstrap: String::new(),
            topic: String::new(),
            records: 0,
            size: 0,
            keyed: false,
            compression: "none".into(),
            window: 0,
            txn_every: None,
            txn_id: String::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            if a == "--keyed" {
                w.keyed = true;
                continue;
            }
            let v = args
                .next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")));
            match a.as_str() {
                "--bootstrap" => w.bootstrap = v,
                "--topic" => w.topic = v,
                "--records" => w.records = num(&a, &v),
                "--size" => w.size = num(&a, &v),
                "--window" => w.window = num(&a, &v),
                "--compression" => w.compression = v,
                "--txn-ms" => w.txn_every = Some(Duration::from_millis(num(&a, &v))),
                "--txn-id" => w.txn_id = v,
                _ => usage(&format!("unknown option {a}")),
            }
        }
        if w.bootstrap.is_empty() || w.topic.is_empty() {
            usage("--bootstrap and --topic are required");
        }
        if w.records == 0 || w.size == 0 || w.window == 0 {
            usage("--records, --size and --window must be at least 1");
        }
        if !matches!(w.compression.as_str(), "none" | "lz4" | "zstd") {
            usage("--compression must be none, lz4 or zstd");
        }
        if w.txn_every.is_some() && w.txn_id.is_empty() {
            usage("--txn-ms needs --txn-id");
        }
        w
    }

    /// The value every record carries: `size` bytes of fixed content.
    pub fn value(&self) -> Vec<u8> {
        (0..self.size).map(|i| b'a' + (i % 26) as u8).collect()
    }

    /// The result line: one JSON object on stdout.
    pub fn print_result(&self, client: &str, secs: f64, commits: &[Duration]) {
        let commit_ms: Vec<String> = commits
            .iter()
            .map(|d| format!("{:.3}", d.as_secs_f64() * 1e3))
            .collect();
        println!(
            "{{\"client\":\"{client}\",\"records\":{},\"bytes\":{},\"secs\":{secs:.6},\"commit_ms\":[{}]}}",
            self.records,
            self.records * self.size as u64,
            commit_ms.join(",")
        );
    }
}
