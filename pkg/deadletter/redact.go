package deadletter

import "strings"

// redactURLs replaces anything that looks like a URL in a network error's
// text (the host of a storage endpoint is fine, its path and query may
// carry a signature) with its scheme and host.
func redactURLs(s string) string {
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if i := strings.Index(f, "://"); i >= 0 {
			rest := f[i+3:]
			if j := strings.IndexAny(rest, "/?"); j >= 0 {
				f = f[:i+3] + rest[:j]
			}
		}
		b.WriteString(f)
	}
	return b.String()
}
