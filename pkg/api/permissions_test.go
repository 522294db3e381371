package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// A refusal says what would be accepted: 401 with a WWW-Authenticate
// challenge per kind of credential the broker takes and a message naming
// them and what was missing; 403, counted under "permission", naming the
// permission a token lacks.
func TestRefusals_SayWhatIsAccepted(t *testing.T) {
	const key = "a2V5LWZvci1yZWZ1c2Fscy0wMTIzNDU2Nzg5"
	m := &authMetrics{counts: map[string]int{}}
	ts := MustOpenServer(t, withServices(func(o *api.Services) {
		o.Authenticator = auth.New(auth.Options{SASKeysEnabled: true, Key1: key})
		o.Metrics = m
	}))
	token := func(path string) string {
		return auth.GenerateSASToken(ts.URL+path, time.Now().Add(time.Hour), key)
	}
	send := func(method, path string, header ...string) response {
		t.Helper()
		req := brokertest.NewRequest(t, method, ts.url(path, edgeVersion), "application/json", `[]`)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return ts.send(t, req)
	}

	req := brokertest.NewRequest(t, http.MethodPut, ts.url("/topics/t1", edgeVersion), "application/json", `{}`)
	req.Header.Set(auth.HeaderSASKey, key)
	mustStatus(t, ts.send(t, req), http.StatusOK)

	r := send(http.MethodGet, "/topics")
	mustErrorContaining(t, r, http.StatusUnauthorized, "Unauthorized",
		"this broker takes SAS keys only: an aeg-sas-key (or Authorization: SharedAccessKey) or a SAS token", "no aeg-sas-key or SAS token was presented")
	if got := r.Header.Values("WWW-Authenticate"); len(got) != 2 ||
		got[0] != `SharedAccessKey header="aeg-sas-key", error="missing"` || got[1] != `SharedAccessSignature header="aeg-sas-token", error="missing"` {
		t.Errorf("WWW-Authenticate %q", got)
	}

	// A publisher's token publishes, and opens nothing else.
	mustStatus(t, send(http.MethodPost, "/topics/t1/events", auth.HeaderSASToken, token("/topics/t1/events")), http.StatusOK)
	mustErrorContaining(t, send(http.MethodGet, "/topics/t1", auth.HeaderSASToken, token("/topics/t1/events")),
		http.StatusUnauthorized, "Unauthorized", "the SAS token presented was signed for another resource than /topics/t1")
	// A token for the broker's root reaches every resource, and still
	// holds no more than a token does.
	mustErrorContaining(t, send(http.MethodGet, "/topics", auth.HeaderSASToken, token("/")), http.StatusForbidden, "Forbidden",
		"This route needs the read permission, which a SAS token does not hold", "Use an aeg-sas-key.")
	mustErrorContaining(t, send(http.MethodDelete, "/topics/t1", auth.HeaderSASToken, token("")), http.StatusForbidden, "Forbidden",
		"needs the manage permission")
	if r := send(http.MethodDelete, "/topics/t1", auth.HeaderSASToken, token("")); len(r.Header.Values("WWW-Authenticate")) != 0 {
		t.Errorf("a 403 carries WWW-Authenticate %q", r.Header.Values("WWW-Authenticate"))
	}
	mustStatus(t, send(http.MethodPost, "/topics/t1/events", auth.HeaderSASToken, token("")), http.StatusOK)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts[auth.FailPermission] != 3 || m.counts[auth.FailNoCredentials] != 1 || m.counts[auth.FailSASToken] != 1 {
		t.Errorf("counted %v, want 3 permission, 1 no_credentials, 1 sas_token", m.counts)
	}
}
