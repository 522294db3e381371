package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/queue"
)

// TestWriteReceived_Bytes: the answer of a receive is the same bytes, and
// its Content-Length right, whatever the sizes of its events against the
// writes it is gathered into: small ones, one that fills a write to the
// byte, and ones larger than a write.
func TestWriteReceived_Bytes(t *testing.T) {
	sizes := [][]int{
		{},
		{10},
		{1024, 1024, 1024},
		{answerChunk - 80},
		{answerChunk},
		{answerChunk + 1, 5, 3 * answerChunk},
		{100, answerChunk - 200, 100, 100},
		// Envelopes that straddle the end of a write, one byte at a time.
		{answerChunk - 100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	}
	for _, ss := range sizes {
		t.Run(fmt.Sprint(ss), func(t *testing.T) {
			var got []queue.Received
			want := []byte(`{"value":[`)
			for i, n := range ss {
				body := bytes.Repeat([]byte{'a' + byte(i)}, n)
				body[0], body[n-1] = '"', '"'
				r := queue.Received{LockToken: fmt.Sprintf("tok%d", i), DeliveryCount: i + 1, Body: body}
				got = append(got, r)
				if i > 0 {
					want = append(want, ',')
				}
				want = fmt.Appendf(want, `{"brokerProperties":{"lockToken":%q,"deliveryCount":%d},"event":%s}`, r.LockToken, r.DeliveryCount, body)
			}
			want = append(want, `]}`...)
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", nil), rec)
			if err := writeReceived(c.Response(), got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Body.Bytes(), want) {
				t.Fatalf("answer differs: got %d bytes, want %d", rec.Body.Len(), len(want))
			}
			if cl := rec.Header().Get(echo.HeaderContentLength); cl != strconv.Itoa(len(want)) {
				t.Fatalf("Content-Length %s, want %d", cl, len(want))
			}
		})
	}
}

// The length an envelope is counted with for the Content-Length is the
// length it is written with.
func TestEnvelopeLen(t *testing.T) {
	for _, token := range []string{"", "tok", "AbC-_09xyzAbC-_09xyzAb", `q"b\s`, "nl\n\x01"} {
		for _, count := range []int{0, 1, 9, 10, 99, 100, 12345, -1, -10} {
			for _, i := range []int{0, 1} {
				r := queue.Received{LockToken: token, DeliveryCount: count}
				got, plain := envelopeLen(i, r)
				if want := len(appendEnvelope(nil, i, r, false)); got != want {
					t.Errorf("envelopeLen(%d, %q, %d) = %d, want %d", i, token, count, got, want)
				}
				if plain && string(appendEnvelope(nil, i, r, true)) != string(appendEnvelope(nil, i, r, false)) {
					t.Errorf("token %q taken as needing no escapes", token)
				}
			}
		}
	}
}

// discardWriter is an http.ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkWriteReceived measures the answer of a receive of 100 events of
// 1 KiB, written to a connection that costs nothing.
func BenchmarkWriteReceived(b *testing.B) {
	got := make([]queue.Received, 100)
	for i := range got {
		body := bytes.Repeat([]byte{'x'}, 1024)
		body[0], body[len(body)-1] = '"', '"'
		got[i] = queue.Received{LockToken: "AbC-_09xyzAbC-_09xyzAb", DeliveryCount: 1, Body: body}
	}
	e := echo.New()
	b.ReportAllocs()
	for b.Loop() {
		w := &discardWriter{h: http.Header{}}
		c := e.NewContext(httptest.NewRequest(http.MethodPost, "/", nil), w)
		if err := writeReceived(c.Response(), got); err != nil {
			b.Fatal(err)
		}
	}
}
