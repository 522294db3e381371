package brokertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Do sends one request and returns the response's status, header and whole
// body. body may be nil (no body), a []byte, json.RawMessage or string (sent
// as is, with a Content-Length), an io.Reader (streamed; chunked unless
// http.NewRequest can tell its length) or any other value, sent as its JSON
// encoding. contentType, when not empty, is the Content-Type header.
//
// Do fails tb if the request cannot be built or sent or the response cannot
// be read; a response with any status is a success.
func Do(tb testing.TB, client *http.Client, method, url, contentType string, body any) (status int, header http.Header, respBody []byte) {
	tb.Helper()
	req := NewRequest(tb, method, url, contentType, body)
	return Send(tb, client, req)
}

// NewRequest builds a request as Do would send it, for tests that need to
// add headers first. It fails tb if the request cannot be built.
func NewRequest(tb testing.TB, method, url, contentType string, body any) *http.Request {
	tb.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case json.RawMessage:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	default:
		r = bytes.NewReader(MustJSON(tb, b))
	}
	req, err := http.NewRequestWithContext(tb.Context(), method, url, r)
	if err != nil {
		tb.Fatalf("build %s %s: %v", method, url, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// Send sends req with client and returns the response's status, header and
// whole body. It fails tb if the request cannot be sent or the body read.
func Send(tb testing.TB, client *http.Client, req *http.Request) (status int, header http.Header, body []byte) {
	tb.Helper()
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read response body: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, resp.Header, body
}

// MustJSON returns the JSON encoding of v, failing tb if it has none.
func MustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode %T as JSON: %v", v, err)
	}
	return b
}

// MustUnmarshal decodes the JSON data into v, failing tb if it cannot.
func MustUnmarshal(tb testing.TB, data []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("decode %s into %T: %v", Abbrev(data), v, err)
	}
}

// ErrorEnvelope is the error body every API failure carries:
// {"error":{"code":…,"details":{"code":…,"message":…}}}.
type ErrorEnvelope struct {
	Error struct {
		Code    string `json:"code"`
		Details struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"details"`
	} `json:"error"`
}

// MustDecodeError decodes an error envelope strictly: unknown members at any
// level, a missing code or message, or trailing data fail tb.
func MustDecodeError(tb testing.TB, body []byte) ErrorEnvelope {
	tb.Helper()
	var env ErrorEnvelope
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		tb.Fatalf("error body %s is not the error envelope: %v", Abbrev(body), err)
	}
	if dec.More() {
		tb.Fatalf("error body %s has data after the envelope", Abbrev(body))
	}
	if env.Error.Code == "" || env.Error.Details.Code == "" || env.Error.Details.Message == "" {
		tb.Fatalf("error body %s lacks error.code, error.details.code or error.details.message", Abbrev(body))
	}
	return env
}

// Abbrev returns b as a string, shortened to 300 bytes for messages.
func Abbrev(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
