package kubernetes_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// brokerBinary builds the broker (the root module's ./module) once per test
// binary run.
var brokerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "edgegrid-pod-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "edgegrid")
	cmd := exec.Command("go", "build", "-o", out, "./module")
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./module: %v\n%s", err, b)
	}
	return out, nil
})

// kubeletDir writes files into dir as kubelet projects a ConfigMap or
// Secret volume: the content in a timestamped directory, a ..data symlink
// to it, and each file a symlink through ..data. Called again, it swaps the
// content atomically (rename of a new ..data symlink) and removes the old
// directory, as kubelet's atomic writer does.
func kubeletDir(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	ts := filepath.Join(dir, ".."+time.Now().UTC().Format("2006_01_02_15_04_05.000000000"))
	if err := os.MkdirAll(ts, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(ts, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		tb.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			tb.Fatal(err)
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			tb.Fatal(err)
		}
	}
}

// pod is the broker started as the rendered Deployment's pod would run.
type pod struct {
	proc      *process
	mounts    map[string]string // volume name → directory standing in for it
	httpURL   string            // the container port named http
	httpsURL  string            // the container port named https
	client    *http.Client      // trusts the chart's server certificate
	sasKey    string
	container corev1.Container
}

// startPod runs the broker with exactly the command, arguments, environment
// and files the rendered Deployment gives its container, with two changes a
// pod's own network namespace makes unnecessary: the two listener ports are
// free loopback ports instead of 4438 and 5888 (as a runtime's port mapping
// would do), and the listeners bind to 127.0.0.1.
func startPod(t *testing.T, r rendered, caPool *tlsPool) *pod {
	t.Helper()
	bin, err := brokerBinary()
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, r)
	c := container(t, d)
	if len(c.Command) != 0 || len(c.Args) != 0 {
		t.Fatalf("container command %q args %q: the simulation runs the image's entry point without arguments", c.Command, c.Args)
	}
	dir := t.TempDir()
	p := &pod{mounts: map[string]string{}, client: caPool.client(), container: c}

	// Volumes, written as kubelet writes them.
	var sec *corev1.Secret
	if len(r.find("Secret")) == 1 {
		sec = secret(t, r)
	}
	cm := configMap(t, r)
	for _, v := range d.Spec.Template.Spec.Volumes {
		vdir := filepath.Join(dir, "volumes", v.Name)
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			t.Fatal(err)
		}
		p.mounts[v.Name] = vdir
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Name {
				t.Fatalf("volume %s mounts ConfigMap %q, rendered is %q", v.Name, v.ConfigMap.Name, cm.Name)
			}
			files := map[string][]byte{}
			for k, val := range cm.Data {
				files[k] = []byte(val)
			}
			kubeletDir(t, vdir, files)
		case v.Secret != nil:
			if sec == nil || v.Secret.SecretName != sec.Name {
				t.Fatalf("volume %s mounts Secret %q, which was not rendered", v.Name, v.Secret.SecretName)
			}
			files := map[string][]byte{}
			for _, it := range v.Secret.Items {
				data, ok := sec.Data[it.Key]
				if !ok {
					t.Fatalf("volume %s: Secret has no key %s", v.Name, it.Key)
				}
				files[it.Path] = data
			}
			kubeletDir(t, vdir, files)
		case v.EmptyDir != nil:
		default:
			t.Fatalf("volume %s: kind not simulated", v.Name)
		}
	}
	mountOf := map[string]string{} // container path → host directory
	for _, m := range c.VolumeMounts {
		mountOf[m.MountPath] = p.mounts[m.Name]
	}
	hostPath := func(v string) string {
		for mp, hd := range mountOf {
			if v == mp || strings.HasPrefix(v, mp+"/") {
				return hd + strings.TrimPrefix(v, mp)
			}
		}
		return v
	}

	// The environment: only what the pod spec sets.
	httpPort, httpsPort := freePort(t), freePort(t)
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = hostPath(e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if sec == nil || ref.Name != sec.Name {
				t.Fatalf("env %s reads Secret %q, which was not rendered", e.Name, ref.Name)
			}
			v, ok := sec.Data[ref.Key]
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				t.Fatalf("env %s: Secret has no key %s", e.Name, ref.Key)
			}
			env[e.Name] = string(v)
		default:
			t.Fatalf("env %s: source not simulated", e.Name)
		}
	}
	for _, port := range c.Ports {
		switch port.Name {
		case "http":
			if env["api__httpPort"] != strconv.Itoa(int(port.ContainerPort)) {
				t.Fatalf("container port http is %d but api__httpPort is %q", port.ContainerPort, env["api__httpPort"])
			}
			env["api__httpPort"] = strconv.Itoa(httpPort)
			p.httpURL = "http://127.0.0.1:" + strconv.Itoa(httpPort)
		case "https":
			if env["api__httpsPort"] != strconv.Itoa(int(port.ContainerPort)) {
				t.Fatalf("container port https is %d but api__httpsPort is %q", port.ContainerPort, env["api__httpsPort"])
			}
			env["api__httpsPort"] = strconv.Itoa(httpsPort)
			p.httpsURL = "https://127.0.0.1:" + strconv.Itoa(httpsPort)
		}
	}
	if _, set := env["api__bindAddress"]; set {
		t.Fatal("the chart sets api__bindAddress; the simulation expects to choose it")
	}
	env["api__bindAddress"] = "127.0.0.1"
	p.sasKey = env["inbound__clientAuth__sasKeys__key1"]
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)

	start := time.Now()
	p.proc = startProcess(t, filepath.Join(dir), envList, bin)
	// The startup probe, as kubelet would send it.
	p.waitProbe(t, c.StartupProbe, time.Minute)
	t.Logf("broker passed its startup probe in %v", time.Since(start).Round(time.Millisecond))
	return p
}

