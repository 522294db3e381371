package tests_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// edgeEnv is the environment IoT Edge gives the module, pointing at a
// stand-in for the security daemon (testpki.WorkloadServer: the real daemon
// cannot run in tests; it serves the same documented workload API on a real
// unix socket). Secure defaults otherwise, on free loopback ports.
func edgeEnv(wl *testpki.WorkloadServer, kv ...string) map[string]string {
	env := map[string]string{
		"IOTEDGE_WORKLOADURI":        wl.URI(),
		"IOTEDGE_APIVERSION":         testpki.WorkloadAPIVersion,
		"IOTEDGE_MODULEID":           testpki.WorkloadModuleID,
		"IOTEDGE_MODULEGENERATIONID": testpki.WorkloadGenerationID,
		"IOTEDGE_IOTHUBHOSTNAME":     testpki.WorkloadHubName,
		"IOTEDGE_DEVICEID":           testpki.WorkloadDeviceID,
		"IOTEDGE_GATEWAYHOSTNAME":    "127.0.0.1",
		"api__httpPort":              "0",
		"api__httpsPort":             "0",
		"api__bindAddress":           "127.0.0.1",
	}
	return merge(env, kv...)
}

// tlsClient trusts roots and presents cert, if any.
func tlsClient(roots *x509.CertPool, cert *tls.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: roots, InsecureSkipVerify: roots == nil}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

func status(t *testing.T, c *http.Client, method, url string, body any, header ...string) int {
	t.Helper()
	code, _, _ := do(t, c, method, url, "application/json", body, header...)
	return code
}

