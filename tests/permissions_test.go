package tests_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// credential is one way a matrix request presents itself.
type credential struct {
	name   string
	client *http.Client
	header []string
	// verdict is the status this credential gets on a route that needs a
	// credential: 401, or 0 when it holds every permission. Tokens are
	// judged by the rule for tokens instead.
	verdict int
	// token is the path the token was signed for; tokens are judged by it.
	token *string
}

// Every route of the API's route table, against every kind of credential,
// on one broker that takes SAS keys and client certificates: a route that
// needs a credential refuses what holds nothing (401, naming the kinds the
// broker takes), keys and a trusted certificate pass everywhere, and a SAS
// token passes where Azure lets one pass (publish, and receive on queue
// subscriptions, below its resource; and scrape the metrics), is 401 where
// its resource does not reach, and 403 where it reaches but a token never
// holds the permission.
// The routes come from api.RouteTable, so a route is covered the day it is
// added.
func TestPermissions_Matrix(t *testing.T) {
	t.Parallel()
	const key1, key2 = "bWF0cml4LWtleS1vbmUtMDEyMzQ1Njc4OQ==", "bWF0cml4LWtleS10d28tOTg3NjU0MzIxMA=="
	ca := testpki.NewCA(t, "matrix CA")
	dir := t.TempDir()
	certFile, keyFile := ca.WriteFiles(t, dir, "127.0.0.1")
	caFile := filepath.Join(dir, "ca.pem")
	testpki.MustWriteFile(t, caFile, ca.PEM())
	b := startBroker(t, merge(devEnv(),
		"inbound__serverAuth__tlsPolicy", "strict",
		"inbound__serverAuth__serverCert__source", "File",
		"inbound__serverAuth__serverCert__certFile", certFile,
		"inbound__serverAuth__serverCert__keyFile", keyFile,
		"inbound__clientAuth__clientCert__enabled", "true",
		"inbound__clientAuth__clientCert__source", "File",
		"inbound__clientAuth__clientCert__caFile", caFile,
		"inbound__clientAuth__clientCert__allowUnknownCA", "false",
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", key1,
		"inbound__clientAuth__sasKeys__key2", key2,
		"metrics__reporterType", "prometheus",
	))
	trusted := ca.Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	untrusted := testpki.SelfSigned(t, "stranger")
	plain := matrixClient(ca.Pool(), nil)
	keyed := func(k string) []string { return []string{auth.HeaderSASKey, k} }
	sink := newSink(t, nil)
	for _, put := range []struct {
		path string
		body any
	}{
		{"/topics/t", map[string]any{}},
		{"/topics/t/eventSubscriptions/s", map[string]any{"properties": map[string]any{"destination": webhookDest(sink.URL)}}},
	} {
		if code, _, rb := do(t, plain, http.MethodPut, b.TLS+put.path+"?"+apiVersion, "application/json", put.body, keyed(key1)...); code != 200 {
			t.Fatalf("PUT %s = %d: %s", put.path, code, rb)
		}
	}

	hour := time.Now().Add(time.Hour)
	publishURL := b.TLS + "/topics/t/events?" + apiVersion
	token := func(resource string, expiry time.Time) []string {
		return []string{auth.HeaderSASToken, auth.GenerateSASToken(resource, expiry, key1)}
	}
	at := func(p string) *string { return &p }
	creds := []credential{
		{name: "no credential", client: plain, verdict: 401},
		{name: "a wrong key", client: plain, header: keyed("d3Jvbmcta2V5LTAxMjM0NTY3ODk="), verdict: 401},
		{name: "key1", client: plain, header: keyed(key1)},
		{name: "key2", client: plain, header: keyed(key2)},
		{name: "a trusted certificate", client: matrixClient(ca.Pool(), &trusted)},
		{name: "an untrusted certificate", client: matrixClient(ca.Pool(), &untrusted), verdict: 401},
		{name: "a token for this topic's publish URL", client: plain, header: token(publishURL, hour), token: at("/topics/t/events")},
		{name: "a token for another topic", client: plain, header: token(b.TLS+"/topics/other/events?"+apiVersion, hour), token: at("/topics/other/events")},
		{name: "a token for the broker's root", client: plain, header: token(b.TLS+"/", hour), token: at("")},
		{name: "an expired token", client: plain, header: token(publishURL, time.Now().Add(-time.Minute)), verdict: 401},
	}

	// A connection dialled but never used would hold the broker's stop
	// for seconds.
	t.Cleanup(func() {
		for _, c := range creds {
			c.client.CloseIdleConnections()
		}
	})

	// Two rounds: the DELETEs last, so that every other request finds
	// the topic and subscription it names, and its answer shows that it
	// reached its handler.
	var mu sync.Mutex
	var failures []string
	round := func(routes []api.Route, exist bool) {
		type job struct {
			route api.Route
			cred  credential
		}
		jobs := make(chan job)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					if msg := checkRoute(b.TLS, j.route, j.cred, exist); msg != "" {
						mu.Lock()
						failures = append(failures, msg)
						mu.Unlock()
					}
				}
			}()
		}
		for _, r := range routes {
			for _, c := range creds {
				jobs <- job{r, c}
			}
		}
		close(jobs)
		wg.Wait()
	}
	routes := api.RouteTable()
	deletes := func(r api.Route) bool { return r.Method == http.MethodDelete }
	start := time.Now()
	round(slices.DeleteFunc(slices.Clone(routes), deletes), true)
	round(slices.DeleteFunc(slices.Clone(routes), func(r api.Route) bool { return !deletes(r) }), false)
	slices.Sort(failures)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d routes × %d credentials in %v", len(routes), len(creds), time.Since(start).Round(time.Millisecond))
}

