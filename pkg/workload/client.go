package workload

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrInvalidURI is returned by New when the workload URI is not a unix:// or
// http:// URI naming a socket path or a host.
var ErrInvalidURI = errors.New("workload: invalid URI")

// maxResponseBytes caps how much of a daemon response is read: a certificate
// chain and a key are a few kilobytes.
const maxResponseBytes = 1 << 20

// maxMessageBytes caps how much of the daemon's error message is kept.
const maxMessageBytes = 512

// Error reports a response from the workload API with a status other than
// the documented success status. Message is the daemon's "message" field,
// or the start of the body when it is not the documented JSON.
type Error struct {
	Op         string // "trust-bundle", "identity certificate" or "server certificate"
	StatusCode int
	Message    string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("workload: %s: status %d", e.Op, e.StatusCode)
	}
	return fmt.Sprintf("workload: %s: status %d: %s", e.Op, e.StatusCode, e.Message)
}

// Client calls the IoT Edge workload API on behalf of one module. It is safe
// for concurrent use. Timeouts and cancellation come from the context of
// each call.
type Client struct {
	httpc        *http.Client
	base         string // scheme://host[/prefix], without a trailing slash
	apiVersion   string
	moduleID     string
	generationID string
}

// New returns a client for the workload API at uri, which is either
// unix:///path/to/workload.sock (HTTP over a unix socket) or http://host:port.
// apiVersion is IOTEDGE_APIVERSION, moduleID IOTEDGE_MODULEID and
// generationID IOTEDGE_MODULEGENERATIONID. It returns an error wrapping
// ErrInvalidURI for any other scheme or an incomplete URI, and an error when
// apiVersion or moduleID is empty. It does not contact the daemon.
func New(uri, apiVersion, moduleID, generationID string) (*Client, error) {
	if apiVersion == "" {
		return nil, errors.New("workload: api version is empty")
	}
	if moduleID == "" {
		return nil, errors.New("workload: module id is empty")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	c := &Client{apiVersion: apiVersion, moduleID: moduleID, generationID: generationID}
	switch strings.ToLower(u.Scheme) {
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if path == "" || u.Host != "" {
			return nil, fmt.Errorf("%w: %q: want unix:///path/to/socket", ErrInvalidURI, uri)
		}
		tr := &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", path)
			},
			MaxIdleConns:    2,
			IdleConnTimeout: 30 * time.Second,
		}
		c.httpc = &http.Client{Transport: tr}
		c.base = "http://localhost"
	case "http":
		if u.Host == "" {
			return nil, fmt.Errorf("%w: %q: want http://host:port", ErrInvalidURI, uri)
		}
		tr := &http.Transport{
			Proxy:           nil, // the daemon is local; never go through a proxy
			MaxIdleConns:    2,
			IdleConnTimeout: 30 * time.Second,
		}
		c.httpc = &http.Client{Transport: tr}
		c.base = "http://" + u.Host + strings.TrimRight(u.Path, "/")
	default:
		return nil, fmt.Errorf("%w: unsupported scheme %q (want unix or http)", ErrInvalidURI, u.Scheme)
	}
	// The daemon never redirects; refuse to follow one.
	c.httpc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

// ModuleID returns the module id the client acts for.
func (c *Client) ModuleID() string { return c.moduleID }

// TrustBundle fetches the trust bundle (GET /trust-bundle): the root CA
// certificates modules should trust. It returns an *Error when the daemon
// answers with a status other than 200, and an error when the bundle holds
// no certificate or a block fails to parse.
func (c *Client) TrustBundle(ctx context.Context) ([]*x509.Certificate, error) {
	const op = "trust-bundle"
	var resp struct {
		Certificate string `json:"certificate"`
	}
	if err := c.do(ctx, op, http.MethodGet, "/trust-bundle", nil, http.StatusOK, &resp); err != nil {
		return nil, err
	}
	certs, err := ParseCertificates(pemText(resp.Certificate))
	if err != nil {
		return nil, fmt.Errorf("workload: %s: %w", op, err)
	}
	return certs, nil
}

// IdentityCert asks for the module's identity (client) certificate
// (POST /modules/{moduleId}/certificate/identity) valid until expiry. The
// daemon may shorten the validity. The returned certificate carries its
// chain and private key and has Leaf set. It returns an *Error when the
// daemon answers with a status other than 201.
func (c *Client) IdentityCert(ctx context.Context, expiry time.Time) (*tls.Certificate, error) {
	const op = "identity certificate"
	body := struct {
		Expiration string `json:"expiration"`
	}{Expiration: expiry.UTC().Format(time.RFC3339)}
	path := "/modules/" + url.PathEscape(c.moduleID) + "/certificate/identity"
	return c.certificate(ctx, op, path, body)
}

