package api_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
)

func TestReadyz(t *testing.T) {
	var ready atomic.Bool
	ts := MustOpenServer(t, withServices(func(o *api.Services) { o.Readiness = readiness{ready: ready.Load} }))
	check := func(t *testing.T, path string, want int, status string) {
		t.Helper()
		r := ts.doVersion(t, http.MethodGet, path, "", "", nil)
		mustStatus(t, r, want)
		if got := at(mustObject(t, r.Body), "status"); got != status {
			t.Errorf("status = %v, want %s", got, status)
		}
	}
	t.Run("before the first apply", func(t *testing.T) {
		check(t, "/readyz", http.StatusServiceUnavailable, "NotReady")
		check(t, "/healthz", http.StatusOK, "Healthy") // liveness is unaffected
	})
	ready.Store(true)
	t.Run("after", func(t *testing.T) {
		check(t, "/readyz", http.StatusOK, "Ready")
		check(t, "/ReadyZ", http.StatusOK, "Ready")
	})
	t.Run("with the declared configuration's status", func(t *testing.T) {
		ts := MustOpenServer(t, withServices(func(o *api.Services) {
			o.Readiness = readiness{ready: func() bool { return true }, detail: func() any {
				return []map[string]any{{"source": "desired_config_file", "skipped": map[string]any{"eventSubscriptions": map[string]string{"hot": "why"}}}}
			}}
		}))
		r := ts.doVersion(t, http.MethodGet, "/readyz", "", "", nil)
		mustStatus(t, r, http.StatusOK)
		if got := jsonText(t, mustObject(t, r.Body)); got != `{"desiredConfig":[{"skipped":{"eventSubscriptions":{"hot":"why"}},"source":"desired_config_file"}],"status":"Ready"}` {
			t.Errorf("readyz %s", got)
		}
	})
	t.Run("without a Ready function", func(t *testing.T) {
		ts := MustOpenServer(t)
		r := ts.doVersion(t, http.MethodGet, "/readyz", "", "", nil)
		mustStatus(t, r, http.StatusOK)
	})
	t.Run("probe off", func(t *testing.T) {
		ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.HealthProbe = false }))
		r := ts.doVersion(t, http.MethodGet, "/readyz", "", "", nil)
		mustStatus(t, r, http.StatusNotFound)
	})
}

// readiness is an api.Readiness of two functions; detail may be nil.
type readiness struct {
	ready  func() bool
	detail func() any
}

func (r readiness) Ready() bool { return r.ready() }

func (r readiness) ReadyDetail() any {
	if r.detail == nil {
		return nil
	}
	return r.detail()
}
