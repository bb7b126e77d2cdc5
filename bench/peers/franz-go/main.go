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
// e2e-produce: the fixed-rate producer of bench/peers/shared/e2e.rs (record
// i scheduled at t0 + i/rate, its value carrying i and that time; a sender
// behind schedule sends every due record at once, the times unchanged: no
// coordinated omission), paced by sleeping until the next record is due,
// at most --window records outstanding (the produce mode's ring); with
// --txn-ms a commit (Flush + EndTransaction) once the transaction is that
// old, checked after each batch of due records. e2e-read: manual assignment
// as in consume, read_committed, each record's latency (now - scheduled
// time) taken as PollFetches returns it; records lost and duplicated
// counted. Both print the result lines of e2e.rs.
//
// --settings equal (the default): the explicit producer and fetch settings
// every client of the comparison gets; defaults: franz-go's defaults with
// only what the workload needs to exist. producerOpts, fetchOpts and the
// options of runCopy / runConsume / runE2eRead are the whole of it;
// --print-settings prints them.
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
	settings    string
	print       bool
	rate        int
	readyFile   string
	e2e         bool
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
	fs.StringVar(&w.settings, "settings", "equal", "equal or defaults")
	fs.BoolVar(&w.print, "print-settings", false, "print the settings given and exit")
	fs.IntVar(&w.rate, "rate", 0, "records per second (e2e-produce)")
	fs.StringVar(&w.readyFile, "ready-file", "", "created once ready (e2e-read, copy --e2e)")
	fs.BoolVar(&w.e2e, "e2e", false, "copy: the input is an e2e producer's")
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
	case w.mode != "produce" && w.mode != "consume" && w.mode != "copy" &&
		w.mode != "e2e-produce" && w.mode != "e2e-read":
		bad("--mode must be produce, consume, copy, e2e-produce or e2e-read")
	case w.settings != "equal" && w.settings != "defaults":
		bad("--settings must be equal or defaults")
	case w.mode == "e2e-produce" && w.rate < 1:
		bad("--mode e2e-produce needs --rate")
	case (w.mode == "e2e-read" || w.e2e) && w.readyFile == "":
		bad("--mode e2e-read and --e2e need --ready-file")
	case w.bootstrap == "" || w.topic == "":
		bad("--bootstrap and --topic are required")
	case w.records < 1 || w.size < 1:
		bad("--records and --size must be at least 1")
	case (w.mode == "produce" || w.mode == "e2e-produce") && w.window < 1:
		bad("--window must be at least 1")
	case w.mode != "produce" && w.mode != "e2e-produce" && w.partitions < 1:
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

// opts are a client's options and what they say (--print-settings).
type opts struct {
	list []kgo.Opt
	desc []string
}

func (o *opts) add(desc string, opt ...kgo.Opt) {
	o.list = append(o.list, opt...)
	o.desc = append(o.desc, desc)
}

// producerOpts are the producer settings of the produce, copy and
// e2e-produce modes. partitioner: the workload's, or nil for franz-go's
// default partitioner.
func producerOpts(w workload, o *opts, partitioner kgo.Partitioner, name string) {
	codec := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(),
		"lz4":  kgo.Lz4Compression(),
		"zstd": kgo.ZstdCompression(),
	}
	if w.settings == "equal" {
		// idempotence is franz-go's default
		o.add("RequiredAcks(AllISRAcks())", kgo.RequiredAcks(kgo.AllISRAcks()))
		o.add("ProducerLinger(5ms)", kgo.ProducerLinger(5*time.Millisecond))
		o.add("ProducerBatchMaxBytes(16384)", kgo.ProducerBatchMaxBytes(16384))
		// Explicit even for none: franz-go's default is snappy.
		o.add("ProducerBatchCompression("+w.compression+")", kgo.ProducerBatchCompression(codec[w.compression]))
		if partitioner == nil {
			// KIP-480 sticky for null keys, murmur2 (Java's hash) for keys: as ours.
			partitioner, name = kgo.StickyKeyPartitioner(nil), "StickyKeyPartitioner(nil)"
		}
		// Its default (50,000) must not be what limits the window.
		n := max(2*w.window, 100000)
		o.add(fmt.Sprintf("MaxBufferedRecords(%d)", n), kgo.MaxBufferedRecords(n))
	} else if w.compression != "none" {
		// defaults: idempotence and acks=all are franz-go's defaults (the
		// idempotent workloads are defined by them: nothing to set).
		o.add("ProducerBatchCompression("+w.compression+")", kgo.ProducerBatchCompression(codec[w.compression]))
	}
	if partitioner != nil {
		o.add("RecordPartitioner("+name+")", kgo.RecordPartitioner(partitioner))
	}
}

// fetchOpts are the fetch settings every client uses in the consume, copy
// and e2e-read modes with --settings equal (CRC checking is on: franz-go's
// default); none with defaults.
func fetchOpts(w workload, o *opts) {
	if w.settings != "equal" {
		return
	}
	o.add("FetchMaxWait(500ms)", kgo.FetchMaxWait(500*time.Millisecond)) // franz-go's default: 5 s
	o.add("FetchMinBytes(1)", kgo.FetchMinBytes(1))
	o.add("FetchMaxBytes(50MiB)", kgo.FetchMaxBytes(50<<20))
	o.add("FetchMaxPartitionBytes(1MiB)", kgo.FetchMaxPartitionBytes(1<<20))
}