// ServerCert asks for a server certificate for commonName
// (POST /modules/{moduleId}/genid/{generationId}/certificate/server) valid
// until expiry. The daemon adds the module id as a subject alternative name
// and may shorten the validity. The returned certificate carries its chain
// and private key and has Leaf set. It returns an error when the client has
// no generation id or commonName is empty, and an *Error when the daemon
// answers with a status other than 201.
func (c *Client) ServerCert(ctx context.Context, commonName string, expiry time.Time) (*tls.Certificate, error) {
	const op = "server certificate"
	if c.generationID == "" {
		return nil, errors.New("workload: server certificate: module generation id is empty")
	}
	if commonName == "" {
		return nil, errors.New("workload: server certificate: common name is empty")
	}
	body := struct {
		CommonName string `json:"commonName"`
		Expiration string `json:"expiration"`
	}{CommonName: commonName, Expiration: expiry.UTC().Format(time.RFC3339)}
	path := "/modules/" + url.PathEscape(c.moduleID) + "/genid/" + url.PathEscape(c.generationID) + "/certificate/server"
	return c.certificate(ctx, op, path, body)
}

// certificateResponse is the daemon's CertificateResponse.
type certificateResponse struct {
	Certificate string `json:"certificate"`
	PrivateKey  struct {
		Type  string `json:"type"`
		Bytes string `json:"bytes"`
	} `json:"privateKey"`
	Expiration string `json:"expiration"`
}

func (c *Client) certificate(ctx context.Context, op, path string, body any) (*tls.Certificate, error) {
	var resp certificateResponse
	if err := c.do(ctx, op, http.MethodPost, path, body, http.StatusCreated, &resp); err != nil {
		return nil, err
	}
	if resp.PrivateKey.Type != "key" {
		// "ref" keys live in an HSM; this module needs the key material.
		return nil, fmt.Errorf("workload: %s: unsupported private key type %q", op, resp.PrivateKey.Type)
	}
	cert, err := tls.X509KeyPair(pemText(resp.Certificate), pemText(resp.PrivateKey.Bytes))
	if err != nil {
		// The tls error names the problem (no key, mismatch), never the key itself.
		return nil, fmt.Errorf("workload: %s: %w", op, err)
	}
	if cert.Leaf == nil {
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			return nil, fmt.Errorf("workload: %s: %w", op, err)
		}
		cert.Leaf = leaf
	}
	return &cert, nil
}

// do sends one request and decodes a successful JSON answer into out.
func (c *Client) do(ctx context.Context, op, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("workload: %s: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path + "?api-version=" + url.QueryEscape(c.apiVersion)
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("workload: %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.httpc.Do(req)
	if err != nil {
		return fmt.Errorf("workload: %s: %w", op, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("workload: %s: read response: %w", op, err)
	}
	if len(data) > maxResponseBytes {
		return fmt.Errorf("workload: %s: response larger than %d bytes", op, maxResponseBytes)
	}
	if res.StatusCode != want {
		return &Error{Op: op, StatusCode: res.StatusCode, Message: errorMessage(data)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("workload: %s: decode response: %w", op, err)
	}
	return nil
}

// errorMessage extracts the daemon's {"message": ...}, or falls back to the
// start of the body.
func errorMessage(data []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	msg := ""
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		msg = e.Message
	} else {
		msg = strings.TrimSpace(string(data))
	}
	if len(msg) > maxMessageBytes {
		msg = msg[:maxMessageBytes] + "..."
	}
	return msg
}

// pemText returns s as PEM bytes. The daemon sends PEM text; its API
// description calls the field "base64 encoded PEM", so a value without a PEM
// header that decodes as base64 is accepted too.
func pemText(s string) []byte {
	if strings.Contains(s, "-----BEGIN") {
		return []byte(s)
	}
	if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s)); err == nil && bytes.Contains(b, []byte("-----BEGIN")) {
		return b
	}
	return []byte(s)
}

// ParseCertificates parses every CERTIFICATE block of a PEM bundle, as the
// workload API returns them and as CA files hold them. It returns an error
// when there is none or one fails to parse.
func ParseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate in PEM data")
	}
	return certs, nil
}
