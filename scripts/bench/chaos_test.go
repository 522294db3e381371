package main

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseChaos(t *testing.T) {
	tests := []struct {
		in      string
		want    string // rate, kinds, timeout and target
		wantErr bool
	}{
		{"0.3:neutral:1:5", "{0.3 [500 408 drop late] 1 5}", false},
		{"0.01:late:5", "{0.01 [late] 5 0}", false},
		{"0.3:all:1:6", "{0.3 [500 408 drop late 503 429] 1 6}", false},
		{"0.1:503,429:2", "{0.1 [503 429] 2 0}", false},
		{"0:500:1", "", true},
		{"1.5:500:1", "", true},
		{"0.3:418:1", "", true},
		{"0.3:500:0", "", true},
		{"0.3:500", "", true},
		{"0.3:500:1:-2", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseChaos(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseChaos(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if s := fmt.Sprintf("{%v %v %v %v}", got.rate, got.kinds, got.timeout, got.target); err == nil && s != tt.want {
				t.Errorf("parseChaos(%q) = %+v, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestChaosRecord(t *testing.T) {
	st := newChaosSub(10)
	var last atomic.Int64
	b := newBatchBody(3, 200)
	b.stamp(4, 1000)
	st.record(b.buf, 5000, &last)
	st.record(b.buf, 6000, &last) // the same three again
	b.stamp(9, 1000)              // ids 9, 10 and 11: two beyond the run
	st.record(b.buf, 7000, &last)
	if st.distinct != 4 || st.dups != 3 || st.unknown != 2 {
		t.Errorf("distinct %d, duplicated %d, unknown %d; want 4, 3, 2", st.distinct, st.dups, st.unknown)
	}
	if last.Load() != 7000 {
		t.Errorf("last new delivery at %d, want 7000", last.Load())
	}
	st.failed(b.buf, 1, 2) // ids 9, 10, 11: one within the run
	st.failed(b.buf, 3, 4)
	if st.fails[9] != 2 {
		t.Errorf("event 9 failed %d times, want 2", st.fails[9])
	}
	// Event 0 fails at 10 s, held 1 s; its retry comes 1.5 s after that
	// ended (0.5 s late) and is held 2 s; the next comes 2 s after that
	// (on time) and is delivered.
	sec := int64(time.Second)
	b.stamp(0, 1000)
	st.failed(b.buf, 10*sec, 11*sec)
	st.failed(b.buf, 12*sec+sec/2, 14*sec+sec/2)
	st.record(b.buf, 16*sec+sec/2, &last)
	want := pairTimes{first: 10 * sec, done: 16*sec + sec/2, ended: 14*sec + sec/2, held: 3 * sec, slack: sec / 2}
	if st.pairs[0] != want {
		t.Errorf("event 0's times %+v, want %+v", st.pairs[0], want)
	} // Nine failures in a row wait 1 + 8 × 2 s.
	if d := backoffOver(9); d != 17*time.Second {
		t.Errorf("back-off over 9 failures = %v, want 17s", d)
	}
}

func TestRelaySplit(t *testing.T) {
	body := []byte(` [{"id":"a","s":"x,]}"}, {"id":"b","n":[1,2]},{"id":"c","q":"\"{"}] `)
	events, err := splitArray(body)
	if err != nil || len(events) != 3 {
		t.Fatalf("splitArray: %d events, %v; want 3", len(events), err)
	}
	chunks := joinChunks(events, 2)
	if len(chunks) != 2 || string(chunks[1]) != `[{"id":"c","q":"\"{"}]` {
		t.Errorf("joinChunks: %q", chunks)
	}
	if _, err := splitArray([]byte(`{"id":"a"}`)); err == nil {
		t.Error("splitArray accepted an object")
	}
}
