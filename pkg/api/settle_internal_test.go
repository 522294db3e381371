package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// FuzzLockTokensAgreesWithEncodingJSON: a settlement's body that passes
// decodeLockTokens' checks is read as encoding/json reads it into
// {"lockTokens": []string}: the same tokens, and an error exactly when
// encoding/json has one.
func FuzzLockTokensAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"lockTokens":["a","b"]}`, `{"LOCKTOKENS":["a"]}`, `{"lockTokens":null}`, `{"lockTokens":[]}`,
		`{"lockTokens":[null,"x"]}`, `{"lockTokens":"a"}`, `{"lockTokens":[1]}`, `{"lockTokens":[["a"]]}`,
		`{"other":1,"lockTokens":["\u0041\n\ud83d\ude00"]}`, `{"lock\u0054okens":["a"]}`, `{"loc\u212atokens":["k"]}`,
		`{}`, `{"lockTokens":{"a":"b"}}`, `{"lockTokens":[true]}`, `{"lockTokens":["a",null,{}]}`,
		`{"lockTokens": [ "a" , "b\"c",  "é", "\u00e9x", "" ] }`, "{\"lockTokens\":[\"a\xffb\",\"c\"]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := rawjson.ValidStrict(body); err != nil || rawjson.KindOf(body) != rawjson.Object {
			return
		}
		var want settleRequest
		wantErr := json.Unmarshal(body, &want)
		got, ok := lockTokens(body)
		if ok != (wantErr == nil) {
			t.Fatalf("%s: ok %v, encoding/json: %v", body, ok, wantErr)
		}
		if ok && !slices.Equal(got, want.LockTokens) {
			t.Fatalf("%s: tokens %q, encoding/json %q", body, got, want.LockTokens)
		}
	})
}

// TestWriteSettled_AsEncodingJSON: a settlement's answer is the bytes,
// headers (and its length) and status that c.JSON writes, with tokens and
// messages that encoding/json escapes or replaces, and without.
func TestWriteSettled_AsEncodingJSON(t *testing.T) {
	for _, res := range []queue.Result{
		{},
		{Succeeded: []string{"AAAAAAAAAAAAAAAAAAAAAA", "B-_AAAAAAAAAAAAAAAAAAA"}},
		{Failed: []queue.Failure{{LockToken: "bogus", Code: queue.CodeBadRequest, Message: "This is not a lock token of this broker."}}},
		{Succeeded: []string{"AAAAAAAAAAAAAAAAAAAAAA"}, Failed: []queue.Failure{
			{LockToken: "<a&b>\"\\\n\u2028é\xff", Code: queue.CodeTokenLost, Message: "m"},
			{LockToken: strings.Repeat("é", 40), Code: "c\x7f", Message: "x\ty"},
		}},
	} {
		want := answer(t, "/", func(c echo.Context) error { return c.JSON(http.StatusOK, settledValue(res)) })
		got := answer(t, "/", func(c echo.Context) error { return writeSettled(c, res) })
		// Over the wire net/http gives c.JSON's answer its length too while
		// it fits in the server's buffer, and sends a longer one chunked;
		// writeSettled gives it always.
		if n := got.Header().Get(echo.HeaderContentLength); n != strconv.Itoa(got.Body.Len()) {
			t.Fatalf("writeSettled: Content-Length %q for %d bytes", n, got.Body.Len())
		}
		got.Header().Del(echo.HeaderContentLength)
		if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || !equalHeaders(got.Header(), want.Header()) {
			t.Fatalf("writeSettled: %d %v %q; c.JSON: %d %v %q", got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		pretty := answer(t, "/?pretty", func(c echo.Context) error { return writeSettled(c, res) })
		if !bytes.Contains(pretty.Body.Bytes(), []byte("\n  ")) {
			t.Fatalf("?pretty answered %q; want it indented", pretty.Body)
		}
	}
}

func answer(t *testing.T, target string, h echo.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := h(echo.New().NewContext(httptest.NewRequest(http.MethodPost, target, nil), rec)); err != nil {
		t.Fatal(err)
	}
	return rec
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// FuzzPlainLockTokens: a body the scan of the usual form reads is read
// the same the long way (strict validation, then the member), with no
// error; the scan declines what it does not read.
func FuzzPlainLockTokens(f *testing.F) {
	for _, s := range []string{
		`{"lockTokens":["a","b"]}`, ` { "lockTokens" : [ "Ab-_9" ,"x"] } `, "{\"lockTokens\":[\"a\"]}\n",
		`{"lockTokens":[]}`, `{"lockTokens":["a"],"lockTokens":["b"]}`, `{"lockTokens":["a\"b"]}`,
		`{"lockTokens":["a",]}`, `{"lockTokens":["a"]`, `{"LockTokens":["a"]}`, `{"lockTokens":["a"]}x`,
		`{"lockTokens":["é"]}`, `{"lockTokens":[""]}`, `{"lockTokens":null}`, `{"lockTokens":["a" "b"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := plainLockTokens(body)
		if !ok {
			return
		}
		if _, err := rawjson.ValidStrict(body); err != nil {
			t.Fatalf("%q: read as %q, but not valid: %v", body, got, err)
		}
		want, wok := lockTokens(body)
		if !wok || len(want) == 0 || len(want) > maxLockTokens || !slices.Equal(got, want) {
			t.Fatalf("%q: scan %q, the long way %q (ok %v)", body, got, want, wok)
		}
	})
}