// probeURL is the URL kubelet would get for an httpGet probe.
func (p *pod) probeURL(t *testing.T, pr *corev1.Probe) string {
	t.Helper()
	if pr == nil || pr.HTTPGet == nil {
		t.Fatal("probe is not httpGet")
	}
	base := map[string]string{"http": p.httpURL, "https": p.httpsURL}[pr.HTTPGet.Port.String()]
	if base == "" || !strings.EqualFold(string(pr.HTTPGet.Scheme), strings.SplitN(base, ":", 2)[0]) {
		t.Fatalf("probe port %s scheme %s does not match a listener", pr.HTTPGet.Port.String(), pr.HTTPGet.Scheme)
	}
	return base + pr.HTTPGet.Path
}

// waitProbe waits until the probe succeeds (a status from 200 to 399, as
// kubelet counts it).
func (p *pod) waitProbe(t *testing.T, pr *corev1.Probe, timeout time.Duration) {
	t.Helper()
	url := p.probeURL(t, pr)
	// kubelet does not verify the certificate of an HTTPS probe.
	probe := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as kubelet probes
	}}
	waitFor(t, timeout, p.proc.log, func() error {
		if err := p.proc.exited(); err != nil {
			t.Fatal(err)
		}
		resp, err := probe.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			// Not a state to wait out: the broker does not serve the route.
			t.Fatalf("GET %s answered 404: this broker does not serve the probe's route", url)
		}
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s answered %d", url, resp.StatusCode)
		}
		return nil
	})
}

// publish posts CloudEvents with the given ids to the Azure Arc style route
// over HTTPS, verifying the chart's certificate, with the SAS key.
func (p *pod) publish(t *testing.T, topic string, ids ...string) {
	t.Helper()
	var events []map[string]any
	for _, id := range ids {
		events = append(events, map[string]any{"specversion": "1.0", "type": "demo", "source": "/pod-test", "id": id, "data": map[string]string{"id": id}})
	}
	req := brokertest.NewRequest(t, http.MethodPost, p.httpsURL+"/topics/"+topic+"/api/events?api-version=2018-01-01",
		"application/cloudevents-batch+json; charset=utf-8", events)
	req.Header.Set("aeg-sas-key", p.sasKey)
	if status, _, body := brokertest.Send(t, p.client, req); status != http.StatusOK {
		t.Fatalf("publish: %d %s\n%s", status, body, p.proc.log())
	}
}

