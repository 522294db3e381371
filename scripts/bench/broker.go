package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// buildBroker builds the broker binary into dir, without the race detector,
// from the module that holds the working directory, and returns its path.
func buildBroker(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the benchmark from inside the edgegrid module, or pass -broker")
	}
	bin := filepath.Join(dir, "edgegrid")
	cmd := exec.Command("go", "build", "-o", bin, "./module")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./module: %w", err)
	}
	return bin, nil
}

// baseEnv is the broker configuration every scenario starts from: plain HTTP
// on a free loopback port, no client authentication, HTTP webhooks allowed,
// and no per-event log lines, so that logging does not dominate.
func baseEnv() map[string]string {
	return map[string]string{
		"inbound__serverAuth__tlsPolicy":           "disabled",
		"inbound__clientAuth__clientCert__enabled": "false",
		"outbound__webhook__httpsOnly":             "false",
		"api__bindAddress":                         "127.0.0.1",
		"api__httpPort":                            "0",
		"broker__logDeliverySuccess":               "false",
		"broker__logDeliveryFailure":               "false",
		"broker__logEventExpiry":                   "false",
		"broker__stopTimeoutInSeconds":             "10",
		// One line per garbage collection on stderr, giving the live heap.
		"GODEBUG": "gctrace=1",
	}
}

// broker is a running broker child process.
type broker struct {
	cmd  *exec.Cmd
	pid  int
	url  string // http://127.0.0.1:port
	done chan struct{}

	mu     sync.Mutex
	tail   []string // the last lines it printed
	config []byte   // its first line, the configuration it started with
	err    error    // Wait's result, once done

	// From the Go runtime's GODEBUG=gctrace=1 lines: the number of
	// collections, and the heap left live after the latest one.
	gcCycles atomic.Int64
	liveHeap atomic.Int64
}

// startBroker starts bin with env (and nothing else of this process's
// environment) and waits until it logs that its HTTP listener is up.
func startBroker(bin string, env map[string]string) (*broker, error) {
	cmd := exec.Command(bin)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // one pipe for both
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &broker{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	addr := make(chan string, 1)
	go b.read(stdout, addr)
	select {
	case a := <-addr:
		b.url = "http://" + a
		return b, nil
	case <-b.done:
		return nil, fmt.Errorf("broker exited at start: %v\n%s", b.waitErr(), b.output())
	case <-time.After(30 * time.Second):
		_ = b.stop(5 * time.Second)
		return nil, fmt.Errorf("broker did not log its listener within 30s\n%s", b.output())
	}
}

// read consumes the broker's output, keeps its last lines, reports the
// listener's address, and reaps the process when the output ends.
func (b *broker) read(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if addr != nil && bytes.Contains(line, []byte(`"listening"`)) {
			var l struct{ Message, Scheme, Addr string }
			if json.Unmarshal(line, &l) == nil && l.Message == "listening" && l.Scheme == "http" {
				addr <- l.Addr
				addr = nil
			}
		}
		if live, ok := parseGCTrace(line); ok {
			b.gcCycles.Add(1)
			b.liveHeap.Store(live)
			continue
		}
		b.mu.Lock()
		if b.config == nil && bytes.Contains(line, []byte(`"edgegrid starting with this configuration"`)) {
			b.config = bytes.Clone(line)
		}
		b.tail = append(b.tail, string(line))
		if len(b.tail) > 40 {
			b.tail = b.tail[len(b.tail)-20:]
		}
		b.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r) // after a line too long for the scanner
	err := b.cmd.Wait()
	b.mu.Lock()
	b.err = err
	b.mu.Unlock()
	close(b.done)
}

// configInt returns the integer setting key of the configuration the
// broker logged at its start, 0 when it logged none.
func (b *broker) configInt(key string) int {
	b.mu.Lock()
	line := b.config
	b.mu.Unlock()
	var l struct{ Config map[string]any }
	if json.Unmarshal(line, &l) != nil {
		return 0
	}
	v, _ := l.Config[key].(float64)
	return int(v)
}

