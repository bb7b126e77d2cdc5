// The end-to-end latency workloads (e2e-produce, e2e-read): franz-go's side
// of bench/peers/shared/e2e.rs, the same values, schedule and result lines.

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// e2eIdle: how long the reader waits for the next record before it reports
// the missing ones as lost; e2eLinger: how long it keeps reading once
// every record arrived (late duplicates).
const (
	e2eIdle   = 30 * time.Second
	e2eLinger = 500 * time.Millisecond
)

var e2eMagic = []byte("e2e:")

// e2eValue is record index's value, scheduled at ns: "e2e:", the index and
// the time (big-endian u64s), then 'a'..'z' filler up to size bytes.
func e2eValue(index, ns uint64, size int) []byte {
	v := make([]byte, max(size, 20))
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	copy(v, e2eMagic)
	binary.BigEndian.PutUint64(v[4:12], index)
	binary.BigEndian.PutUint64(v[12:20], ns)
	return v
}

// pacer is the fixed schedule: records at rate per second from t0.
type pacer struct {
	t0, rate, records, next uint64
	lagMax                  uint64 // ns, the longest a batch of due records waited
}

func (p *pacer) scheduled(i uint64) uint64 {
	return p.t0 + uint64(float64(i)*1e9/float64(p.rate))
}

// due sleeps until a record is due and returns the records due now, [from, to).
func (p *pacer) due() (uint64, uint64) {
	if p.next >= p.records {
		return p.next, p.next
	}
	first := p.scheduled(p.next)
	now := uint64(time.Now().UnixNano())
	if now < first {
		time.Sleep(time.Duration(first - now))
		now = uint64(time.Now().UnixNano())
	}
	if now > first && now-first > p.lagMax {
		p.lagMax = now - first
	}
	elapsed := now - p.t0
	if now < p.t0 {
		elapsed = 0
	}
	due := min(uint64(float64(elapsed)*float64(p.rate)/1e9)+1, p.records)
	from := p.next
	p.next = max(due, from+1)
	return from, p.next
}

func runE2eProduce(w workload) error {
	ctx := context.Background()
	var o opts
	producerOpts(w, &o, nil, "")
	txn := w.txnMs > 0
	if txn {
		o.add("TransactionalID", kgo.TransactionalID(w.txnID))
	}
	cl, err := kgo.NewClient(append(clientOpts(w), o.list...)...)
	if err != nil {
		return err
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
			return err
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: w.topic, Value: []byte("w")}).FirstErr(); err != nil {
		return err
	}
	if txn {
		if err := commit(); err != nil {
			return err
		}
	}

	a := newAcks(w.window)
	every := time.Duration(w.txnMs) * time.Millisecond
	var commits []time.Duration
	head := 0 // the oldest record not yet awaited
	t0 := time.Now()
	p := pacer{t0: uint64(t0.UnixNano()), rate: uint64(w.rate), records: uint64(w.records)}
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
	}
	txnStart := time.Now()
	for {
		from, to := p.due()
		if from == to {
			break
		}
		for i := from; i < to; i++ {
			r := &kgo.Record{Topic: w.topic, Value: e2eValue(i, p.scheduled(i), w.size)}
			slot := int(i) % len(a.done)
			a.done[slot].Store(false)
			cl.Produce(ctx, r, a.promise(slot))
			if int(i)+1-head > w.window {
				if err := a.await(head); err != nil {
					return err
				}
				head++
			}
		}
		if txn && time.Since(txnStart) >= every {
			c := time.Now()
			if err := commit(); err != nil {
				return err
			}
			commits = append(commits, time.Since(c))
			for ; head < int(to); head++ {
				if err := a.await(head); err != nil {
					return err
				}
			}
			if err := cl.BeginTransaction(); err != nil {
				return err
			}
			txnStart = time.Now()
		}
	}
	if txn {
		c := time.Now()
		if err := commit(); err != nil {
			return err
		}
		commits = append(commits, time.Since(c))
	}
	for ; head < w.records; head++ {
		if err := a.await(head); err != nil {
			return err
		}
	}
	fmt.Printf("{\"client\":\"franz-go\",\"mode\":\"e2e-produce\",\"settings\":\"%s\",\"records\":%d,"+
		"\"secs\":%.6f,\"lag_max_ms\":%.3f,\"commit_ms\":[%s]}\n",
		w.settings, w.records, time.Since(t0).Seconds(), float64(p.lagMax)/1e6, commitList(commits))
	return nil
}

