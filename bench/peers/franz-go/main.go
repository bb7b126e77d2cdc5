// Command bench-franz-go is franz-go's side of bench/compare.sh: the same
// options, loops and JSON result line as bench/peers/ours and
// bench/peers/rdkafka (see bench/peers/shared/args.rs for the options). It
// prints one line, {"client":"franz-go","records":N,"bytes":N*S,"secs":...,
// "commit_ms":[...]}, and exits 0 only on full success, 1 on a failed run and
// 2 on a bad command line. --mode selects one of three loops:
//
// produce (the default): records are produced as fast as a window allows;
// once more than --window records are outstanding, the oldest is awaited (a
// FIFO, as the Rust programs await their oldest send future). With --txn-ms,
// after each produce, a commit once the transaction is that old: Flush (wait
// for every buffered record) then EndTransaction(TryCommit), whose total
// duration is the commit latency; the outstanding records are then awaited
// and the next transaction begins. Success: every record was acknowledged.
//
// consume: manual assignment (no group) of partitions 0..--partitions-1 of
// --topic from the start, read_committed or read_uncommitted per
// --isolation, with the fetch settings every client uses (max wait 500 ms,
// min bytes 1, max bytes 50 MiB, max partition bytes 1 MiB, CRCs checked:
// franz-go's default). Fetches are polled whole (PollFetches) until --records
// records were received; the clock runs from just before the client is
// created to the N-th record. Success: N records, each passing check.
//
// copy: exactly-once consume-transform-produce with a GroupTransactSession
// (franz-go's documented EOS helper): group --group (classic protocol)
// subscribed to --topic, read_committed, transactional id --txn-id, the
// produce mode's producer settings, each input record produced to the same
// partition of --out with its key and value. Loop: Begin, then PollFetches
// and produce each record (async, the first error kept) until the
// transaction is --txn-ms old (checked after each poll) or holds the records
// that reach N, then Flush and End(TryCommit) (End commits the consumed
// offsets in the transaction); Flush + End is the commit latency. A
// transaction End aborted (a rebalance) is not counted: its records are
// consumed again. The clock runs from the first input record to the commit
// that reaches N. Success: N input records copied in committed transactions.
//
// consume and copy check every record they receive (check) and fail once
// nothing arrived for a minute (idleTimeout).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type workload struct {
	mode        string
	bootstrap   string
	topic       string
	records     int
	size        int
	keyed       bool
	compression string
	window      int
	txnMs       int
	txnID       string
	partitions  int
	isolation   string
	out         string
	group       string
}

func parse() workload {
	var w workload
	fs := flag.NewFlagSet("bench-franz-go", flag.ExitOnError)
	fs.StringVar(&w.mode, "mode", "produce", "produce, consume or copy")
	fs.StringVar(&w.bootstrap, "bootstrap", "", "HOST:PORT")
	fs.StringVar(&w.topic, "topic", "", "topic (copy: the input topic)")
	fs.IntVar(&w.records, "records", 0, "records to send or receive")
	fs.IntVar(&w.size, "size", 0, "value size in bytes")
	fs.BoolVar(&w.keyed, "keyed", false, "key = record index as a decimal string")
	fs.StringVar(&w.compression, "compression", "none", "none, lz4 or zstd")
	fs.IntVar(&w.window, "window", 0, "records outstanding at most (produce)")
	fs.IntVar(&w.txnMs, "txn-ms", 0, "transactional: commit every this many ms")
	fs.StringVar(&w.txnID, "txn-id", "", "transactional id")
	fs.IntVar(&w.partitions, "partitions", 0, "partitions of the topic (consume, copy)")
	fs.StringVar(&w.isolation, "isolation", "uncommitted", "committed or uncommitted (consume)")
	fs.StringVar(&w.out, "out", "", "output topic (copy)")
	fs.StringVar(&w.group, "group", "", "consumer group (copy)")
	_ = fs.Parse(os.Args[1:])
	txnSet := false // --txn-ms given (copy: 0 commits after every poll)
	fs.Visit(func(f *flag.Flag) { txnSet = txnSet || f.Name == "txn-ms" })
	bad := func(msg string) {
		fmt.Fprintln(os.Stderr, "error:", msg)
		os.Exit(2)
	}
	switch {
	case fs.NArg() > 0:
		bad("unexpected argument " + fs.Arg(0))
	case w.mode != "produce" && w.mode != "consume" && w.mode != "copy":
		bad("--mode must be produce, consume or copy")
	case w.bootstrap == "" || w.topic == "":
		bad("--bootstrap and --topic are required")
	case w.records < 1 || w.size < 1:
		bad("--records and --size must be at least 1")
	case w.mode == "produce" && w.window < 1:
		bad("--window must be at least 1")
	case w.mode != "produce" && w.partitions < 1:
		bad("--partitions must be at least 1")
	case w.mode == "copy" && (w.out == "" || w.group == "" || !txnSet || w.txnID == ""):
		bad("--mode copy needs --out, --group, --txn-ms and --txn-id")
	case w.txnMs < 0:
		bad("--txn-ms must not be negative")
	case w.isolation != "committed" && w.isolation != "uncommitted":
		bad("--isolation must be committed or uncommitted")
	case w.compression != "none" && w.compression != "lz4" && w.compression != "zstd":
		bad("--compression must be none, lz4 or zstd")
	case w.txnMs > 0 && w.txnID == "":
		bad("--txn-ms needs --txn-id")
	}
	return w
}

