package kubernetes_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// builtVersion is the release scripts/ci-deps/kube.sh builds
// kube-apiserver from (scripts/ci-deps/kube/apiserver/go.mod).
const builtVersion = "v1.37.2"

// versioned serves s's API on a loopback port, over TLS with a certificate
// of ca's (client-go sends no bearer token over plain HTTP), with /version
// naming builtVersion: a kube-apiserver built with go build reports
// v0.0.0-master (only the Kubernetes release scripts stamp the version),
// which helm install checks against the chart's kubeVersion. Everything
// else is the server's own answer.
func (s *apiServer) versioned(t *testing.T, ca *testpki.CA) string {
	t.Helper()
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = s.client.Transport
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path != "/version" || r.StatusCode != http.StatusOK {
			return nil
		}
		var v map[string]any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			return err
		}
		r.Body.Close()
		v["gitVersion"], v["major"], v["minor"] = builtVersion, "1", "37"
		b, _ := json.Marshal(v)
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	// The HTTP/1 server closes a request's body once the handler starts its
	// answer (golang/go#40747). The transport forwarding a body reads it
	// once more after its last byte, to see that nothing follows; when the
	// apiserver's answer comes first, that read fails, and the transport
	// drops the connection halfway through the answer, which helm reports
	// as an unexpected EOF. So the body is read whole before it is sent on:
	// helm's requests are manifests of a few kilobytes.
	whole := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	})
	cert := ca.Issue(t, "127.0.0.1", nil, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	return "https://" + testpki.ServeTLS(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, whole)
}

// kubeconfig writes a kubeconfig for s's admin, for helm, through
// versioned.
func (s *apiServer) kubeconfig(t *testing.T) string {
	t.Helper()
	ca := testpki.NewCA(t, "helm test CA")
	f := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
`, s.versioned(t, ca), base64.StdEncoding.EncodeToString(ca.PEM()), s.token)
	if err := os.WriteFile(f, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// sasKey1 returns the sas-key1 of the release's Secret in ns.
func (s *apiServer) sasKey1(t *testing.T, ns string) string {
	t.Helper()
	status, body, err := s.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/secrets/"+releaseName+"-edgegrid", "", nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET the Secret: %d %v %s", status, err, body)
	}
	var sec struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &sec); err != nil {
		t.Fatal(err)
	}
	k, err := base64.StdEncoding.DecodeString(sec.Data["sas-key1"])
	if err != nil {
		t.Fatal(err)
	}
	return string(k)
}

// TestInstallGeneratesAndKeepsTheKey: with a cluster (helm install and
// upgrade against a real kube-apiserver), an empty auth.sasKeys.key1 is
// generated once and kept by every upgrade, also in a namespace that
// --create-namespace makes during the install; the same chart rendered
// without a cluster refuses (TestSASKeyWithoutCluster).
func TestInstallGeneratesAndKeepsTheKey(t *testing.T) {
	s := startAPIServer(t)
	kc := s.kubeconfig(t)
	for _, tc := range []struct {
		name, ns string
		args     []string
	}{
		{"existing namespace", namespace, nil},
		{"namespace made by the install", "fresh", []string{"--create-namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args == nil {
				s.mustApply(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": tc.ns}})
			}
			common := []string{releaseName, chartDir, "--namespace", tc.ns, "--kubeconfig", kc}
			if out, err := helm(append(append([]string{"install"}, common...), tc.args...)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			key := s.sasKey1(t, tc.ns)
			if len(key) < 32 {
				t.Fatalf("generated sas-key1 %q, want at least 32 characters", key)
			}
			for range 2 {
				if out, err := helm(append([]string{"upgrade"}, common...)...); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if got := s.sasKey1(t, tc.ns); got != key {
					t.Fatalf("the upgrade changed sas-key1 from %q to %q", key, got)
				}
			}
		})
	}
}
