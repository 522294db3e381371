package kubernetes_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// update rewrites the generated parts of docs/kubernetes.md.
var update = flag.Bool("update", false, "rewrite the values table in docs/kubernetes.md")

const (
	docsFile   = "../../docs/kubernetes.md"
	tableStart = "<!-- values table: generated from charts/edgegrid/values.schema.json by `go test -run TestDocsValuesTable -update` in tests/kubernetes -->"
	tableEnd   = "<!-- end of values table -->"
)

// TestDocsValuesTable keeps the values table of docs/kubernetes.md in step
// with the schema and values.yaml: every value, its type, its default and
// its description, and each broker setting under config with the broker's
// default.
func TestDocsValuesTable(t *testing.T) {
	want := valuesTable(t)
	b, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no values table between the markers %q and %q", docsFile, tableStart, tableEnd)
	}
	got := doc[i+len(tableStart) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(docsFile, []byte(doc[:i+len(tableStart)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the values table in %s is out of step with the chart; run go test -run TestDocsValuesTable -update in tests/kubernetes", docsFile)
}

// valuesTable renders the table, between newlines.
func valuesTable(t *testing.T) string {
	t.Helper()
	schema := loadSchema(t)
	raw, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if err := yaml.Unmarshal(raw, &defaults); err != nil {
		t.Fatal(err)
	}
	keys := brokerKeys(t)

	var b strings.Builder
	b.WriteString("\n| Value | Type | Default | Description |\n|---|---|---|---|\n")
	var walk func(prefix string, s valuesSchema, def any)
	walk = func(prefix string, s valuesSchema, def any) {
		for _, name := range sortedKeys(s.Properties) {
			p := s.Properties[name]
			path := strings.TrimPrefix(prefix+"."+name, ".")
			var d any
			if m, ok := def.(map[string]any); ok {
				d = m[name]
			}
			if path == "config" {
				fmt.Fprintf(&b, "| `config` | object | `{}` | %s Each key below is one broker setting, described in [configuration.md](configuration.md); unset, the broker's default applies. |\n", p.Description)
				for _, k := range sortedKeys(p.Properties) {
					bd := keys[k].def
					if bd == "" {
						bd = "(none)"
					} else {
						bd = "`" + bd + "`"
					}
					fmt.Fprintf(&b, "| `config.%s` | %s | %s | %s |\n", k, typeOf(p.Properties[k]), bd, enumText(p.Properties[k]))
				}
				continue
			}
			if len(p.Properties) > 0 && p.AdditionalProperties == false && path != "desiredConfig" {
				walk(path, p, d)
				continue
			}
			if p.Description == "" {
				t.Errorf("values.schema.json: %s has no description", path)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", path, typeOf(p), defaultText(d), describe(p))
		}
	}
	walk("", schema, defaults)
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func typeOf(s valuesSchema) string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, p := range t {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, " or ")
	}
	if len(s.AnyOf) > 0 {
		var parts []string
		for _, a := range s.AnyOf {
			parts = append(parts, typeOf(a))
		}
		return strings.Join(parts, " or ")
	}
	return "any"
}

func describe(s valuesSchema) string {
	d := strings.ReplaceAll(s.Description, "|", "\\|")
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, fmt.Sprintf("`%v`", e))
		}
		d = strings.TrimSpace(d + " One of " + strings.Join(vals, ", ") + ".")
	}
	return d
}

// enumText lists the accepted values of a config key, if it has a list.
func enumText(s valuesSchema) string {
	return describe(valuesSchema{Enum: s.Enum})
}

func defaultText(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if s == `""` {
		return "`\"\"`"
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}
