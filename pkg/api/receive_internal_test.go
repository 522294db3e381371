package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/pull"
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
	}
	for _, ss := range sizes {
		t.Run(fmt.Sprint(ss), func(t *testing.T) {
			var got []pull.Received
			want := []byte(`{"value":[`)
			for i, n := range ss {
				body := bytes.Repeat([]byte{'a' + byte(i)}, n)
				body[0], body[n-1] = '"', '"'
				r := pull.Received{LockToken: fmt.Sprintf("tok%d", i), DeliveryCount: i + 1, Body: body}
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
