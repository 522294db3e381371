package config

import (
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/internal/suggest"
)

// prefixes are the beginnings of the broker's own environment variables,
// upper-cased with ':' written as "__". A variable under one of them that is
// not a known key is most likely a misspelt one. brokers__ is the
// documented misspelling of broker__; console__ is reserved for the
// console's keys.
var prefixes = []string{"API__", "BROKER__", "BROKERS__", "INBOUND__", "OUTBOUND__", "EDGEHUB__", "METRICS__",
	"LOG__", "CONSOLE__", "DEBUG__", "DESIRED_CONFIG"}

// Unknown is an environment variable under the broker's prefixes that is
// not one of its keys.
type Unknown struct {
	// Name is the variable as it was set.
	Name string
	// Nearest is the known key, in its documented spelling, nearest to
	// Name among those under the same prefix; "" when there is none.
	Nearest string
}

// UnknownKeys returns, in order of name, the variables of environ
// ("NAME=value" strings) whose names begin with one of the broker's
// prefixes (api__, broker__, inbound__, outbound__, edgehub__, metrics__,
// log__, console__, debug__, desired_config; ignoring case, ':' or "__"
// between segments) but spell no key Load reads. Load ignores them; the
// broker warns about each, so that a misspelt key is not silently without
// effect, yet a manifest written for a newer version still starts.
func UnknownKeys(environ []string) []Unknown {
	var out []Unknown
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		norm := strings.ToUpper(strings.ReplaceAll(name, ":", "__"))
		prefix := prefixOf(norm)
		if prefix == "" || bySpelling[norm] != nil {
			continue
		}
		out = append(out, Unknown{Name: name, Nearest: nearestKey(norm, prefix)})
	}
	slices.SortFunc(out, func(a, b Unknown) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// prefixOf returns the prefix of prefixes that the normalised name begins
// with, or "".
func prefixOf(norm string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(norm, p) {
			return p
		}
	}
	return ""
}

// nearestKey returns the documented spelling of the key under prefix
// nearest to the normalised name norm; brokers__ counts as broker__.
func nearestKey(norm, prefix string) string {
	if prefix == "BROKERS__" {
		prefix = "BROKER__"
	}
	var names []string
	for _, k := range keyTable {
		if strings.HasPrefix(strings.ToUpper(k.name), prefix) {
			names = append(names, k.name)
		}
	}
	best, _ := suggest.Nearest(norm, names)
	return best
}
