//! Command line and result line shared by the Rust benchmark programs
//! (`bench/peers/ours` and `bench/peers/rdkafka`), so both read the same
//! options and print the same JSON line. The Go program (`bench/peers/franz-go`)
//! takes the same options.
//!
//! ```text
//! [--mode produce] --bootstrap HOST:PORT --topic T --records N --size S --window W
//!     [--keyed] [--compression none|lz4|zstd] [--txn-ms C --txn-id ID]
//! --mode consume --bootstrap HOST:PORT --topic T --partitions P --records N --size S
//!     --isolation committed|uncommitted
//! --mode copy --bootstrap HOST:PORT --topic IN --out OUT --group G --txn-id ID --txn-ms C
//!     --partitions P --records N --size S [--e2e --ready-file F]
//! --mode e2e-produce --bootstrap HOST:PORT --topic T --records N --size S --window W --rate R
//!     [--txn-ms C --txn-id ID]
//! --mode e2e-read --bootstrap HOST:PORT --topic T --partitions P --records N --size S
//!     --ready-file F
//! every mode: [--settings equal|defaults] [--print-settings]
//! ```
//!
//! - **produce**: send N records of S bytes (see `bench/compare.sh`).
//! - **consume**: manual assignment of partitions 0..P of T from the start,
//!   the same fetch settings in every client (max wait 500 ms, min bytes 1,
//!   fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB, CRCs checked),
//!   until N records were received; the clock starts before the client is
//!   created and stops at the N-th record.
//! - **copy**: exactly-once consume-transform-produce: group G subscribed to
//!   IN (read_committed), each record written to the same partition of OUT
//!   with its key and value, a transaction committed with the input offsets
//!   once it is C ms old; the clock starts at the first input record and
//!   stops when the commit that covers N input records completes.
//!
//! - **e2e-produce**, **e2e-read**: the end-to-end latency workloads
//!   (`bench/peers/shared/e2e.rs`); `copy --e2e` is the copy between an
//!   e2e producer and reader (`e2e-copy`): it also passes the e2e values
//!   and the `ready` / `w` records, and creates `--ready-file` once the
//!   `ready` record of every input partition went through it.
//!
//! `--settings` (compare.sh's `SETTINGS`): `equal` (the default), the same
//! explicit producer and fetch settings in every client; `defaults`, each
//! client as shipped, given only what the workload needs to exist (see
//! compare.sh). `--print-settings` prints what the client is given for the
//! workload of the command line, on stdout, and exits.
//!
//! Every consumed value is checked ([`Workload::check_value`]): S bytes, not
//! starting with `x` (the driver writes the records of aborted transactions
//! with a leading `x`, so that one delivered under read_committed fails the
//! run).

use std::time::Duration;

/// What a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Produce,
    Consume,
    Copy,
    /// The fixed-rate producer of the end-to-end latency workloads.
    E2eProduce,
    /// The read_committed reader of the end-to-end latency workloads.
    E2eRead,
}

/// Which settings the clients get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settings {
    /// The same explicit producer and fetch settings in every client.
    Equal,
    /// Each client's own defaults; only what the workload needs to exist.
    Defaults,
}

impl Settings {
    pub fn name(self) -> &'static str {
        match self {
            Settings::Equal => "equal",
            Settings::Defaults => "defaults",
        }
    }
}

/// The consumer's `isolation.level` (consume mode; copy reads committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    Committed,
    Uncommitted,
}