func (b *broker) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.tail, "\n")
}

func (b *broker) waitErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// alive reports whether the broker process is still running.
func (b *broker) alive() bool {
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the broker's PID and waits up to timeout for it to
// exit; after that it sends SIGKILL to the same PID. It returns an error if
// the broker did not exit cleanly.
func (b *broker) stop(timeout time.Duration) error {
	if !b.alive() {
		return b.exitError()
	}
	_ = syscall.Kill(b.pid, syscall.SIGTERM)
	select {
	case <-b.done:
		return b.exitError()
	case <-time.After(timeout):
		_ = syscall.Kill(b.pid, syscall.SIGKILL)
		<-b.done
		return fmt.Errorf("broker did not stop within %v of SIGTERM; killed", timeout)
	}
}

func (b *broker) exitError() error {
	if err := b.waitErr(); err != nil {
		return fmt.Errorf("broker exited with %v\n%s", err, b.output())
	}
	return nil
}

const apiVersion = "?api-version=2019-01-01-preview"

// put sends a management PUT and returns an error unless it succeeds.
func (b *broker) put(c *http.Client, path, body string) error {
	req, err := http.NewRequest(http.MethodPut, b.url+path+apiVersion, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

// createTopic creates an EventGridSchema topic.
func (b *broker) createTopic(c *http.Client, topic string) error {
	return b.put(c, "/topics/"+topic, `{"properties":{"inputSchema":"EventGridSchema"}}`)
}

// subscribe creates a WebHook subscription to endpoint; batch > 0 sets
// maxEventsPerBatch, 0 leaves delivery unbatched.
func (b *broker) subscribe(c *http.Client, topic, name, endpoint string, batch int) error {
	return b.subscribeIn(c, topic, name, endpoint, batch, "")
}

// subscribeIn is subscribe with the subscription's eventDeliverySchema,
// unless it is empty.
func (b *broker) subscribeIn(c *http.Client, topic, name, endpoint string, batch int, schema string) error {
	props := fmt.Sprintf(`"endpointUrl":%q`, endpoint)
	if batch > 0 {
		props += fmt.Sprintf(`,"maxEventsPerBatch":%d`, batch)
	}
	if schema != "" {
		schema = fmt.Sprintf(`,"eventDeliverySchema":%q`, schema)
	}
	body := `{"properties":{"destination":{"endpointType":"WebHook","properties":{` + props + `}}` + schema + `}}`
	return b.put(c, "/topics/"+topic+"/eventSubscriptions/"+name, body)
}

// healthy reports whether GET /healthz answers 200.
func (b *broker) healthy(c *http.Client) bool {
	resp, err := c.Get(b.url + "/healthz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// collect has the broker, started with debug__pprofAddress=addr, run a
// garbage collection (Go's heap profile endpoint with gc=1 runs one before
// it answers), and waits until its trace has been read, so that liveHeap
// is the heap left live by it.
func (b *broker) collect(addr string) error {
	n := b.gcCycles.Load()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("http://" + addr + "/debug/pprof/heap?gc=1")
	if err != nil {
		return fmt.Errorf("asking the broker for a garbage collection: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("asking the broker for a garbage collection: %s", resp.Status)
	}
	for deadline := time.Now().Add(10 * time.Second); b.gcCycles.Load() == n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("the broker printed no trace of the garbage collection it was asked for (is GODEBUG=gctrace=1 set?)")
		}
	}
	return nil
}

// usage is a snapshot of the broker's CPU time and memory.
type usage struct {
	ticks int64
	mem   memInfo
}

func (b *broker) usage() (usage, error) {
	t, err := procCPU(b.pid)
	if err != nil {
		return usage{}, err
	}
	m, err := procMem(b.pid)
	if err != nil {
		return usage{}, err
	}
	return usage{ticks: t, mem: m}, nil
}
