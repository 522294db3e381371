package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the page is served under; Prefix without its slash
// redirects to it.
const Prefix = "/console/"

// ContentSecurityPolicy lets the page run only its own script and style and
// talk only to its own origin, and refuses every other source and framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// file is one of the page's files, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the page's files under Prefix. It needs no credential: the
// files hold no data, and every data call the page makes is authenticated
// by the API as any client's is.
type Handler struct {
	files map[string]file // by path below Prefix; "" is the page itself
}

// New returns the page's handler.
func New() *Handler {
	h := &Handler{files: map[string]file{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "static/")
		h.files[name] = file{body: body, contentType: contentType(name), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil { // the files are compiled in: this cannot happen
		panic("console: reading the embedded files: " + err.Error())
	}
	h.files[""] = h.files["index.html"]
	return h
}

// contentType names the type of a file by its extension, without relying
// on the system's MIME tables, which a minimal container may lack.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Size is the number of bytes of the page's files, which the binary grows
// by.
func (h *Handler) Size() int {
	n := 0
	for name, f := range h.files {
		if name != "" {
			n += len(f.body)
		}
	}
	return n
}

// ServeHTTP answers GET and HEAD for Prefix (the page), the files below it,
// and Prefix without its slash (a redirect to Prefix).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	// Revalidated on every load, so a new broker's page is never mixed
	// with an old one's cached script; the ETag makes that cheap.
	hdr.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	f, ok := h.files[strings.TrimPrefix(p, Prefix)]
	if !ok || !strings.HasPrefix(p, Prefix) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