// value is the content of every record: size bytes, 'a'..'z' repeated
// (the same bytes as the Rust programs send).
func (w *workload) value() []byte {
	v := make([]byte, w.size)
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	return v
}

// firstErr keeps the first error of the records' promises.
type firstErr struct {
	mu    sync.Mutex
	first error
}

func (f *firstErr) record(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	if f.first == nil {
		f.first = err
	}
	f.mu.Unlock()
}

func (f *firstErr) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}

// acks tracks the outstanding records in a ring of window+1 slots: record j
// uses slot j % (window+1), which is free again once record j was awaited.
type acks struct {
	firstErr
	done []atomic.Bool
	wake chan struct{}
}

func newAcks(window int) *acks {
	return &acks{done: make([]atomic.Bool, window+1), wake: make(chan struct{}, 1)}
}

func (a *acks) promise(slot int) func(*kgo.Record, error) {
	return func(_ *kgo.Record, err error) {
		a.record(err)
		a.done[slot].Store(true)
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// await waits for record j's acknowledgement and fails if any record failed.
func (a *acks) await(j int) error {
	slot := j % len(a.done)
	for !a.done[slot].Load() {
		<-a.wake
	}
	return a.err()
}

// clientOpts are the options of every mode's client.
func clientOpts(w workload) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...)}
	if os.Getenv("BENCH_FRANZ_GO_LOG") != "" {
		// Client log on stderr (debugging a run; not used by compare.sh).
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)))
	}
	return opts
}

// producerOpts are the producer settings of the produce and copy modes.
func producerOpts(w workload, partitioner kgo.Partitioner) []kgo.Opt {
	codec := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(),
		"lz4":  kgo.Lz4Compression(),
		"zstd": kgo.ZstdCompression(),
	}
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is franz-go's default
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.ProducerBatchMaxBytes(16384),
		// Explicit even for none: franz-go's default is snappy.
		kgo.ProducerBatchCompression(codec[w.compression]),
		kgo.RecordPartitioner(partitioner),
		// Its default (50,000) must not be what limits the window.
		kgo.MaxBufferedRecords(max(2*w.window, 100000)),
	}
}

// fetchOpts are the fetch settings every client uses in the consume and
// copy modes (CRC checking is on: franz-go's default).
func fetchOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxWait(500 * time.Millisecond), // franz-go's default: 5 s
		kgo.FetchMinBytes(1),
		kgo.FetchMaxBytes(50 << 20),
		kgo.FetchMaxPartitionBytes(1 << 20),
	}
}