// subscriptions lists the names of the topic's subscriptions over the API.
func (p *pod) subscriptions(t *testing.T, topic string) ([]string, error) {
	req := brokertest.NewRequest(t, http.MethodGet, p.httpsURL+"/topics/"+topic+"/eventSubscriptions?api-version=2019-01-01", "", nil)
	req.Header.Set("aeg-sas-key", p.sasKey)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list subscriptions: %d %s", resp.StatusCode, b)
	}
	var list []struct{ Name string }
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("list subscriptions: %v: %s", err, b)
	}
	var names []string
	for _, s := range list {
		names = append(names, strings.ToLower(s.Name))
	}
	sort.Strings(names)
	return names, nil
}

// tlsPool is the test CA that signed the chart's server certificate.
type tlsPool struct{ ca *testpki.CA }

func (c *tlsPool) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: c.ca.Pool(), MinVersion: tls.VersionTLS12},
	}}
}

// sink is a webhook subscriber on loopback that records the CloudEvents ids
// it receives. While held, it keeps each request waiting, so that events
// stay queued in the broker.
type sink struct {
	URL string

	mu   sync.Mutex
	ids  map[string]int
	open chan struct{}
	once sync.Once
}

func startSink(t *testing.T, held bool) *sink {
	t.Helper()
	s := &sink{ids: map[string]int{}, open: make(chan struct{})}
	if !held {
		s.release()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { s.release(); _ = srv.Close() })
	s.URL = "http://" + ln.Addr().String() + "/events"
	return s
}

func (s *sink) release() { s.once.Do(func() { close(s.open) }) }

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	select {
	case <-s.open:
	case <-r.Context().Done():
		return
	}
	var events []struct{ ID string }
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		err = json.Unmarshal(body, &events)
	} else {
		var one struct{ ID string }
		err = json.Unmarshal(body, &one)
		events = append(events, one)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, e := range events {
		s.ids[e.ID]++
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// missing returns the ids not received yet.
func (s *sink) missing(ids ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var miss []string
	for _, id := range ids {
		if s.ids[id] == 0 {
			miss = append(miss, id)
		}
	}
	if len(miss) > 0 {
		return fmt.Errorf("%d of %d events not received: %v", len(miss), len(ids), miss)
	}
	return nil
}

func (s *sink) received(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id] > 0
}

// podValues are the chart values of the simulated pod: both listeners, a
// certificate from a test CA, a fixed SAS key, and one CloudEvents topic
// with the given subscriptions (name → webhook URL).
func podValues(t *testing.T, subs map[string]string) (renderOpts, *tlsPool) {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "pod test CA")
	certFile, keyFile := ca.WriteFiles(t, dir, "127.0.0.1", "localhost")
	caFile := filepath.Join(dir, "ca.pem")
	testpki.MustWriteFile(t, caFile, ca.PEM())
	return renderOpts{
		values: "tlsPolicy: enabled\n" +
			"auth: {sasKeys: {key1: pod-test-key-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "}}\n" +
			"config: {outbound__webhook__httpsOnly: false, log__format: json}\n" +
			"desiredConfig: " + string(brokertest.MustJSON(t, desired(subs))) + "\n",
		setFiles: map[string]string{"tls.cert": certFile, "tls.key": keyFile, "tls.ca": caFile},
	}, &tlsPool{ca: ca}
}

// desired is the declared configuration: topic "sensors" for CloudEvents
// and one webhook subscription per entry of subs.
func desired(subs map[string]string) map[string]any {
	es := map[string]any{}
	for name, url := range subs {
		es[name] = map[string]any{"topic": "sensors", "destination": map[string]any{
			"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": url},
		}}
	}
	return map[string]any{
		"topics":             map[string]any{"sensors": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}},
		"eventSubscriptions": es,
	}
}