// matrixClient trusts roots and presents cert, if any. It does not follow
// redirects, so that every answer is the route's own.
func matrixClient(roots *x509.CertPool, cert *tls.Certificate) *http.Client {
	c := tlsClient(roots, cert)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// expected returns the status route r must answer with credential c: 401
// or 403, or 0 for "passes the credential check".
func expected(r api.Route, c credential) int {
	if r.Permission == api.Public {
		return 0
	}
	if c.token == nil {
		return c.verdict
	}
	// The resource a request acts on is its path without the action.
	resource := concrete(r.Path)
	if i := strings.LastIndex(resource, ":"); i > strings.LastIndex(resource, "/") {
		resource = resource[:i]
	}
	prefix := *c.token
	if prefix != "" && resource != prefix && !strings.HasPrefix(resource, prefix+"/") {
		return 401 // the token is for something else
	}
	if r.Permission == auth.Publish || r.Permission == auth.Receive || r.Permission == auth.Scrape {
		return 0
	}
	return 403
}

// concrete is a route's path with the matrix's names.
func concrete(p string) string {
	return strings.NewReplacer("{topic}", "t", "{sub}", "s", "{id}", "e1", "*", "index.html").Replace(p)
}

// namespaceAction says whether p is an action of the namespace API
// (publish, receive and settle), which takes its api-versions; the
// operator's actions take the edge API's.
func namespaceAction(p string) bool {
	for _, a := range []string{":publish", ":receive", ":acknowledge", ":release", ":reject", ":renewLock"} {
		if strings.HasSuffix(p, a) {
			return true
		}
	}
	return false
}

// checkRoute sends one request of route r with credential c and returns
// what is wrong with the answer, or "". While exist holds, the topic and
// subscription the request names exist, so a request past the credential
// check must not answer 404.
func checkRoute(base string, r api.Route, c credential, exist bool) string {
	p := concrete(r.Path)
	version := apiVersion
	switch {
	case strings.HasSuffix(p, "/api/events"):
		version = "api-version=2018-01-01"
	case namespaceAction(p):
		version = "api-version=2024-06-01"
	}
	var body io.Reader
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(r.Method, base+p+"?"+version, body)
	if err != nil {
		return err.Error()
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	what := fmt.Sprintf("%s %s with %s", r.Method, r.Path, c.name)
	resp, err := c.client.Do(req)
	if err != nil {
		return what + ": " + err.Error()
	}
	defer resp.Body.Close()
	var rb []byte
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		rb, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<10)) // a stream is left after its headers
	}
	want := expected(r, c)
	switch {
	case want == 0 && (resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode >= 500 || exist && resp.StatusCode == 404 ||
		bytes.Contains(rb, []byte(`"InvalidApiVersion"`))):
		return fmt.Sprintf("%s: %d, want it past the credential check, at its handler: %.300s", what, resp.StatusCode, rb)
	case want != 0 && resp.StatusCode != want:
		return fmt.Sprintf("%s: %d, want %d: %.300s", what, resp.StatusCode, want, rb)
	case want == 0 || r.Method == http.MethodHead:
		return ""
	}
	var env struct {
		Error struct {
			Code    string
			Details struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(rb, &env); err != nil {
		return fmt.Sprintf("%s: %d with a body that is not the envelope: %s", what, resp.StatusCode, rb)
	}
	msg := env.Error.Details.Message
	if want == 401 {
		got := resp.Header.Values("WWW-Authenticate")
		if len(got) != 3 || !strings.HasPrefix(got[0], "ClientCertificate") || !strings.HasPrefix(got[1], "SharedAccessKey") ||
			!strings.HasPrefix(got[2], "SharedAccessSignature") {
			return fmt.Sprintf("%s: 401 with WWW-Authenticate %q, want the three kinds this broker takes", what, got)
		}
		if env.Error.Code != "Unauthorized" || !strings.Contains(msg, "this broker takes a client certificate, an aeg-sas-key") {
			return fmt.Sprintf("%s: 401 %s %q, want the kinds this broker takes named", what, env.Error.Code, msg)
		}
		return ""
	}
	if env.Error.Code != "Forbidden" || env.Error.Details.Code != "Forbidden" || !strings.Contains(msg, "needs the "+string(r.Permission)+" permission") {
		return fmt.Sprintf("%s: 403 %s/%s %q, want the permission named", what, env.Error.Code, env.Error.Details.Code, msg)
	}
	return ""
}