func runProduce(w workload) (float64, []time.Duration, error) {
	ctx := context.Background()
	// KIP-480 sticky for null keys, murmur2 (Java's hash) for keys: as ours.
	opts := append(clientOpts(w), producerOpts(w, kgo.StickyKeyPartitioner(nil))...)
	txn := w.txnMs > 0
	if txn {
		opts = append(opts, kgo.TransactionalID(w.txnID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, nil, err
	}
	defer cl.Close()
	var flushes []time.Duration // the part of each commit spent in Flush
	commit := func() error {
		f := time.Now()
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		flushes = append(flushes, time.Since(f))
		return cl.EndTransaction(ctx, kgo.TryCommit)
	}

	// Metadata and the producer id before the clock starts.
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return 0, nil, err
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: w.topic, Value: []byte("w")}).FirstErr(); err != nil {
		return 0, nil, err
	}
	if txn {
		if err := commit(); err != nil {
			return 0, nil, err
		}
	}

	value := w.value()
	a := newAcks(w.window)
	every := time.Duration(w.txnMs) * time.Millisecond
	var commits []time.Duration
	head := 0 // the oldest record not yet awaited
	t0 := time.Now()
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return 0, nil, err
		}
	}
	txnStart := time.Now()
	for i := 0; i < w.records; i++ {
		r := &kgo.Record{Topic: w.topic, Value: value}
		if w.keyed {
			r.Key = strconv.AppendUint(nil, uint64(i), 10)
		}
		slot := i % len(a.done)
		a.done[slot].Store(false)
		cl.Produce(ctx, r, a.promise(slot))
		if i+1-head > w.window {
			if err := a.await(head); err != nil {
				return 0, nil, err
			}
			head++
		}
		if txn && time.Since(txnStart) >= every {
			c := time.Now()
			if err := commit(); err != nil {
				return 0, nil, err
			}
			commits = append(commits, time.Since(c))
			for ; head <= i; head++ {
				if err := a.await(head); err != nil {
					return 0, nil, err
				}
			}
			if err := cl.BeginTransaction(); err != nil {
				return 0, nil, err
			}
			txnStart = time.Now()
		}
	}
	if txn {
		c := time.Now()
		if err := commit(); err != nil {
			return 0, nil, err
		}
		commits = append(commits, time.Since(c))
	}
	for ; head < w.records; head++ {
		if err := a.await(head); err != nil {
			return 0, nil, err
		}
	}
	secs := time.Since(t0).Seconds()
	if txn {
		commitStats(flushes[1:], commits) // the first flush was the warm-up's
	}
	return secs, commits, nil
}

// commitStats prints (to stderr) how the commits split between Flush and
// the EndTransaction after it.
func commitStats(flushes, commits []time.Duration) {
	p50 := func(v []time.Duration) float64 {
		if len(v) == 0 {
			return 0
		}
		s := append([]time.Duration(nil), v...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[(len(s)-1)/2]) / 1e6
	}
	ends := make([]time.Duration, len(commits))
	for i := range commits {
		ends[i] = commits[i] - flushes[i]
	}
	fmt.Fprintf(os.Stderr, "bench-franz-go commits: %d; p50 %.1f ms = flush p50 %.1f ms + EndTxn p50 %.1f ms\n",
		len(commits), p50(commits), p50(flushes), p50(ends))
}

// check fails on a record that is not what the driver wrote: the value
// must be --size bytes and must not start with 'x' (the records of aborted
// transactions do; read_committed must never deliver one).
func (w *workload) check(r *kgo.Record) error {
	switch {
	case len(r.Value) != w.size:
		return fmt.Errorf("%s partition %d offset %d: a value of %d bytes where %d were written",
			r.Topic, r.Partition, r.Offset, len(r.Value), w.size)
	case r.Value[0] == 'x':
		return fmt.Errorf("%s partition %d offset %d: a record of an aborted transaction was delivered",
			r.Topic, r.Partition, r.Offset)
	}
	return nil
}

// idleTimeout: consume and copy fail once no record arrived for this long.
const idleTimeout = 60 * time.Second

type poller interface {
	PollFetches(context.Context) kgo.Fetches
}

// poll returns the next fetches, failing on any fetch error and once no
// record arrived since last + idleTimeout.
func poll(p poller, last time.Time) (kgo.Fetches, error) {
	ctx, cancel := context.WithDeadline(context.Background(), last.Add(idleTimeout))
	defer cancel()
	fetches := p.PollFetches(ctx)
	for _, e := range fetches.Errors() {
		if errors.Is(e.Err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no record arrived for %v", idleTimeout)
		}
		return nil, fmt.Errorf("fetching %s partition %d: %w", e.Topic, e.Partition, e.Err)
	}
	return fetches, nil
}