/// The workload of one run.
#[derive(Debug, Clone)]
pub struct Workload {
    pub mode: Mode,
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
    /// Partitions of the topic (consume, copy).
    pub partitions: i32,
    /// Isolation level (consume).
    pub isolation: Isolation,
    /// The output topic (copy).
    pub out: String,
    /// The consumer group (copy).
    pub group: String,
    /// Equal settings or each client's defaults.
    pub settings: Settings,
    /// Print the settings given and exit.
    pub print_settings: bool,
    /// Records per second (e2e-produce).
    pub rate: u64,
    /// Created once the process is ready (e2e-read, copy --e2e).
    pub ready_file: String,
    /// copy: the input is an e2e producer's (e2e values, `ready`, `w`).
    pub e2e: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "error: {msg}\nusage: [--mode produce] --bootstrap HOST:PORT --topic T --records N --size S \
         --window W [--keyed] [--compression none|lz4|zstd] [--txn-ms C --txn-id ID]\n\
         \x20      --mode consume --bootstrap HOST:PORT --topic T --partitions P --records N --size S \
         --isolation committed|uncommitted\n\
         \x20      --mode copy --bootstrap HOST:PORT --topic IN --out OUT --group G --txn-id ID \
         --txn-ms C --partitions P --records N --size S [--e2e --ready-file F]\n\
         \x20      --mode e2e-produce --bootstrap HOST:PORT --topic T --records N --size S \
         --window W --rate R [--txn-ms C --txn-id ID]\n\
         \x20      --mode e2e-read --bootstrap HOST:PORT --topic T --partitions P --records N \
         --size S --ready-file F\n\
         \x20      every mode: [--settings equal|defaults] [--print-settings]"
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
            mode: Mode::Produce,
            bootstrap: String::new(),
            topic: String::new(),
            records: 0,
            size: 0,
            keyed: false,
            compression: "none".into(),
            window: 0,
            txn_every: None,
            txn_id: String::new(),
            partitions: 0,
            isolation: Isolation::Uncommitted,
            out: String::new(),
            group: String::new(),
            settings: Settings::Equal,
            print_settings: false,
            rate: 0,
            ready_file: String::new(),
            e2e: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            // The flags without a value.
            let flag = match a.as_str() {
                "--keyed" => Some(&mut w.keyed),
                "--print-settings" => Some(&mut w.print_settings),
                "--e2e" => Some(&mut w.e2e),
                _ => None,
            };
            if let Some(flag) = flag {
                *flag = true;
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
                "--partitions" => w.partitions = num(&a, &v),
                "--out" => w.out = v,
                "--group" => w.group = v,
                "--rate" => w.rate = num(&a, &v),
                "--ready-file" => w.ready_file = v,
                "--settings" => {
                    w.settings = match v.as_str() {
                        "equal" => Settings::Equal,
                        "defaults" => Settings::Defaults,
                        _ => usage("--settings must be equal or defaults"),
                    }
                }
                "--mode" => {
                    w.mode = match v.as_str() {
                        "produce" => Mode::Produce,
                        "consume" => Mode::Consume,
                        "copy" => Mode::Copy,
                        "e2e-produce" => Mode::E2eProduce,
                        "e2e-read" => Mode::E2eRead,
                        _ => {
                            usage("--mode must be produce, consume, copy, e2e-produce or e2e-read")
                        }
                    }
                }
                "--isolation" => {
                    w.isolation = match v.as_str() {
                        "committed" => Isolation::Committed,
                        "uncommitted" => Isolation::Uncommitted,
                        _ => usage("--isolation must be committed or uncommitted"),
                    }
                }
                _ => usage(&format!("unknown option {a}")),
            }
        }
        if w.bootstrap.is_empty() || w.topic.is_empty() {
            usage("--bootstrap and --topic are required");
        }
        if w.records == 0 || w.size == 0 {
            usage("--records and --size must be at least 1");
        }
        let produces = matches!(w.mode, Mode::Produce | Mode::E2eProduce);
        if produces && w.window == 0 {
            usage("--window must be at least 1");
        }
        if w.mode == Mode::E2eProduce && w.rate == 0 {
            usage("--mode e2e-produce needs --rate");
        }
        if (w.mode == Mode::E2eRead || w.e2e) && w.ready_file.is_empty() {
            usage("--mode e2e-read and --e2e need --ready-file");
        }
        if !produces && w.partitions < 1 {
            usage("--partitions must be at least 1");
        }
        if w.mode == Mode::Copy && (w.out.is_empty() || w.group.is_empty() || w.txn_every.is_none())
        {
            usage("--mode copy needs --out, --group, --txn-ms and --txn-id");
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

    /// Checks one consumed value: exactly `size` bytes, and not a record of
    /// an aborted transaction (those start with `x`).
    pub fn check_value(&self, value: Option<&[u8]>) -> Result<(), String> {
        if self.e2e {
            // copy --e2e: an e2e producer's records (see e2e.rs).
            return match value {
                Some(b"ready" | b"w") => Ok(()),
                Some(v) if v.len() == self.size && v.starts_with(b"e2e:") => Ok(()),
                Some(v) => Err(format!("an unexpected value of {} bytes", v.len())),
                None => Err("a record without a value".into()),
            };
        }
        match value {
            None => Err("a record without a value".into()),
            Some(v) if v.len() != self.size => Err(format!(
                "a value of {} bytes where {} were written",
                v.len(),
                self.size
            )),
            Some([b'x', ..]) => Err("a record of an aborted transaction was delivered".into()),
            Some(_) => Ok(()),
        }
    }

    /// The result line: one JSON object on stdout.
    pub fn print_result(&self, client: &str, secs: f64, commits: &[Duration]) {
        let commit_ms: Vec<String> = commits
            .iter()
            .map(|d| format!("{:.3}", d.as_secs_f64() * 1e3))
            .collect();
        println!(
            "{{\"client\":\"{client}\",\"settings\":\"{}\",\"records\":{},\"bytes\":{},\"secs\":{secs:.6},\"commit_ms\":[{}]}}",
            self.settings.name(),
            self.records,
            self.records * self.size as u64,
            commit_ms.join(",")
        );
    }
}
