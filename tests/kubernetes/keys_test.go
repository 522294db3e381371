package kubernetes_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// configDir is the broker's configuration package, whose key table lists
// every setting the broker reads.
const configDir = "../../pkg/config"

// offeredPrefixes are the setting families the chart must make reachable.
var offeredPrefixes = []string{"broker__", "api__", "inbound__", "outbound__", "log__", "metrics__", "console__"}

// brokerKey is one key of pkg/config's key table, with the Go type and
// default of the Config field that reads it.
type brokerKey struct {
	name, goType, def string
}

// brokerKeys parses pkg/config: the key table in keys.go (documented
// spellings) joined, through the envconfig tags, with the Config fields in
// config.go. Parsing the source keeps this module free of the broker's
// dependencies and fails loudly when the table's shape changes.
func brokerKeys(t *testing.T) map[string]brokerKey {
	t.Helper()
	fset := token.NewFileSet()
	parse := func(name string) *ast.File {
		f, err := parser.ParseFile(fset, filepath.Join(configDir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var names []string
	ast.Inspect(parse("keys.go"), func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "keyTable" || len(vs.Values) != 1 {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			for _, kv := range el.(*ast.CompositeLit).Elts {
				kv, ok := kv.(*ast.KeyValueExpr)
				if !ok || kv.Key.(*ast.Ident).Name != "name" {
					continue
				}
				s, err := strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, s)
			}
		}
		return false
	})
	fields := map[string]brokerKey{} // by upper-case env name
	// Config holds the settings; loadSpec adds the legacy ones Load reads.
	inspectStructs := func(file, typeName string, f func(ast.Node) bool) {
		ast.Inspect(parse(file), func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == typeName {
				return f(n)
			}
			return true
		})
	}
	readFields := func(n ast.Node) bool {
		ts := n.(*ast.TypeSpec)
		for _, f := range ts.Type.(*ast.StructType).Fields.List {
			if f.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(f.Tag.Value)
			st := reflect.StructTag(tag)
			env := st.Get("envconfig")
			if env == "" {
				continue
			}
			ft := f.Type
			if star, ok := ft.(*ast.StarExpr); ok {
				ft = star.X
			}
			typ, _ := ft.(*ast.Ident)
			if typ == nil {
				t.Fatalf("Config field for %s has a type this test cannot read", env)
			}
			fields[env] = brokerKey{goType: typ.Name, def: st.Get("default")}
		}
		return false
	}
	inspectStructs("config.go", "Config", readFields)
	inspectStructs("load.go", "loadSpec", readFields)
	if len(names) < 50 || len(fields) != len(names) {
		t.Fatalf("parsed %d keys from keys.go and %d tagged fields from config.go and load.go; has their shape changed?", len(names), len(fields))
	}
	out := map[string]brokerKey{}
	for _, n := range names {
		k, ok := fields[strings.ToUpper(n)]
		if !ok {
			t.Fatalf("key %s has no Config field", n)
		}
		k.name = n
		out[n] = k
	}
	return out
}

// offered reports whether the chart must make key reachable.
func offered(key string) bool {
	return slices.ContainsFunc(offeredPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// valuesSchema is the parts of values.schema.json the tests read.
type valuesSchema struct {
	Type                 any                     `json:"type"`
	Description          string                  `json:"description"`
	Enum                 []any                   `json:"enum"`
	Properties           map[string]valuesSchema `json:"properties"`
	AdditionalProperties any                     `json:"additionalProperties"`
	Items                *valuesSchema           `json:"items"`
	AnyOf                []valuesSchema          `json:"anyOf"`
}

func loadSchema(t *testing.T) valuesSchema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s valuesSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	return s
}

// chartManagedEnv renders the chart with every structured value that sets
// a broker key switched on and returns the broker keys the Deployment sets
// itself, which the config map must not offer a second time.
func chartManagedEnv(t *testing.T) map[string]bool {
	t.Helper()
	r := render(t, renderOpts{
		values: `tlsPolicy: enabled
existingSecret: {name: creds, hasServerCert: true, hasCA: true, hasClientCA: true}
auth: {clientCert: {enabled: true}}
metrics: {reporterType: prometheus}
`,
	})
	out := map[string]bool{}
	for _, e := range container(t, deployment(t, r)).Env {
		out[e.Name] = true
	}
	return out
}

// TestConfigKeysInStep keeps the chart in step with pkg/config: every
// broker__, api__, inbound__, outbound__, log__, metrics__ and console__ key
// is either set by the chart from a structured value or offered, with a matching
// type, under config in the schema; and the schema offers nothing else.
func TestConfigKeysInStep(t *testing.T) {
	keys := brokerKeys(t)
	cfg := loadSchema(t).Properties["config"]
	if cfg.AdditionalProperties != false {
		t.Fatal("the schema's config map accepts keys it does not list")
	}
	managed := chartManagedEnv(t)
	for name, k := range keys {
		if !offered(name) {
			continue
		}
		p, inSchema := cfg.Properties[name]
		switch {
		case inSchema && managed[name]:
			t.Errorf("%s is set by the chart and also offered under config; a user value would conflict", name)
		case !inSchema && !managed[name]:
			t.Errorf("%s is not reachable: add it to config in values.schema.json (and docs/kubernetes.md), or set it from a structured value", name)
		case inSchema:
			if want := jsonType(k.goType); p.Type != want {
				t.Errorf("config.%s has type %v in the schema, want %s (Go type %s)", name, p.Type, want, k.goType)
			}
		}
	}
	for name := range cfg.Properties {
		if _, ok := keys[name]; !ok || !offered(name) {
			t.Errorf("config.%s in the schema is not a broker key of the offered families", name)
		}
	}
	for name := range managed {
		if _, ok := keys[name]; !ok && name != "GOMEMLIMIT" {
			t.Errorf("the Deployment sets %s, which the broker does not read", name)
		}
	}
}

// jsonType is the schema type of a Config field's Go type.
func jsonType(goType string) string {
	switch goType {
	case "bool":
		return "boolean"
	case "int", "int64":
		return "integer"
	case "Factor":
		return "number"
	default: // string and the enum and interval types, all read as text
		return "string"
	}
}

// TestSchemaClosed checks that every object in values.schema.json either
// lists its properties and refuses others, or is a map whose values have a
// schema: a misspelt value can hide nowhere. The declared topics and
// subscriptions are the exception: they are Event Grid resources, which the
// broker validates and reports on itself.
func TestSchemaClosed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{
		"desiredConfig.topics.*":             true,
		"desiredConfig.eventSubscriptions.*": true,
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		isObject := s["type"] == "object"
		if types, ok := s["type"].([]any); ok {
			isObject = slices.Contains(types, any("object"))
		}
		if isObject && !open[path] {
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if ap {
					t.Errorf("%s accepts any property", path)
				}
			case map[string]any:
				walk(path+".*", ap)
			default:
				t.Errorf("%s does not say additionalProperties: false", path)
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(strings.TrimPrefix(path+"."+name, "."), p.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
		if anyOf, ok := s["anyOf"].([]any); ok {
			for _, a := range anyOf {
				walk(path, a.(map[string]any))
			}
		}
	}
	walk("", root)
}
