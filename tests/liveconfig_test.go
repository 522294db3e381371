package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// configMap lays out a directory as the kubelet mounts a ConfigMap: the
// data in a timestamped directory, "..data" a link to it, and each key a
// link through "..data".
type configMap struct {
	dir string
	n   int
}

func newConfigMap(t *testing.T, files map[string]string) *configMap {
	t.Helper()
	c := &configMap{dir: t.TempDir()}
	c.swap(t, files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(c.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// swap writes the files into a new timestamped directory and points
// "..data" at it by renaming a new link over it, atomically, as the
// kubelet updates a mounted ConfigMap.
func (c *configMap) swap(t *testing.T, files map[string]string) {
	t.Helper()
	c.n++
	ts := fmt.Sprintf("..2026_11_23_13_00_%02d.%09d", c.n, 100000000+c.n)
	if err := os.Mkdir(filepath.Join(c.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(c.dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLiveConfig_ConfigMapSwap starts the broker with desired_config_file
// in a directory laid out as the kubelet mounts a ConfigMap, then swaps the
// ConfigMap's content without a restart: one subscription is added, one
// removed, and one changed in place keeps the events queued for it while
// its endpoint was down. A subscription created through the API is left
// alone.
func TestLiveConfig_ConfigMapSwap(t *testing.T) {
	t.Parallel()
	var keepDown atomic.Bool
	keep := newSink(t, func(int, *http.Request) int {
		if keepDown.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	drop, add, api := newSink(t, nil), newSink(t, nil), newSink(t, nil)
	declare := func(subs map[string]any) string {
		return mustJSON(t, map[string]any{"topics": map[string]any{"orders": map[string]any{}}, "eventSubscriptions": subs})
	}
	sub := func(url string, extra ...any) map[string]any {
		m := map[string]any{"topic": "orders", "destination": webhookDest(url)}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	cm := newConfigMap(t, map[string]string{"desired.json": declare(map[string]any{
		"keep": sub(keep.URL + "/keep"), "drop": sub(drop.URL + "/drop"),
	})})
	b := startBroker(t, fastEnv("desired_config_file", filepath.Join(cm.dir, "desired.json"),
		"desired_config_pollIntervalInSeconds", "1"))
	waitReady(t, b)
	createSubscription(t, b.URL, "orders", "api", map[string]any{"destination": webhookDest(api.URL + "/api")})

	publish(t, b.URL, "orders", egEvents("a", 2))
	keep.waitAccepted(t, 2, 10*time.Second)
	drop.waitAccepted(t, 2, 10*time.Second)
	api.waitAccepted(t, 2, 10*time.Second)

	// keep's endpoint goes down; its events wait in its queue.
	keepDown.Store(true)
	publish(t, b.URL, "orders", egEvents("q", 5))
	eventually(t, 10*time.Second, func() error {
		if n := len(keep.requests()); n < 3 {
			return fmt.Errorf("keep has had %d requests", n)
		}
		return nil
	})

	// The swap: drop removed, add added, keep changed (a filter that
	// lets everything published here through), all without a restart.
	swapped := time.Now()
	cm.swap(t, map[string]string{"desired.json": declare(map[string]any{
		"keep": sub(keep.URL+"/keep", "filter", map[string]any{"includedEventTypes": []string{"recordInserted"}}),
		"add":  sub(add.URL + "/add"),
	})})
	eventually(t, 15*time.Second, func() error {
		if code, _, _ := do(t, nil, http.MethodGet, subURLOf(b.URL, "orders", "add"), "", nil); code != http.StatusOK {
			return fmt.Errorf("add: %d", code)
		}
		if code, _, _ := do(t, nil, http.MethodGet, subURLOf(b.URL, "orders", "drop"), "", nil); code != http.StatusNotFound {
			return fmt.Errorf("drop: %d", code)
		}
		return nil
	})
	t.Logf("the swap was applied %v after it (poll interval 1 s)", time.Since(swapped).Round(time.Millisecond))
	got := mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "keep"), "", nil, http.StatusOK)
	if !strings.Contains(string(got), `"includedEventTypes":["recordInserted"]`) {
		t.Fatalf("keep after the swap: %s", got)
	}
	mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "api"), "", nil, http.StatusOK)
	if l := b.Logs("declarative configuration applied"); len(l) != 2 || l[1]["source"] != "desired_config_file" {
		t.Errorf("apply log lines %v", l)
	}

	publish(t, b.URL, "orders", egEvents("n", 3))
	add.waitAccepted(t, 3, 10*time.Second)
	api.waitAccepted(t, 2+5+3, 10*time.Second)
	keepDown.Store(false)
	// Every event queued for keep before the swap arrives, and the new ones.
	got2 := keep.waitAccepted(t, 2+5+3, 20*time.Second)
	for _, id := range []string{"q0", "q1", "q2", "q3", "q4", "n0", "n1", "n2"} {
		if got2[id] == 0 {
			t.Errorf("keep never accepted %s: %v", id, got2)
		}
	}
	if got := drop.accepted(t); len(got) != 7 || got["n0"] != 0 {
		t.Errorf("drop accepted %v, want the 7 events published before its removal", got)
	}
	b.Stop()
	if l := b.Logs("edgegrid starting with this configuration"); len(l) != 1 {
		t.Errorf("%d starts, want 1", len(l))
	}
}

// waitReady waits until /readyz answers 200: the declared configuration
// is applied once the listeners are open, not before.
func waitReady(t testing.TB, b *broker) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		if code, _, body := do(t, nil, http.MethodGet, b.URL+"/readyz", "", nil); code != http.StatusOK {
			return fmt.Errorf("readyz %d: %s", code, body)
		}
		return nil
	})
}

func subURLOf(base, topic, name string) string {
	return base + "/topics/" + topic + "/eventSubscriptions/" + name + "?" + apiVersion
}
