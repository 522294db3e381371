package testpki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Identity of the module the WorkloadServer serves, and the oldest
// api-version it accepts.
const (
	WorkloadModuleID     = "eventgridmodule"
	WorkloadGenerationID = "637463421418954217"
	WorkloadAPIVersion   = "2019-01-30"
	WorkloadHubName      = "testhub.azure-devices.net"
	WorkloadDeviceID     = "edgedevice"
)

// Endpoint names accepted by WorkloadServer.Calls and SetFailure.
const (
	EndpointTrustBundle = "trust-bundle"
	EndpointIdentity    = "identity"
	EndpointServer      = "server"
)

// WorkloadServer stands in for the IoT Edge security daemon, which cannot run
// in tests. It serves the workload API's trust-bundle, identity-certificate
// and server-certificate endpoints over HTTP on a real unix socket, with the
// daemon's request checks (api-version, module id and generation id in the
// path, request body) and its response shapes: 200 or 201 with the
// documented JSON, or an error status with {"message": ...}.
//
// Certificates are signed by the CA given to NewWorkloadServer and valid from
// the moment of the request until the requested expiration, capped by the
// configured lifetime. Unlike the daemon, which makes RSA-2048 keys, it makes
// ECDSA P-256 keys so that tests stay fast. Its methods are safe for
// concurrent use.
type WorkloadServer struct {
	ca   *CA
	path string

	mu               sync.Mutex
	calls            map[string]int
	serverLifetime   time.Duration
	identityLifetime time.Duration
	trustPEM         []byte
	failures         map[string]failure
	signed           [][]byte
}

type failure struct {
	status  int
	message string
}

// NewWorkloadServer starts a WorkloadServer whose certificates are signed by
// ca and whose trust bundle is ca's root. The socket lives in a temporary
// directory; the server stops when the test ends. Server certificates last
// at most 90 days and identity certificates 7 days until changed. It fails
// tb on error.
func NewWorkloadServer(tb testing.TB, ca *CA) *WorkloadServer {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "workload.sock")
	if len(path) > 100 { // unix socket paths are limited to about 108 bytes
		short, err := os.MkdirTemp("", "wl")
		if err != nil {
			tb.Fatalf("testpki: socket dir: %v", err)
		}
		tb.Cleanup(func() { os.RemoveAll(short) })
		path = filepath.Join(short, "workload.sock")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		tb.Fatalf("testpki: listen on %s: %v", path, err)
	}
	s := &WorkloadServer{
		ca:               ca,
		path:             path,
		calls:            make(map[string]int),
		serverLifetime:   90 * 24 * time.Hour,
		identityLifetime: 7 * 24 * time.Hour,
		trustPEM:         ca.PEM(),
		failures:         make(map[string]failure),
	}
	srv := &http.Server{Handler: s, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	tb.Cleanup(func() { srv.Close(); <-done })
	return s
}

// URI returns the server's address in IOTEDGE_WORKLOADURI form,
// unix:///path/to/workload.sock.
func (s *WorkloadServer) URI() string { return "unix://" + s.path }

// SetServerCertLifetime caps the validity of server certificates issued from
// now on.
func (s *WorkloadServer) SetServerCertLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverLifetime = d
}

// SetIdentityCertLifetime caps the validity of identity certificates issued
// from now on.
func (s *WorkloadServer) SetIdentityCertLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identityLifetime = d
}

// SetTrustBundle replaces the PEM the trust-bundle endpoint returns.
func (s *WorkloadServer) SetTrustBundle(pemData []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trustPEM = append([]byte(nil), pemData...)
}

// SetFailure makes every request to endpoint (EndpointTrustBundle,
// EndpointIdentity or EndpointServer) fail with status and {"message":
// message}, after the api-version and path checks, until it is called again
// with status 0.
func (s *WorkloadServer) SetFailure(endpoint string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.failures, endpoint)
		return
	}
	s.failures[endpoint] = failure{status: status, message: message}
}

// Calls returns how many requests reached endpoint (EndpointTrustBundle,
// EndpointIdentity or EndpointServer), whatever their outcome.
func (s *WorkloadServer) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// ServeHTTP implements the workload endpoints.
func (s *WorkloadServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint, module, genid, ok := route(r.URL)
	if !ok {
		writeMessage(w, http.StatusNotFound, "not found")
		return
	}
	s.mu.Lock()
	s.calls[endpoint]++
	fail, failing := s.failures[endpoint]
	s.mu.Unlock()

	if status, msg := refusal(r, endpoint, module, genid); status != 0 {
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", method(endpoint))
		}
		writeMessage(w, status, msg)
		return
	}
	if failing {
		writeMessage(w, fail.status, fail.message)
		return
	}
	switch endpoint {
	case EndpointTrustBundle:
		s.mu.Lock()
		bundle := string(s.trustPEM)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"certificate": bundle})
	case EndpointIdentity:
		s.identity(w, r)
	case EndpointServer:
		s.server(w, r)
	case EndpointSign:
		s.sign(w, r)
	}
}

