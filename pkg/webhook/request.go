package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/h1"
)

// endpoints holds destination URLs as http.NewRequest parses them, so that
// a delivery request copies its URL instead of parsing it again. It is
// bounded: past maxEndpoints it starts over.
type endpoints struct {
	mu sync.RWMutex
	m  map[string]*endpoint
}

type endpoint struct {
	u    *url.URL
	host string // the request's Host, as http.NewRequest sets it
	// direct says that requests go over the Sender's own connections
	// (package h1) to target: the URL is http or https with an ASCII host
	// and no user information, and no proxy serves it.
	direct bool
	target h1.Target
}

// maxEndpoints bounds the URLs endpoints keeps.
const maxEndpoints = 1024

func (e *endpoints) get(rawURL string) (*endpoint, error) {
	e.mu.RLock()
	ep, ok := e.m[rawURL]
	e.mu.RUnlock()
	if ok {
		return ep, nil
	}
	req, err := http.NewRequest(http.MethodPost, rawURL, nil)
	if err != nil {
		return nil, err
	}
	ep = &endpoint{u: req.URL, host: req.Host}
	if ep.direct = direct(req); ep.direct {
		tls := req.URL.Scheme == "https"
		port := req.URL.Port()
		switch {
		case port != "":
		case tls:
			port = "443"
		default:
			port = "80"
		}
		ep.target = h1.Target{TLS: tls, Addr: net.JoinHostPort(req.URL.Hostname(), port),
			Host: req.Host, URI: req.URL.RequestURI()}
	}
	e.mu.Lock()
	if e.m == nil || len(e.m) >= maxEndpoints {
		e.m = map[string]*endpoint{}
	}
	e.m[rawURL] = ep
	e.mu.Unlock()
	return ep, nil
}

// direct reports whether req may go over the Sender's own connections.
func direct(req *http.Request) bool {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Host == "" || !ascii(u.Host) {
		return false
	}
	proxy, err := http.ProxyFromEnvironment(req)
	return proxy == nil && err == nil
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// newRequest is http.NewRequestWithContext(ctx, POST, ep's URL, body).
func newRequest(ctx context.Context, ep *endpoint, body io.ReadCloser) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", body)
	if err != nil {
		return nil, err
	}
	u := *ep.u
	req.URL, req.Host = &u, ep.host
	return req, nil
}

// roundTrip sends a delivery request as the sender's http.Client would,
// straight through its transport: the client has no timeout and no cookie
// jar, and follows no redirect, so all Client.Do adds to the transport's
// work is a copy of the headers, for redirects, made for every request.
// What Client.Do does besides for such a client is done here too: the
// URL's user information becomes Basic authorization, and answer does the
// rest. Errors are not wrapped in a *url.Error: RequestError takes that
// off anyway.
func (s *Sender) roundTrip(req *http.Request) (*http.Response, error) {
	if u := req.URL.User; u != nil && req.Header.Get("Authorization") == "" {
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	resp, err := s.client.Transport.RoundTrip(req)
	return answer(req.URL, resp, err)
}

// answer does to the outcome of a request to u what Client.Do does for
// the sender's client: an HTTP answer to a TLS handshake becomes
// http.ErrSchemeMismatch, and a redirect whose Location cannot be parsed
// is an error.
func answer(u *url.URL, resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if loc := resp.Header.Get("Location"); loc != "" {
			if _, err := u.Parse(loc); err != nil {
				_ = resp.Body.Close()
				return nil, fmt.Errorf("failed to parse Location header %q: %v", loc, err)
			}
		}
	}
	return resp, nil
}
