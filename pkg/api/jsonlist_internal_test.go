package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// listAnswer is what c.JSON would write for a listing answer.
type listAnswer struct {
	Value     []peekedEvent `json:"value"`
	Total     int           `json:"total"`
	Truncated bool          `json:"truncated"`
}

// writeList writes events as a peek answer does, with the listWriter.
func writeList(c echo.Context, events [][]byte) error {
	l := startList(c, "value")
	for _, ev := range events {
		if !l.next() {
			break
		}
		ds := deliveryState{Queue: "ready", Attempts: 1, LastError: "webhook: <b>&"}
		if l.pretty {
			l.writeIndented(peekedEvent{Event: ev, DeliveryState: ds})
			continue
		}
		l.writeString(`{"event":`)
		l.writeCompact(ev)
		l.writeString(`,"deliveryState":`)
		l.writeJSON(ds)
		l.writeString("}")
	}
	return l.end(member("total", len(events)), member("truncated", false))
}

func listRequest(t *testing.T, target string, h echo.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := h(echo.New().NewContext(httptest.NewRequest(http.MethodGet, target, nil), rec)); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestListWriter_AsCJSON: a listing answer written as it is read has the
// bytes and headers c.JSON writes, whitespace, HTML characters, line and
// paragraph separators and escapes in the events included; with ?pretty
// it is indented and means the same.
func TestListWriter_AsCJSON(t *testing.T) {
	for _, events := range [][][]byte{
		nil,
		{[]byte(`{"id":"1"}`)},
		{[]byte("{\n  \"a\": 1,\r\n  \"b\": \"x y\"\r}"), []byte(`{"subject":"<img src=x onerror=alert(1)>","d":"a&b"}`)},
		{[]byte(`{"s":"quote \" backslash \\ <\u2028\u2029 tab\t","n":[1, 2 ,3]}`), []byte(`[ true , null ]`), []byte(`"x"`)},
		{[]byte("{\"raw\":\"\xe2\x80\xa8\xe2\x80\xa9\",\"e\":\"\\\"<\"}")},
	} {
		want := listRequest(t, "/", func(c echo.Context) error {
			a := listAnswer{Value: []peekedEvent{}, Total: len(events)}
			for _, ev := range events {
				a.Value = append(a.Value, peekedEvent{Event: ev, DeliveryState: deliveryState{Queue: "ready", Attempts: 1, LastError: "webhook: <b>&"}})
			}
			return c.JSON(http.StatusOK, a)
		})
		got := listRequest(t, "/", func(c echo.Context) error { return writeList(c, events) })
		if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Fatalf("listWriter: %d %v\n%s\nc.JSON: %d %v\n%s", got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		pretty := listRequest(t, "/?pretty", func(c echo.Context) error { return writeList(c, events) })
		var a, b any
		if err := json.Unmarshal(pretty.Body.Bytes(), &a); err != nil {
			t.Fatalf("?pretty: %v\n%s", err, pretty.Body)
		}
		_ = json.Unmarshal(want.Body.Bytes(), &b)
		if (len(events) > 0 && !strings.Contains(pretty.Body.String(), "\n    ")) || !jsonEqual(a, b) {
			t.Fatalf("?pretty answered\n%s\nwant it indented, meaning\n%s", pretty.Body, want.Body)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// FuzzWriteCompact: for valid JSON, writeCompact writes what encoding/json
// writes of it as a json.RawMessage.
func FuzzWriteCompact(f *testing.F) {
	for _, s := range []string{`{"a": "<&>"}`, "[1,\n 2]", `"\u2028"`, "\"\xe2\x80\xa9\"", `{"k":"\\\""}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if !json.Valid(src) {
			return
		}
		want, err := json.Marshal(json.RawMessage(src))
		if err != nil {
			return
		}
		var got bytes.Buffer
		l := &listWriter{w: &got}
		l.writeCompact(src)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("writeCompact(%q) = %q, want %q", src, got.Bytes(), want)
		}
	})
}