func TestSecurity_IoTEdge(t *testing.T) {
	t.Parallel()
	ca := testpki.NewCA(t, "IoT Edge test CA")
	wl := testpki.NewWorkloadServer(t, ca)
	wl.SetServerCertLifetime(4 * time.Second)
	b := startBroker(t, edgeEnv(wl, "inbound__clientAuth__clientCert__allowUnknownCA", "false"))
	if b.URL != "" {
		t.Fatalf("strict policy opened a plain HTTP listener at %s", b.URL)
	}
	trusted := ca.Issue(t, "publisher", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	unknown := testpki.SelfSigned(t, "stranger")
	expired := ca.Issue(t, "old", nil, nil, time.Now().Add(-time.Minute), x509.ExtKeyUsageClientAuth)
	topics := b.TLS + "/topics?" + apiVersion

	t.Run("ServerCertificateFromWorkloadAPI", func(t *testing.T) {
		// The CA pool alone verifies the broker: its certificate came from
		// the workload API, for IOTEDGE_GATEWAYHOSTNAME.
		if code := status(t, tlsClient(ca.Pool(), &trusted), http.MethodGet, topics, nil); code != 200 {
			t.Fatalf("GET /topics with a trusted client certificate = %d", code)
		}
	})

	t.Run("ClientCertificates", func(t *testing.T) {
		for name, tc := range map[string]struct {
			cert *tls.Certificate
			want int
		}{
			"Trusted":   {&trusted, 200},
			"UnknownCA": {&unknown, 401},
			"Expired":   {&expired, 401},
			"Missing":   {nil, 401},
		} {
			if code := status(t, tlsClient(ca.Pool(), tc.cert), http.MethodGet, topics, nil); code != tc.want {
				t.Errorf("%s: %d, want %d", name, code, tc.want)
			}
		}
		if code := status(t, tlsClient(ca.Pool(), nil), http.MethodGet, b.TLS+"/healthz", nil); code != 200 {
			t.Errorf("/healthz without a certificate = %d, want 200", code)
		}
	})

	t.Run("ServerCertificateRenewedWithoutRestart", func(t *testing.T) {
		serial := func() string { return servedSerial(t, b.TLS, ca.Pool()) }
		first := serial()
		eventually(t, 20*time.Second, func() error {
			if serial() == first {
				return fmt.Errorf("still serving serial %s", first)
			}
			return nil
		})
		if n := wl.Calls(testpki.EndpointServer); n < 2 {
			t.Errorf("workload API server-certificate calls = %d", n)
		}
	})

	t.Run("IdentityCertificatePresentedOutbound", func(t *testing.T) {
		// An HTTPS subscriber that requires a client certificate from the
		// IoT Edge CA; its own certificate is from that CA too, so the broker
		// verifies it through the trust bundle.
		got := make(chan string, 10)
		sinkSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.TLS.PeerCertificates[0].Subject.CommonName
		}))
		sinkSrv.TLS = &tls.Config{
			Certificates: []tls.Certificate{ca.Issue(t, "subscriber", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    ca.Pool(),
		}
		sinkSrv.StartTLS()
		defer sinkSrv.Close()
		c := tlsClient(ca.Pool(), &trusted)
		mustStatus(t, c, http.MethodPut, b.TLS+"/topics/t?"+apiVersion, map[string]any{}, 200)
		mustStatus(t, c, http.MethodPut, b.TLS+"/topics/t/eventSubscriptions/s?"+apiVersion,
			map[string]any{"properties": map[string]any{"destination": webhookDest(sinkSrv.URL + "/hook")}}, 200)
		mustStatus(t, c, http.MethodPost, b.TLS+"/topics/t/events?"+apiVersion, egEvents("e", 1), 200)
		select {
		case cn := <-got:
			if cn != testpki.WorkloadModuleID {
				t.Errorf("subscriber saw client certificate %q, want the module identity %q", cn, testpki.WorkloadModuleID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery to the mTLS subscriber\n%s", b.Output())
		}
	})

	t.Run("HTTPWebhooksRefused", func(t *testing.T) {
		c := tlsClient(ca.Pool(), &trusted)
		code, _, body := do(t, c, http.MethodPut, b.TLS+"/topics/t/eventSubscriptions/plain?"+apiVersion, "application/json",
			map[string]any{"properties": map[string]any{"destination": webhookDest("http://127.0.0.1:1/hook")}})
		if code != 400 || !strings.Contains(string(body), "InvalidDestination") {
			t.Errorf("http webhook under httpsOnly: %d %s", code, body)
		}
	})
}

// servedSerial returns the serial number of the certificate the HTTPS
// listener at base serves, verified against roots for 127.0.0.1.
func servedSerial(t *testing.T, base string, roots *x509.CertPool) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func mustStatus(t *testing.T, c *http.Client, method, url string, body any, want int) {
	t.Helper()
	code, _, rb := do(t, c, method, url, "application/json", body)
	if code != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, url, code, want, rb)
	}
}

func TestSecurity_AllowUnknownCA(t *testing.T) {
	t.Parallel()
	ca := testpki.NewCA(t, "IoT Edge test CA")
	wl := testpki.NewWorkloadServer(t, ca)
	b := startBroker(t, edgeEnv(wl)) // allowUnknownCA defaults to true
	unknown := testpki.SelfSigned(t, "stranger")
	if code := status(t, tlsClient(ca.Pool(), &unknown), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil); code != 200 {
		t.Errorf("self-signed client certificate with allowUnknownCA=true: %d, want 200", code)
	}
	if code := status(t, tlsClient(ca.Pool(), nil), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil); code != 401 {
		t.Errorf("no client certificate: %d, want 401", code)
	}
}