// consumeOpts are the options of consume and e2e-read: every partition
// from its start (the workload), read_committed where the workload is
// defined by it (in equal also read_uncommitted explicitly).
func consumeOpts(w workload, o *opts, committed bool) {
	start := make(map[int32]kgo.Offset, w.partitions)
	for p := range int32(w.partitions) {
		start[p] = kgo.NewOffset().AtStart()
	}
	fetchOpts(w, o)
	o.add("ConsumePartitions(all, AtStart)", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{w.topic: start}))
	if committed {
		o.add("FetchIsolationLevel(ReadCommitted)", kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	} else if w.settings == "equal" {
		o.add("FetchIsolationLevel(ReadUncommitted)", kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
}

// copyOpts are the options of copy: the workload's group, id, input,
// start, isolation and partition mapping, and the producer's and fetch
// settings.
func copyOpts(w workload, o *opts) {
	// Each output record goes to the partition number of its input record.
	producerOpts(w, o, kgo.ManualPartitioner(), "ManualPartitioner()")
	fetchOpts(w, o)
	o.add("TransactionalID", kgo.TransactionalID(w.txnID))
	o.add("ConsumerGroup", kgo.ConsumerGroup(w.group))
	o.add("ConsumeTopics", kgo.ConsumeTopics(w.topic))
	o.add("ConsumeResetOffset(AtStart)", kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	o.add("FetchIsolationLevel(ReadCommitted)", kgo.FetchIsolationLevel(kgo.ReadCommitted()))
}

// printSettings prints what the client is given for the workload (and
// with --settings defaults, franz-go's defaults that then apply).
func printSettings(w workload) {
	var o opts
	role := "producer"
	switch w.mode {
	case "produce", "e2e-produce":
		producerOpts(w, &o, nil, "")
		if w.txnMs > 0 {
			o.add("TransactionalID", kgo.TransactionalID(w.txnID))
		}
	case "consume":
		role = "consumer"
		consumeOpts(w, &o, w.isolation == "committed")
	case "e2e-read":
		role = "consumer"
		consumeOpts(w, &o, true)
	case "copy":
		role = "GroupTransactSession"
		copyOpts(w, &o)
	}
	fmt.Println(role + ": " + strings.Join(append([]string{"SeedBrokers"}, o.desc...), ", "))
	if w.settings == "defaults" {
		fmt.Println("  not set, franz-go v1.22.3's defaults: acks=all + idempotent, ProducerLinger 10ms, " +
			"snappy compression, ProducerBatchMaxBytes 1000012, MaxBufferedRecords 50000, " +
			"UniformBytesPartitioner(64KiB), FetchMaxWait 5s, FetchMaxBytes 50MiB, " +
			"FetchMaxPartitionBytes 1MiB, read_uncommitted, classic group protocol (cooperative-sticky)")
	}
}

func runProduce(w workload) (float64, []time.Duration, error) {
	ctx := context.Background()
	var o opts
	producerOpts(w, &o, nil, "")
	txn := w.txnMs > 0
	if txn {
		o.add("TransactionalID", kgo.TransactionalID(w.txnID))
	}
	cl, err := kgo.NewClient(append(clientOpts(w), o.list...)...)
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
	if w.e2e {
		// copy --e2e: an e2e producer's records (see e2e.rs).
		if v := string(r.Value); v == "ready" || v == "w" ||
			(len(r.Value) == w.size && strings.HasPrefix(v, "e2e:")) {
			return nil
		}
		return fmt.Errorf("%s partition %d offset %d: an unexpected value of %d bytes",
			r.Topic, r.Partition, r.Offset, len(r.Value))
	}
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
	var o opts
	consumeOpts(w, &o, w.isolation == "committed")

	t0 := time.Now()
	cl, err := kgo.NewClient(append(clientOpts(w), o.list...)...)
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
	var o opts
	copyOpts(w, &o)
	s, err := kgo.NewGroupTransactSession(append(clientOpts(w), o.list...)...)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close()

	every := time.Duration(w.txnMs) * time.Millisecond
	var commits []time.Duration
	var t0, end time.Time // the first input record's arrival, the last End
	last := time.Now()
	committed := 0 // input records copied in committed transactions
	ready := 0     // copy --e2e: `ready` records copied
	signalled := !w.e2e
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
			}
			var bad error
			fetches.EachRecord(func(r *kgo.Record) {
				if bad != nil {
					return
				}
				if bad = w.check(r); bad != nil {
					return
				}
				if w.e2e && string(r.Value) == "ready" {
					ready++
				} else if t0.IsZero() {
					t0 = last
				}
				s.Produce(ctx, &kgo.Record{Topic: w.out, Partition: r.Partition, Key: r.Key, Value: r.Value}, promise)
				pending++
			})
			if bad != nil {
				return 0, nil, bad
			}
			if !signalled && ready >= w.partitions {
				if err := os.WriteFile(w.readyFile, []byte("ready\n"), 0o644); err != nil {
					return 0, nil, err
				}
				signalled = true
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

func commitList(commits []time.Duration) string {
	ms := make([]string, len(commits))
	for i, d := range commits {
		ms[i] = strconv.FormatFloat(d.Seconds()*1e3, 'f', 3, 64)
	}
	return strings.Join(ms, ",")
}

func main() {
	w := parse()
	if w.print {
		printSettings(w)
		return
	}
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
	case "e2e-produce":
		err = runE2eProduce(w)
	case "e2e-read":
		err = runE2eRead(w)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-franz-go:", err)
		os.Exit(1)
	}
	if w.mode == "e2e-produce" || w.mode == "e2e-read" {
		return
	}
	fmt.Printf("{\"client\":\"franz-go\",\"settings\":\"%s\",\"records\":%d,\"bytes\":%d,\"secs\":%.6f,\"commit_ms\":[%s]}\n",
		w.settings, w.records, w.records*w.size, secs, commitList(commits))
}