// TestPodSimulated runs the broker as the rendered pod, publishes on the
// Azure Arc style route and sees the declared subscriptions deliver.
func TestPodSimulated(t *testing.T) {
	a, b := startSink(t, false), startSink(t, false)
	opts, pool := podValues(t, map[string]string{"first": a.URL, "second": b.URL})
	p := startPod(t, render(t, opts), pool)

	// The declared state is applied at start.
	waitFor(t, 30*time.Second, p.proc.log, func() error {
		names, err := p.subscriptions(t, "sensors")
		if err != nil {
			return err
		}
		if strings.Join(names, ",") != "first,second" {
			return fmt.Errorf("subscriptions %v, want first and second", names)
		}
		return nil
	})
	p.publish(t, "sensors", "e1", "e2")
	waitFor(t, 30*time.Second, p.proc.log, func() error {
		if err := a.missing("e1", "e2"); err != nil {
			return fmt.Errorf("first: %w", err)
		}
		return b.missing("e1", "e2")
	})
	// For the chart's memory request: logged, not asserted.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.proc.pid)); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
				t.Logf("broker %s", strings.Join(strings.Fields(line), " "))
			}
		}
	}
}

// TestPodSimulatedConfigMapSwap swaps the mounted ConfigMap as kubelet does
// after an edit (new directory, atomic ..data rename) and checks, without a
// restart, that a subscription is added and one removed, and that the
// events queued for the unchanged one are all delivered. It needs the
// broker to follow desired_config_file live and to serve /readyz.
func TestPodSimulatedConfigMapSwap(t *testing.T) {
	keep, drop, added := startSink(t, true), startSink(t, false), startSink(t, false)
	opts, pool := podValues(t, map[string]string{"keep": keep.URL, "drop": drop.URL})
	p := startPod(t, render(t, opts), pool)
	// Ready only once the declared state is applied.
	p.waitProbe(t, p.container.ReadinessProbe, 30*time.Second)
	if names, err := p.subscriptions(t, "sensors"); err != nil || strings.Join(names, ",") != "drop,keep" {
		t.Fatalf("ready, but subscriptions = %v, %v; want drop and keep", names, err)
	}

	// Events for keep wait in the broker: its subscriber holds them.
	var queued []string
	for i := range 20 {
		queued = append(queued, "before-"+strconv.Itoa(i))
	}
	p.publish(t, "sensors", queued...)
	waitFor(t, 30*time.Second, p.proc.log, func() error { return drop.missing(queued...) })

	// The ConfigMap changes: drop goes, added comes, keep stays.
	opts2, _ := podValues(t, map[string]string{"keep": keep.URL, "added": added.URL})
	cm := configMap(t, render(t, opts2))
	kubeletDir(t, p.mounts["config"], map[string][]byte{"desired-config.json": []byte(cm.Data["desired-config.json"])})
	waitFor(t, 30*time.Second, p.proc.log, func() error {
		if err := p.proc.exited(); err != nil {
			t.Fatal(err)
		}
		names, err := p.subscriptions(t, "sensors")
		if err != nil {
			return err
		}
		if strings.Join(names, ",") != "added,keep" {
			return fmt.Errorf("subscriptions %v, want added and keep", names)
		}
		return nil
	})
	p.waitProbe(t, p.container.ReadinessProbe, 10*time.Second)

	p.publish(t, "sensors", "after")
	waitFor(t, 30*time.Second, p.proc.log, func() error { return added.missing("after") })
	if drop.received("after") {
		t.Error("the removed subscription still received an event")
	}
	// Nothing queued for keep was lost in the swap.
	keep.release()
	waitFor(t, 60*time.Second, p.proc.log, func() error { return keep.missing(append(queued, "after")...) })
	if err := p.proc.exited(); err != nil {
		t.Fatalf("the broker restarted or stopped: %v", err)
	}
}