func TestSecurity_TLSPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy      string
		http, https bool
	}{
		{"strict", false, true},
		{"enabled", true, true},
		{"disabled", true, false},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			b := startBroker(t, merge(devEnv(), "inbound__serverAuth__tlsPolicy", tc.policy))
			if (b.URL != "") != tc.http || (b.TLS != "") != tc.https {
				t.Fatalf("listeners http=%q https=%q", b.URL, b.TLS)
			}
			if b.TLS != "" {
				// Outside IoT Edge: a self-signed certificate and a warning.
				if len(b.Logs("not running under IoT Edge (no IOTEDGE_WORKLOADURI): serving HTTPS with a self-signed certificate made at start; clients must skip verification or use inbound__serverAuth__serverCert__source=File")) != 1 {
					t.Error("no self-signed certificate warning")
				}
				if code := status(t, tlsClient(nil, nil), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil); code != 200 {
					t.Errorf("HTTPS GET /topics = %d", code)
				}
				// TLS 1.1 is refused.
				_, err := tls.Dial("tcp", strings.TrimPrefix(b.TLS, "https://"), &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11})
				if err == nil {
					t.Error("a TLS 1.1 handshake succeeded")
				}
			}
			if b.URL != "" {
				if code := status(t, nil, http.MethodGet, b.URL+"/topics?"+apiVersion, nil); code != 200 {
					t.Errorf("HTTP GET /topics = %d", code)
				}
			}
		})
	}

	t.Run("PlainHTTPWithCertificateAuthIs401", func(t *testing.T) {
		b := startBroker(t, merge(devEnv(), "inbound__serverAuth__tlsPolicy", "enabled", "inbound__clientAuth__clientCert__enabled", "true"))
		if code := status(t, nil, http.MethodGet, b.URL+"/topics?"+apiVersion, nil); code != 401 {
			t.Errorf("plain HTTP with client-certificate auth = %d, want 401", code)
		}
		if code := status(t, nil, http.MethodGet, b.URL+"/healthz", nil); code != 200 {
			t.Errorf("/healthz = %d, want 200", code)
		}
	})
}

func TestSecurity_SAS(t *testing.T) {
	t.Parallel()
	const key1, key2 = "c2VjcmV0LWtleS1vbmUtMTIzNDU2Nzg5MA==", "c2Vjb25kLWtleS0wOTg3NjU0MzIx"
	b := startBroker(t, merge(devEnv(),
		"inbound__serverAuth__tlsPolicy", "enabled",
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", key1,
		"inbound__clientAuth__sasKeys__key2", key2,
	))
	get := func(header ...string) int {
		return status(t, tlsClient(nil, nil), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil, header...)
	}
	t.Run("Keys", func(t *testing.T) {
		for name, tc := range map[string]struct {
			header []string
			want   int
		}{
			"Key1":    {[]string{"aeg-sas-key", key1}, 200},
			"Key2":    {[]string{"aeg-sas-key", key2}, 200},
			"Wrong":   {[]string{"aeg-sas-key", "nope"}, 401},
			"Missing": {nil, 401},
		} {
			if code := get(tc.header...); code != tc.want {
				t.Errorf("%s: %d, want %d", name, code, tc.want)
			}
		}
		// Plain HTTP listener: the key works there too.
		if code := status(t, nil, http.MethodGet, b.URL+"/topics?"+apiVersion, nil, "aeg-sas-key", key1); code != 200 {
			t.Errorf("key over HTTP: %d", code)
		}
	})
	t.Run("Tokens", func(t *testing.T) {
		mustStatus(t, tlsClient(nil, nil), http.MethodPut, b.TLS+"/topics/t1?"+apiVersion+"&x=1", nil, 401)
		code, _, _ := do(t, tlsClient(nil, nil), http.MethodPut, b.TLS+"/topics/t1?"+apiVersion, "application/json", map[string]any{}, "aeg-sas-key", key1)
		if code != 200 {
			t.Fatalf("creating topic: %d", code)
		}
		resource := b.TLS + "/topics/t1/api/events?api-version=2018-01-01"
		valid := auth.GenerateSASToken(resource, time.Now().Add(time.Hour), key2)
		expired := auth.GenerateSASToken(resource, time.Now().Add(-time.Minute), key1)
		otherTopic := auth.GenerateSASToken(b.TLS+"/topics/t2/api/events?api-version=2018-01-01", time.Now().Add(time.Hour), key1)
		tampered := strings.Replace(valid, "t1", "t2", 1)
		// The token in aeg-sas-token, or in the Authorization header as
		// cloud Event Grid also takes it.
		posts := map[string]func(token string) int{
			"aeg-sas-token": func(token string) int {
				code, _, _ := do(t, tlsClient(nil, nil), http.MethodPost, resource, "application/json", egEvents("e", 1), "aeg-sas-token", token)
				return code
			},
			"Authorization": func(token string) int {
				code, _, _ := do(t, tlsClient(nil, nil), http.MethodPost, resource, "application/json", egEvents("e", 1), "Authorization", "SharedAccessSignature "+token)
				return code
			},
		}
		for via, post := range posts {
			for name, tc := range map[string]struct {
				token string
				want  int
			}{
				"Valid":         {valid, 200},
				"Expired":       {expired, 401},
				"OtherResource": {otherTopic, 401},
				"Tampered":      {tampered, 401},
				"Garbage":       {"r=x&e=y&s=z", 401},
			} {
				if code := post(tc.token); code != tc.want {
					t.Errorf("%s via %s: %d, want %d", name, via, code, tc.want)
				}
			}
		}
	})
	t.Run("EitherMethodIsEnough", func(t *testing.T) {
		both := startBroker(t, merge(devEnv(),
			"inbound__serverAuth__tlsPolicy", "strict",
			"inbound__clientAuth__clientCert__enabled", "true",
			"inbound__clientAuth__sasKeys__enabled", "true",
			"inbound__clientAuth__sasKeys__key1", key1,
		))
		cert := testpki.SelfSigned(t, "client") // allowUnknownCA defaults to true
		url := both.TLS + "/topics?" + apiVersion
		if code := status(t, tlsClient(nil, &cert), http.MethodGet, url, nil); code != 200 {
			t.Errorf("certificate only: %d", code)
		}
		if code := status(t, tlsClient(nil, nil), http.MethodGet, url, nil, "aeg-sas-key", key1); code != 200 {
			t.Errorf("key only: %d", code)
		}
		if code := status(t, tlsClient(nil, &cert), http.MethodGet, url, nil, "aeg-sas-key", "wrong"); code != 200 {
			t.Errorf("wrong key but a good certificate: %d", code)
		}
		if code := status(t, tlsClient(nil, nil), http.MethodGet, url, nil); code != 401 {
			t.Errorf("neither: %d, want 401", code)
		}
	})
	t.Run("SecretsNeverLogged", func(t *testing.T) {
		out := b.Output()
		for _, secret := range []string{key1, key2} {
			if strings.Contains(out, secret) {
				t.Errorf("the log contains a SAS key")
			}
		}
	})
}

