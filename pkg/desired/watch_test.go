package desired_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// configMapDir lays out dir as the kubelet mounts a ConfigMap: the data in
// a timestamped directory, "..data" a link to it, and each key a link
// through "..data".
type configMapDir struct {
	dir string
	n   int
}

func newConfigMapDir(t *testing.T, name, content string) *configMapDir {
	t.Helper()
	c := &configMapDir{dir: t.TempDir()}
	c.swap(t, name, content)
	if err := os.Symlink(filepath.Join("..data", name), filepath.Join(c.dir, name)); err != nil {
		t.Fatal(err)
	}
	return c
}

// swap writes a new timestamped directory and points "..data" at it with
// a rename, atomically, as the kubelet updates a ConfigMap.
func (c *configMapDir) swap(t *testing.T, name, content string) {
	t.Helper()
	c.n++
	ts := fmt.Sprintf("..2026_11_23_13_00_%02d.%d", c.n, 1000+c.n)
	if err := os.Mkdir(filepath.Join(c.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, ts, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestWatchFile(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := doc(map[string]string{"t": `{}`}, map[string]string{"a": hook("t", "https://sink.example/a")})
	cm := newConfigMapDir(t, "desired.json", first)
	path := filepath.Join(cm.dir, "desired.json")
	var mu sync.Mutex
	var applies []desired.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.r.WatchFile(ctx, path, 5*time.Millisecond, []byte(first), func(res desired.Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			applies = append(applies, res)
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(applies) }

	cm.swap(t, "desired.json", doc(map[string]string{"t": `{}`}, map[string]string{"b": hook("t", "https://sink.example/b")}))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if _, err := f.reg.Subscription(ctx, "t", "b"); err != nil {
			return err
		}
		if _, err := f.reg.Subscription(ctx, "t", "a"); err == nil {
			return fmt.Errorf("a still there")
		}
		return nil
	})
	// A broken file changes nothing, and is warned about once.
	f.log.Reset()
	cm.swap(t, "desired.json", `{"topics": `)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if count() < 3 {
			return brokertest.ErrNotYet
		}
		return nil
	})
	if _, err := f.reg.Subscription(ctx, "t", "b"); err != nil {
		t.Errorf("b after a broken file: %v", err)
	}
	// Then the file disappears: one warning, nothing deleted.
	if err := os.Remove(filepath.Join(cm.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if !strings.Contains(f.log.String(), "desired_config_file cannot be read") {
			return brokertest.ErrNotYet
		}
		return nil
	})
	// One "error" key, holding the whole reason: a JSON object with a
	// member twice is read differently by every log pipeline.
	for _, line := range strings.Split(f.log.String(), "\n") {
		if strings.Contains(line, "desired_config_file cannot be read") {
			if n := strings.Count(line, `"error":`); n != 1 || !strings.Contains(line, "no such file or directory") {
				t.Errorf("the line has %d error keys, want 1 with the cause: %s", n, line)
			}
		}
	}
	if _, err := f.reg.Subscription(ctx, "t", "b"); err != nil {
		t.Errorf("b after the file went: %v", err)
	}
	if n := count(); n != 3 {
		t.Errorf("%d applies, want 3 (at start, the change, the broken file)", n)
	}
}
