// Command bench-franz-go is franz-go's side of bench/compare.sh: the same
// options, loop and JSON result line as bench/peers/ours and
// bench/peers/rdkafka (see bench/peers/shared/args.rs for the options).
//
// The loop: records are produced as fast as a window allows; once more than
// --window records are outstanding, the oldest is awaited (a FIFO, as the
// Rust programs await their oldest send future). With --txn-ms, after each
// produce, a commit once the transaction is that old: Flush (wait for every
// buffered record) then EndTransaction(TryCommit), whose total duration is the
// commit latency; the outstanding records are then awaited and the next
// transaction begins. Exit 0 only when every record was acknowledged.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type workload struct {
	bootstrap   string
	topic       string
	records     int
	size        int
	keyed       bool
	compression string
	window      int
	txnMs       int
	txnID       string
}

func parse() workload {
	var w workload
	fs := flag.NewFlagSet("bench-franz-go", flag.ExitOnError)
	fs.StringVar(&w.bootstrap, "bootstrap", "", "HOST:PORT")
	fs.StringVar(&w.topic, "topic", "", "topic")
	fs.IntVar(&w.records, "records", 0, "records to send")
	fs.IntVar(&w.size, "size", 0, "value size in bytes")
	fs.BoolVar(&w.keyed, "keyed", false, "key = record index as a decimal string")
	fs.StringVar(&w.compression, "compression", "none", "none, lz4 or zstd")
	fs.IntVar(&w.window, "window", 0, "records outstanding at most")
	fs.IntVar(&w.txnMs, "txn-ms", 0, "transactional: commit every this many ms")
	fs.StringVar(&w.txnID, "txn-id", "", "transactional id")
	_ = fs.Parse(os.Args[1:])
	bad := func(msg string) {
		fmt.Fprintln(os.Stderr, "error:", msg)
		os.Exit(2)
	}
	switch {
	case w.bootstrap == "" || w.topic == "":
		bad("--bootstrap and --topic are required")
	case w.records < 1 || w.size < 1 || w.window < 1:
		bad("--records, --size and --window must be at least 1")
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

// acks tracks the outstanding records in a ring of window+1 slots: record j
// uses slot j % (window+1), which is free again once record j was awaited.
type acks struct {
	done  []atomic.Bool
	wake  chan struct{}
	mu    sync.Mutex
	first error
}

func newAcks(window int) *acks {
	return &acks{done: make([]atomic.Bool, window+1), wake: make(chan struct{}, 1)}
}

func (a *acks) promise(slot int) func(*kgo.Record, error) {
	return func(_ *kgo.Record, err error) {
		if err != nil {
			a.mu.Lock()
			if a.first == nil {
				a.first = err
			}
			a.mu.Unlock()
		}
		a.done[slot].Store(true)
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

func (a *acks) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first
}

// await waits for record j's acknowledgement and fails if any record failed.
func (a *acks) await(j int) error {
	slot := j % len(a.done)
	for !a.done[slot].Load() {
		<-a.wake
	}
	return a.err()
}

func run(w workload) (float64, []time.Duration, error) {
	ctx := context.Background()
	codec := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(),
		"lz4":  kgo.Lz4Compression(),
		"zstd": kgo.ZstdCompression(),
	}
	c := codec[w.compression]
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is franz-go's default
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.ProducerBatchMaxBytes(16384),
		kgo.ProducerBatchCompression(c),
		// KIP-480 sticky for null keys, murmur2 (Java's hash) for keys: as
		// ours.
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		// Its default (10,000) must not be what limits the window.
		kgo.MaxBufferedRecords(max(2*w.window, 100000)),
	}
	if os.Getenv("BENCH_FRANZ_GO_LOG") != "" {
		// Client log on stderr (debugging a run; not used by compare.sh).
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)))
	}
	txn := w.txnMs > 0
	if txn {
		opts = append(opts, kgo.TransactionalID(w.txnID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, nil, err
	}
	defer cl.Close()
	commit := func() error {
		if err := cl.Flush(ctx); err != nil {
			return err
		}
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
	return time.Since(t0).Seconds(), commits, nil
}

func main() {
	w := parse()
	secs, commits, err := run(w)
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