// TestPlainLockTokens: the bodies clients send take the scan, spaced as
// encoding/json, Python's json.dumps or a person writes them; so many
// tokens that the long way must name the bound do not.
func TestPlainLockTokens(t *testing.T) {
	for _, body := range []string{
		`{"lockTokens":["AAAAAAAAAAAAAAAAAAAAAA","b-_9"]}`,
		`{"lockTokens": ["AAAAAAAAAAAAAAAAAAAAAA", "b-_9"]}`,
		"{\n  \"lockTokens\": [\n    \"AAAAAAAAAAAAAAAAAAAAAA\",\n    \"b-_9\"\n  ]\n}\n",
	} {
		got, ok := plainLockTokens([]byte(body))
		if !ok || !slices.Equal(got, []string{"AAAAAAAAAAAAAAAAAAAAAA", "b-_9"}) {
			t.Errorf("%q: %q, %v", body, got, ok)
		}
	}
	many := `{"lockTokens":["a"` + strings.Repeat(`,"a"`, maxLockTokens) + `]}`
	if _, ok := plainLockTokens([]byte(many)); ok {
		t.Errorf("%d tokens read by the scan", maxLockTokens+1)
	}
	if _, err := decodeLockTokens([]byte(many)); err == nil {
		t.Errorf("%d tokens accepted", maxLockTokens+1)
	}
}

// BenchmarkPlainLockTokens: an acknowledge's body of 100 tokens, read by
// the scan.
func BenchmarkPlainLockTokens(b *testing.B) {
	body := []byte(`{"lockTokens":["` + strings.Repeat(`AAAAAAAAAAAAAAAAAAAAAA","`, 99) + `AAAAAAAAAAAAAAAAAAAAAA"]}`)
	for b.Loop() {
		if _, ok := plainLockTokens(body); !ok {
			b.Fatal("not read")
		}
	}
}

// BenchmarkDecodeLockTokens_LongWay: the same body with escapes in its
// name, which the scan leaves to the strict validation and the lookup.
func BenchmarkDecodeLockTokens_LongWay(b *testing.B) {
	body := []byte(`{"lock\u0054okens":["` + strings.Repeat(`AAAAAAAAAAAAAAAAAAAAAA","`, 99) + `AAAAAAAAAAAAAAAAAAAAAA"]}`)
	for b.Loop() {
		if tokens, err := decodeLockTokens(body); err != nil || len(tokens) != 100 {
			b.Fatal(len(tokens), err)
		}
	}
}