func runConsume(w workload) (float64, error) {
	start := make(map[int32]kgo.Offset, w.partitions)
	for p := range int32(w.partitions) {
		start[p] = kgo.NewOffset().AtStart()
	}
	level := kgo.ReadUncommitted()
	if w.isolation == "committed" {
		level = kgo.ReadCommitted()
	}
	opts := append(clientOpts(w), fetchOpts()...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{w.topic: start}),
		kgo.FetchIsolationLevel(level),
	)

	t0 := time.Now()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	n := 0
	var end time.Time // the N-th record's arrival
	last := t0
	for n < w.records {
		fetches, err := poll(cl, last)
		if err != nil {
			return 0, err
		}
		if fetches.NumRecords() > 0 {
			last = time.Now()
		}
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			if bad == nil {
				bad = w.check(r)
			}
			n++
			if n == w.records {
				end = time.Now()
			}
		})
		if bad != nil {
			return 0, bad
		}
	}
	return end.Sub(t0).Seconds(), nil
}

// endTxn ends the session's transaction with a commit once every record
// produced in it was acknowledged: whether it committed (false: aborted
// after a rebalance, its records will be consumed again).
func endTxn(ctx context.Context, s *kgo.GroupTransactSession, produced *firstErr) (bool, error) {
	// End flushes too; flushing first lets a failed record stop the run
	// (as the franz-go EOS example checks its promises before End).
	if err := s.Client().Flush(ctx); err != nil {
		return false, err
	}
	if err := produced.err(); err != nil {
		_, _ = s.End(ctx, kgo.TryAbort)
		return false, fmt.Errorf("producing: %w", err)
	}
	return s.End(ctx, kgo.TryCommit)
}

func runCopy(w workload) (float64, []time.Duration, error) {
	ctx := context.Background()
	// Each output record goes to the partition number of its input record.
	opts := append(clientOpts(w), producerOpts(w, kgo.ManualPartitioner())...)
	opts = append(opts, fetchOpts()...)
	opts = append(opts,
		kgo.TransactionalID(w.txnID),
		kgo.ConsumerGroup(w.group),
		kgo.ConsumeTopics(w.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	s, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close()

	every := time.Duration(w.txnMs) * time.Millisecond
	var commits []time.Duration
	var t0, end time.Time // the first input record's arrival, the last End
	last := time.Now()
	committed := 0 // input records copied in committed transactions
	for committed < w.records {
		if err := s.Begin(); err != nil {
			return 0, nil, err
		}
		began := time.Now()
		var produced firstErr
		promise := func(_ *kgo.Record, err error) { produced.record(err) }
		pending := 0 // input records in this transaction
		for pending == 0 || (committed+pending < w.records && time.Since(began) < every) {
			fetches, err := poll(s, last)
			if err != nil {
				return 0, nil, err
			}
			if fetches.NumRecords() > 0 {
				last = time.Now()
				if t0.IsZero() {
					t0 = last
				}
			}
			var bad error
			fetches.EachRecord(func(r *kgo.Record) {
				if bad != nil {
					return
				}
				if bad = w.check(r); bad != nil {
					return
				}
				s.Produce(ctx, &kgo.Record{Topic: w.out, Partition: r.Partition, Key: r.Key, Value: r.Value}, promise)
				pending++
			})
			if bad != nil {
				return 0, nil, bad
			}
		}
		c := time.Now()
		ok, err := endTxn(ctx, s, &produced)
		if err != nil {
			return 0, nil, fmt.Errorf("ending a transaction: %w", err)
		}
		end = time.Now()
		commits = append(commits, end.Sub(c))
		if ok {
			committed += pending
		} else {
			fmt.Fprintf(os.Stderr, "bench-franz-go: a transaction of %d records aborted (rebalance); they are copied again\n", pending)
		}
	}
	return end.Sub(t0).Seconds(), commits, nil
}

func main() {
	w := parse()
	var secs float64
	var commits []time.Duration
	var err error
	switch w.mode {
	case "produce":
		secs, commits, err = runProduce(w)
	case "consume":
		secs, err = runConsume(w)
	case "copy":
		secs, commits, err = runCopy(w)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-franz-go:", err)
		os.Exit(1)
	}
	ms := make([]string, len(commits))
	for i, d := range commits {
		ms[i] = strconv.FormatFloat(d.Seconds()*1e3, 'f', 3, 64)
	}
	fmt.Printf("{\"client\":\"franz-go\",\"records\":%d,\"bytes\":%d,\"secs\":%.6f,\"commit_ms\":[%s]}\n",
		w.records, w.records*w.size, secs, strings.Join(ms, ","))
}