func TestSecurity_OutboundTLS(t *testing.T) {
	t.Parallel()
	// A subscriber with a self-signed certificate for 127.0.0.1.
	self := testpki.SelfSigned(t, "127.0.0.1")
	hits := make(chan struct{}, 100)
	sinkSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits <- struct{}{} }))
	sinkSrv.TLS = &tls.Config{Certificates: []tls.Certificate{self}}
	sinkSrv.StartTLS()
	defer sinkSrv.Close()

	for _, tc := range []struct {
		name      string
		env       []string
		delivered bool
	}{
		{"Defaults", nil, true}, // allowUnknownCA=true
		{"StrictCA", []string{"outbound__webhook__allowUnknownCA", "false"}, false},
		{"SkipValidation", []string{"outbound__webhook__allowUnknownCA", "false", "outbound__webhook__skipServerCertValidation", "true"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, merge(fastEnv(tc.env...), "broker__logDeliveryFailure", "true"))
			createTopic(t, b.URL, "t", "EventGridSchema")
			createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(sinkSrv.URL)})
			publish(t, b.URL, "t", egEvents("e", 1))
			if tc.delivered {
				select {
				case <-hits:
				case <-time.After(10 * time.Second):
					t.Fatalf("not delivered\n%s", b.Output())
				}
				return
			}
			eventually(t, 10*time.Second, func() error {
				if len(b.Logs("delivery attempt failed")) == 0 {
					return fmt.Errorf("no failed attempt logged")
				}
				return nil
			})
			select {
			case <-hits:
				t.Error("delivered to an unknown CA with allowUnknownCA=false")
			default:
			}
		})
	}
}

