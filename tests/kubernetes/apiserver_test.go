package kubernetes_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// kubeBinDir is where scripts/ci-deps/kube.sh puts kube-apiserver and etcd.
func kubeBinDir() string {
	if d := os.Getenv("EDGEGRID_KUBE_BIN"); d != "" {
		return filepath.Join(d, "current")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "edgegrid", "kube", "current")
}

// requireKubeBinaries returns the paths of etcd and kube-apiserver. When
// they are missing the test cannot run: under CI (CI=true) that fails it;
// elsewhere it is skipped, loudly, with the way to build them.
func requireKubeBinaries(tb testing.TB) (etcd, apiserver string) {
	tb.Helper()
	dir := kubeBinDir()
	etcd, apiserver = filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	for _, p := range []string{etcd, apiserver} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("%s is missing; this test runs against a real kube-apiserver and etcd. Build them with: bash scripts/ci-deps/kube.sh (its first build takes minutes: see docs/kubernetes.md#first-builds)", p)
			if os.Getenv("CI") != "" {
				tb.Fatal(msg)
			}
			tb.Skip("SKIPPED: " + msg)
		}
	}
	return etcd, apiserver
}

// freePort returns a loopback port nothing listens on now, for etcd,
// kube-apiserver or the broker to listen on once started: one from
// brokertest.FreePort, which no listener on port 0 takes meanwhile (the
// root module's tests run at the same time).
func freePort(tb testing.TB) int {
	tb.Helper()
	return brokertest.FreePort(tb)
}

// process is a program a test started.
type process struct {
	name string
	pid  int
	done chan struct{} // closed when it has exited
	log  func() string // the tail of its output
}

// exited returns an error with the log's tail if the process has ended.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited:\n%s", p.name, p.log())
	default:
		return nil
	}
}

// startProcess starts a program whose output goes to a log file in dir, and
// stops it (SIGTERM, then SIGKILL after 10 s) when the test ends. A nil env
// inherits the test's environment.
func startProcess(tb testing.TB, dir string, env []string, name string, args ...string) *process {
	tb.Helper()
	logPath := filepath.Join(dir, filepath.Base(name)+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = env
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	return &process{name: filepath.Base(name), pid: cmd.Process.Pid, done: done, log: func() string {
		b, _ := os.ReadFile(logPath)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		return string(b)
	}}
}

// apiServer is a running kube-apiserver with its etcd.
type apiServer struct {
	url    string
	token  string
	client *http.Client
	procs  []*process
}

// log returns the tails of the servers' logs.
func (s *apiServer) log() string {
	var b strings.Builder
	for _, p := range s.procs {
		fmt.Fprintf(&b, "%s:\n%s\n", p.name, p.log())
	}
	return b.String()
}

// startAPIServer starts etcd and kube-apiserver on free loopback ports,
// with a serving certificate made here and a static admin token, and waits
// until /readyz answers ok.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	etcdBin, apiBin := requireKubeBinaries(t)
	dir := t.TempDir()

	clientPort, peerPort := freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcd := startProcess(t, dir, nil, etcdBin,
		"--name=test", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn")

	ca := testpki.NewCA(t, "kube-apiserver test CA")
	certFile, keyFile := ca.WriteFiles(t, dir, "127.0.0.1", "localhost")
	saKey := filepath.Join(dir, "sa.key")
	testpki.MustWriteFile(t, saKey, ecKeyPEM(t))
	token := "admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tokens := filepath.Join(dir, "tokens.csv")
	testpki.MustWriteFile(t, tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"))

	port := freePort(t)
	api := startProcess(t, dir, nil, apiBin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile,
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+tokens, "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+saKey,
		"--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/24",
		// Loopback cannot be advertised as the kubernetes Service's
		// endpoint; nothing here needs that Service.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false", "--profiling=false",
		"--v=0")

	s := &apiServer{
		url:   "https://127.0.0.1:" + strconv.Itoa(port),
		token: token,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
		}},
		procs: []*process{etcd, api},
	}
	start := time.Now()
	// A cold start on a busy 2-core machine takes tens of seconds.
	waitFor(t, 3*time.Minute, s.log, func() error {
		for _, p := range s.procs {
			if err := p.exited(); err != nil {
				t.Fatal(err)
			}
		}
		status, body, err := s.do(http.MethodGet, "/readyz", "", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("/readyz answered %d: %s", status, body)
		}
		return nil
	})
	t.Logf("kube-apiserver ready in %v", time.Since(start).Round(time.Millisecond))
	return s
}