func runE2eRead(w workload) error {
	var o opts
	consumeOpts(w, &o, true)
	t0 := time.Now()
	cl, err := kgo.NewClient(append(clientOpts(w), o.list...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	n := uint64(w.records)
	seen := make([]uint64, (n+63)/64)
	latencies := make([]uint32, 0, n) // µs
	var distinct, dups uint64
	ready := map[int32]bool{}
	signalled := false
	last := time.Now()
	var completeAt time.Time
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		fetches := cl.PollFetches(ctx)
		cancel()
		now := uint64(time.Now().UnixNano())
		for _, e := range fetches.Errors() {
			if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) {
				continue
			}
			return fmt.Errorf("fetching %s partition %d: %w", e.Topic, e.Partition, e.Err)
		}
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			switch v := r.Value; {
			case bad != nil:
			case string(v) == "ready":
				ready[r.Partition] = true
			case string(v) == "w":
			case len(v) == max(w.size, 20) && bytes.HasPrefix(v, e2eMagic):
				i := binary.BigEndian.Uint64(v[4:12])
				ns := binary.BigEndian.Uint64(v[12:20])
				if i >= n {
					bad = fmt.Errorf("index %d beyond the %d records", i, n)
					return
				}
				if seen[i/64]&(1<<(i%64)) != 0 {
					dups++
					return
				}
				seen[i/64] |= 1 << (i % 64)
				distinct++
				us := uint64(0)
				if now > ns {
					us = (now - ns) / 1000
				}
				latencies = append(latencies, uint32(min(us, math.MaxUint32)))
			default:
				bad = fmt.Errorf("partition %d offset %d: an unexpected value of %d bytes", r.Partition, r.Offset, len(v))
			}
		})
		if bad != nil {
			return bad
		}
		if fetches.NumRecords() > 0 {
			last = time.Now()
		}
		if !signalled && len(ready) >= w.partitions {
			if err := os.WriteFile(w.readyFile, []byte("ready\n"), 0o644); err != nil {
				return err
			}
			signalled = true
		}
		if distinct == n {
			if completeAt.IsZero() {
				completeAt = time.Now()
			}
			if time.Since(completeAt) >= e2eLinger {
				break
			}
		} else if time.Since(last) > e2eIdle {
			break
		}
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) string {
		if len(latencies) == 0 {
			return "null"
		}
		rank := min(max(int(math.Ceil(float64(len(latencies))*p)), 1), len(latencies))
		return fmt.Sprintf("%.3f", float64(latencies[rank-1])/1e3)
	}
	fmt.Println(strings.Join([]string{
		`{"client":"franz-go","mode":"e2e-read","settings":"` + w.settings + `"`,
		fmt.Sprintf(`"records":%d,"received":%d,"lost":%d,"duplicates":%d`, n, distinct, n-distinct, dups),
		fmt.Sprintf(`"p50_ms":%s,"p99_ms":%s,"p999_ms":%s,"max_ms":%s`, pct(0.5), pct(0.99), pct(0.999), pct(1)),
		fmt.Sprintf(`"secs":%.6f}`, time.Since(t0).Seconds()),
	}, ","))
	if distinct != n || dups != 0 {
		return fmt.Errorf("%d records lost, %d duplicated", n-distinct, dups)
	}
	return nil
}