// route names the endpoint u is for, and the module and generation id its
// path holds; ok is false for no endpoint.
func route(u *url.URL) (endpoint, module, genid string, ok bool) {
	segs, ok := pathSegments(u)
	if !ok {
		return "", "", "", false
	}
	switch {
	case len(segs) == 1 && segs[0] == "trust-bundle":
		return EndpointTrustBundle, "", "", true
	case len(segs) == 4 && segs[0] == "modules" && segs[2] == "certificate" && segs[3] == "identity":
		return EndpointIdentity, segs[1], "", true
	case len(segs) == 6 && segs[0] == "modules" && segs[2] == "genid" && segs[4] == "certificate" && segs[5] == "server":
		return EndpointServer, segs[1], segs[3], true
	case len(segs) == 5 && segs[0] == "modules" && segs[2] == "genid" && segs[4] == "sign":
		return EndpointSign, segs[1], segs[3], true
	}
	return "", "", "", false
}

// method is the HTTP method of endpoint.
func method(endpoint string) string {
	if endpoint == EndpointTrustBundle {
		return http.MethodGet
	}
	return http.MethodPost
}

// refusal returns the status and message a request for endpoint is refused
// with, as the security daemon refuses it: a wrong api-version, method,
// module or generation; status 0 when it is not refused.
func refusal(r *http.Request, endpoint, module, genid string) (status int, msg string) {
	if msg, ok := checkAPIVersion(r.URL.Query()); !ok {
		return http.StatusBadRequest, msg
	}
	switch {
	case r.Method != method(endpoint):
		return http.StatusMethodNotAllowed, "method not allowed"
	case endpoint != EndpointTrustBundle && module != WorkloadModuleID:
		return http.StatusNotFound, fmt.Sprintf("module not found: %s", module)
	case (endpoint == EndpointServer || endpoint == EndpointSign) && genid != WorkloadGenerationID:
		return http.StatusNotFound, fmt.Sprintf("module %s has no generation %s", module, genid)
	}
	return 0, ""
}

func (s *WorkloadServer) identity(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Expiration *string `json:"expiration"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		writeMessage(w, http.StatusBadRequest, "invalid request body")
		return
	}
	s.mu.Lock()
	lifetime := s.identityLifetime
	s.mu.Unlock()
	now := time.Now()
	notAfter := now.Add(lifetime)
	if req.Expiration != nil {
		exp, msg := parseExpiration(*req.Expiration, now)
		if msg != "" {
			writeMessage(w, http.StatusBadRequest, msg)
			return
		}
		notAfter = earliest(exp, notAfter)
	}
	uri := &url.URL{Scheme: "azureiot", Host: WorkloadHubName, Path: "/devices/" + WorkloadDeviceID + "/modules/" + WorkloadModuleID}
	s.issue(w, &x509.Certificate{
		Subject:     pkix.Name{CommonName: WorkloadModuleID},
		URIs:        []*url.URL{uri},
		NotBefore:   now,
		NotAfter:    notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (s *WorkloadServer) server(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CommonName string `json:"commonName"`
		Expiration string `json:"expiration"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		writeMessage(w, http.StatusBadRequest, "invalid request body")
		return
	}
	if req.CommonName == "" {
		writeMessage(w, http.StatusBadRequest, "commonName is required")
		return
	}
	now := time.Now()
	exp, msg := parseExpiration(req.Expiration, now)
	if msg != "" {
		writeMessage(w, http.StatusBadRequest, msg)
		return
	}
	s.mu.Lock()
	lifetime := s.serverLifetime
	s.mu.Unlock()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: req.CommonName},
		NotBefore:   now,
		NotAfter:    earliest(exp, now.Add(lifetime)),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	// Like the daemon: the common name and the module id are the SANs.
	if ip := net.ParseIP(req.CommonName); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{req.CommonName}
	}
	tmpl.DNSNames = append(tmpl.DNSNames, WorkloadModuleID)
	s.issue(w, tmpl)
}

// issue signs tmpl and writes the daemon's CertificateResponse with 201.
func (s *WorkloadServer) issue(w http.ResponseWriter, tmpl *x509.Certificate) {
	cert, keyPEM, err := s.ca.sign(tmpl)
	if err != nil {
		writeMessage(w, http.StatusInternalServerError, "failed to create cert")
		return
	}
	chain := CertPEM(cert)
	if len(s.ca.chain) == 0 { // the daemon sends the issuing CA after the leaf
		chain = append(chain, s.ca.PEM()...)
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"privateKey":  map[string]string{"type": "key", "bytes": string(keyPEM)},
		"certificate": string(chain),
		"expiration":  cert.Leaf.NotAfter.UTC().Format(time.RFC3339),
	})
}

// checkAPIVersion accepts date versions from WorkloadAPIVersion on, the way
// the daemon accepts its known versions.
func checkAPIVersion(q url.Values) (string, bool) {
	v := q.Get("api-version")
	if v == "" {
		return "api-version not specified", false
	}
	d, err := time.Parse("2006-01-02", v)
	oldest, _ := time.Parse("2006-01-02", WorkloadAPIVersion)
	if err != nil || d.Before(oldest) {
		return fmt.Sprintf("invalid api-version %q", v), false
	}
	return "", true
}

func parseExpiration(s string, now time.Time) (time.Time, string) {
	exp, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, "invalid expiration"
	}
	if !exp.After(now) {
		return time.Time{}, "expiration must be in the future"
	}
	return exp, ""
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// pathSegments splits the escaped path and unescapes each segment, so an
// escaped slash inside a module id stays inside its segment.
func pathSegments(u *url.URL) ([]string, bool) {
	raw := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	segs := make([]string, len(raw))
	for i, r := range raw {
		s, err := url.PathUnescape(r)
		if err != nil || s == "" {
			return nil, false
		}
		segs[i] = s
	}
	return segs, true
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