// waitFor is brokertest.Eventually that adds the servers' logs to a failure.
func waitFor(t *testing.T, timeout time.Duration, logs func() string, f func() error) {
	t.Helper()
	var last error
	deadline := time.Now().Add(timeout)
	for {
		if last = f(); last == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v\n%s", timeout, last, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// do sends one request with the admin token.
func (s *apiServer) do(method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// resources maps each kind the chart renders to its resource path.
var resources = map[string]string{
	"ServiceAccount":      "serviceaccounts",
	"ConfigMap":           "configmaps",
	"Secret":              "secrets",
	"Service":             "services",
	"Deployment":          "deployments",
	"PodDisruptionBudget": "poddisruptionbudgets",
	"NetworkPolicy":       "networkpolicies",
	"ServiceMonitor":      "servicemonitors",
}

// apply sends obj as a server-side apply; with dryRun the server validates,
// defaults and admits it but stores nothing. Unknown or duplicate fields
// are errors (fieldValidation=Strict).
func (s *apiServer) apply(obj map[string]any, dryRun bool) (int, []byte, error) {
	meta, _ := obj["metadata"].(map[string]any)
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	plural, ok := resources[kind]
	if kind == "Namespace" || kind == "CustomResourceDefinition" {
		plural, ok = strings.ToLower(kind)+"s", true
	}
	if !ok {
		return 0, nil, fmt.Errorf("kind %s: no resource path known; add it to the resources table", kind)
	}
	prefix := "/apis/" + apiVersion
	if apiVersion == "v1" {
		prefix = "/api/v1"
	}
	if ns != "" {
		prefix += "/namespaces/" + ns
	}
	q := "?fieldManager=edgegrid-chart-test&force=true&fieldValidation=Strict"
	if dryRun {
		q += "&dryRun=All"
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return 0, nil, err
	}
	return s.do(http.MethodPatch, prefix+"/"+plural+"/"+name+q, "application/apply-patch+yaml", body)
}

// mustApply applies obj for real (not a dry run) and fails on refusal.
func (s *apiServer) mustApply(t *testing.T, obj map[string]any) {
	t.Helper()
	status, body, err := s.apply(obj, false)
	if err != nil || status/100 != 2 {
		t.Fatalf("apply %s: %d %v %s", obj["kind"], status, err, body)
	}
}

// TestServerSideDryRun applies everything the chart renders, for every
// scenario file, to a real kube-apiserver as a server-side dry run: each
// object must be accepted as it stands. No kubelet runs, so this proves the
// objects, not the pod (TestPodSimulated runs the broker as the pod would).
func TestServerSideDryRun(t *testing.T) {
	s := startAPIServer(t)

	s.mustApply(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}})
	// The ServiceMonitor kind, as prometheus-operator defines it.
	s.mustApply(t, serviceMonitorCRD(t))
	waitFor(t, time.Minute, s.log, func() error {
		status, body, err := s.do(http.MethodGet, "/apis/monitoring.coreos.com/v1", "", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK || !strings.Contains(string(body), "servicemonitors") {
			return fmt.Errorf("monitoring.coreos.com/v1 not served yet: %d", status)
		}
		return nil
	})

	accepted := map[string]bool{}
	for _, f := range ciValues(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := render(t, renderOpts{valuesFiles: []string{f}, apiVersions: []string{"monitoring.coreos.com/v1"}})
			for _, o := range r.objects {
				status, body, err := s.apply(o.Object, true)
				if err != nil {
					t.Fatal(err)
				}
				if status/100 != 2 {
					t.Errorf("dry-run apply of %s %s refused: %d %s", o.GetKind(), o.GetName(), status, body)
					continue
				}
				// The server answers with the object as it would store it.
				var got map[string]any
				if err := json.Unmarshal(body, &got); err != nil || got["kind"] != o.GetKind() {
					t.Errorf("dry-run apply of %s %s answered %s", o.GetKind(), o.GetName(), brokertest.Abbrev(body))
				}
				accepted[o.GetKind()] = true
			}
		})
	}
	for kind := range resources {
		if !accepted[kind] {
			t.Errorf("no scenario rendered a %s that the server accepted", kind)
		}
	}

	// The server refuses what is wrong, so the acceptance above means
	// something: a field the API does not know, or a value out of range,
	// fails the dry run.
	t.Run("refuses what is wrong", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			spoil func(spec map[string]any)
			want  string
		}{
			{"unknown field", func(spec map[string]any) { spec["replicaz"] = 2 }, "replicaz"},
			{"invalid value", func(spec map[string]any) { spec["replicas"] = -1 }, "spec.replicas"},
		} {
			obj := deploymentObject(t)
			tc.spoil(obj["spec"].(map[string]any))
			status, body, err := s.apply(obj, true)
			if err != nil || status/100 == 2 || !strings.Contains(string(body), tc.want) {
				t.Errorf("%s: %d %v %s, want a refusal naming %s", tc.name, status, err, brokertest.Abbrev(body), tc.want)
			}
		}
	})
}

// deploymentObject returns the chart's default Deployment as a map.
func deploymentObject(t *testing.T) map[string]any {
	t.Helper()
	d := render(t, renderOpts{}).find("Deployment")
	if len(d) != 1 {
		t.Fatalf("rendered %d Deployments", len(d))
	}
	return d[0].DeepCopy().Object
}

// ecKeyPEM returns a new P-256 private key in PEM, for the service account
// token signer the API server insists on.
func ecKeyPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// serviceMonitorCRD returns prometheus-operator's ServiceMonitor
// CustomResourceDefinition, which scripts/ci-deps/kube.sh fetches.
func serviceMonitorCRD(t *testing.T) map[string]any {
	t.Helper()
	path := filepath.Join(kubeBinDir(), "servicemonitor-crd.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		msg := fmt.Sprintf("%v; fetch it with: bash scripts/ci-deps/kube.sh", err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	objs := parseObjects(t, string(b))
	if len(objs) != 1 || objs[0].GetKind() != "CustomResourceDefinition" {
		t.Fatalf("%s does not hold one CustomResourceDefinition", path)
	}
	return objs[0].Object
}
