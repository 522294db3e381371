package tests_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// brokerBin is the broker binary built once for the whole package.
var brokerBin string

func TestMain(m *testing.M) {
	flag.Parse()
	defaultParallel()
	dir, err := os.MkdirTemp("", "edgegrid-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brokerBin = filepath.Join(dir, "edgegrid")
	args := []string{"build", "-o", brokerBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "../module")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the broker:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// parallelPerCPU is how many tests that call t.Parallel run at once per
// CPU, up to maxParallel, unless go test's -parallel says otherwise: they
// mostly wait (for a lock to expire, a receive to end empty, a browser, a
// retry), so many share a core (see doc.go).
const (
	parallelPerCPU = 8
	maxParallel    = 32
)

// defaultParallel sets -test.parallel when the command line does not: go
// test's own default, GOMAXPROCS, would leave the cores mostly idle.
func defaultParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(min(parallelPerCPU*runtime.GOMAXPROCS(0), maxParallel)))
	}
}

// devEnv is the environment of a broker run outside IoT Edge for tests:
// plain HTTP on a free loopback port, no client authentication, HTTP
// webhooks allowed.
func devEnv() map[string]string {
	return map[string]string{
		"inbound__serverAuth__tlsPolicy":           "disabled",
		"inbound__clientAuth__clientCert__enabled": "false",
		"outbound__webhook__httpsOnly":             "false",
		"api__httpPort":                            "0",
		"api__httpsPort":                           "0",
		"api__bindAddress":                         "127.0.0.1",
	}
}

// broker is a running broker process.
type broker struct {
	t    testing.TB
	cmd  *exec.Cmd
	URL  string // plain HTTP base URL, when the HTTP listener is on
	TLS  string // HTTPS base URL, when the HTTPS listener is on
	done chan struct{}

	raw logbuf.Buffer // everything it printed

	mu   sync.Mutex
	logs []map[string]any
	err  error // Wait's result
}

// startBroker starts the broker with env (and nothing else from the test's
// environment) and waits until its listeners are up. The broker is stopped
// with SIGTERM at the end of the test, and must exit cleanly.
func startBroker(t testing.TB, env map[string]string) *broker {
	t.Helper()
	b := &broker{t: t, done: make(chan struct{})}
	b.cmd = exec.Command(brokerBin)
	for k, v := range env {
		b.cmd.Env = append(b.cmd.Env, k+"="+v)
	}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	b.cmd.Stderr = &b.raw
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var m map[string]any
			_, _ = b.raw.Write(append(slices.Clip(line), '\n')) // never into the scanner's buffer
			b.mu.Lock()
			if json.Unmarshal(line, &m) == nil {
				b.logs = append(b.logs, m)
			}
			b.mu.Unlock()
		}
		err := b.cmd.Wait()
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
		close(b.done)
	}()
	t.Cleanup(func() { b.Stop() })
	want := 1
	if env["inbound__serverAuth__tlsPolicy"] == "enabled" {
		want = 2
	}
	eventually(t, 60*time.Second, func() error {
		select {
		case <-b.done:
			t.Fatalf("broker exited at start: %v\n%s", b.err, b.Output())
		default:
		}
		n := 0
		for _, l := range b.Logs("listening") {
			addr, _ := l["addr"].(string)
			switch l["scheme"] {
			case "http":
				b.URL = "http://" + addr
			case "https":
				b.TLS = "https://" + addr
			}
			n++
		}
		if n < want {
			return fmt.Errorf("%d of %d listeners up", n, want)
		}
		return nil
	})
	return b
}

// runToExit runs the broker with env, expecting it to stop by itself (a
// start-up failure), and returns its exit code and output.
func runToExit(t testing.TB, env map[string]string) (int, string) {
	t.Helper()
	cmd := exec.Command(brokerBin)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the broker did not exit by itself:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// Stop sends SIGTERM and waits for the broker to exit; it fails the test if
// the broker does not exit cleanly.
func (b *broker) Stop() {
	select {
	case <-b.done:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
		b.t.Errorf("broker did not stop within 30s of SIGTERM\n%s", b.Output())
		return
	}
	if b.err != nil {
		b.t.Errorf("broker exited with %v\n%s", b.err, b.Output())
	}
}

// Output returns everything the broker printed.
func (b *broker) Output() string { return b.raw.String() }

// Logs returns the JSON log lines whose message is msg.
func (b *broker) Logs(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range b.logs {
		if l["message"] == msg {
			out = append(out, l)
		}
	}
	return out
}

const apiVersion = "api-version=2019-01-01-preview"

// do sends a request with a JSON body (a string or a value to marshal) and
// returns the status, headers and body.
func do(t testing.TB, client *http.Client, method, url, contentType string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(v)
	case []byte:
		r = bytes.NewReader(v)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, rb
}

// mustDo is do that fails the test unless the status is want.
func mustDo(t testing.TB, method, url, contentType string, body any, want int) []byte {
	t.Helper()
	code, _, rb := do(t, nil, method, url, contentType, body)
	if code != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, url, code, want, rb)
	}
	return rb
}

// createTopic and createWebhook set up a topic and a subscription.
func createTopic(t testing.TB, base, topic, schema string) {
	t.Helper()
	mustDo(t, http.MethodPut, base+"/topics/"+topic+"?"+apiVersion, "application/json",
		map[string]any{"name": topic, "properties": map[string]any{"inputSchema": schema}}, http.StatusOK)
}

func createSubscription(t testing.TB, base, topic, name string, props map[string]any) {
	t.Helper()
	mustDo(t, http.MethodPut, base+"/topics/"+topic+"/eventSubscriptions/"+name+"?"+apiVersion, "application/json",
		map[string]any{"properties": props}, http.StatusOK)
}

func webhookDest(url string, extra ...any) map[string]any {
	p := map[string]any{"endpointUrl": url}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return map[string]any{"endpointType": "WebHook", "properties": p}
}

// egEvents returns n EventGridSchema events with ids prefix0..prefixN-1.
func egEvents(prefix string, n int) []map[string]any {
	evs := make([]map[string]any, n)
	for i := range evs {
		evs[i] = map[string]any{
			"id": fmt.Sprint(prefix, i), "subject": "/s/" + fmt.Sprint(i), "eventType": "recordInserted",
			"eventTime": "2026-01-01T00:00:00Z", "dataVersion": "1.0", "data": map[string]any{"n": i},
		}
	}
	return evs
}

func publish(t testing.TB, base, topic string, events any) {
	t.Helper()
	mustDo(t, http.MethodPost, base+"/topics/"+topic+"/events?"+apiVersion, "application/json", events, http.StatusOK)
}

// eventually is brokertest.Eventually: poll f until it returns nil.
var eventually = brokertest.Eventually

func merge(a map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