func TestSecurity_FileCertificates(t *testing.T) {
	t.Parallel()
	ca := testpki.NewCA(t, "file CA")
	dir := t.TempDir()
	certFile, keyFile := ca.WriteFiles(t, dir, "127.0.0.1")
	caFile := filepath.Join(dir, "ca.pem")
	testpki.MustWriteFile(t, caFile, ca.PEM())
	b := startBroker(t, merge(devEnv(),
		"inbound__serverAuth__tlsPolicy", "strict",
		"inbound__serverAuth__serverCert__source", "File",
		"inbound__serverAuth__serverCert__certFile", certFile,
		"inbound__serverAuth__serverCert__keyFile", keyFile,
		"inbound__clientAuth__clientCert__enabled", "true",
		"inbound__clientAuth__clientCert__source", "File",
		"inbound__clientAuth__clientCert__caFile", caFile,
		"inbound__clientAuth__clientCert__allowUnknownCA", "false",
	))
	client := ca.Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	if code := status(t, tlsClient(ca.Pool(), &client), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil); code != 200 {
		t.Fatalf("GET with a client certificate from caFile: %d", code)
	}
	other := testpki.NewCA(t, "other CA").Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	if code := status(t, tlsClient(ca.Pool(), &other), http.MethodGet, b.TLS+"/topics?"+apiVersion, nil); code != 401 {
		t.Errorf("client certificate from another CA: %d, want 401", code)
	}
	// Replace the server certificate files: the broker serves the new one
	// without a restart.
	serial := func() string { return servedSerial(t, b.TLS, ca.Pool()) }
	first := serial()
	ca.WriteFiles(t, dir, "127.0.0.1")
	eventually(t, 20*time.Second, func() error {
		if serial() == first {
			return fmt.Errorf("old certificate still served")
		}
		return nil
	})
}

func TestSecurity_Hardening(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "api__readHeaderTimeoutInSeconds", "1", "api__requestTimeoutInSeconds", "2", "api__maxHeaderBytes", "8192"))
	addr := strings.TrimPrefix(b.URL, "http://")

	t.Run("SlowHeadersCutOff", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /topics?%s HTTP/1.1\r\nHost: x\r\n", apiVersion)
		// Never finish the headers: the server must close the connection.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		start := time.Now()
		_, err = bufio.NewReader(conn).ReadString('\n')
		if time.Since(start) > 5*time.Second {
			t.Errorf("connection kept %v with unfinished headers", time.Since(start))
		}
		_ = err // closed (EOF) or a 408 answer: either way it was cut off
	})

	t.Run("SlowBodyCutOff", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /topics/t/events?%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[", apiVersion)
		// Send nothing more: the request timeout must end the request.
		_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		start := time.Now()
		_, _ = bufio.NewReader(conn).ReadString('\n')
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("a request with a stalled body was kept %v with a 2 s request timeout", d)
		}
	})

	t.Run("OversizedHeaders", func(t *testing.T) {
		code := status(t, nil, http.MethodGet, b.URL+"/topics?"+apiVersion, nil, "X-Big", strings.Repeat("a", 64<<10))
		if code != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("64 KB of headers: %d, want 431", code)
		}
	})

	t.Run("GarbageDoesNotCrash", func(t *testing.T) {
		for _, raw := range []string{
			"\x00\x01\x02\r\n\r\n",
			"POST /topics/x/events?" + apiVersion + " HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
			"POST /topics/x/events?" + apiVersion + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
			"GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",
		} {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = conn.Write([]byte(raw))
			_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, _ = bufio.NewReader(conn).ReadString('\n')
			conn.Close()
		}
		if code := status(t, nil, http.MethodGet, b.URL+"/healthz", nil); code != 200 {
			t.Errorf("broker unhealthy after garbage: %d", code)
		}
	})
}
