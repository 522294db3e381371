package tests_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// TestExamples_MembersAccepted reads every example body in README.md,
// docs/ and the deployment templates (curl -d bodies, JSON blocks, JSON
// held in strings, fragments of a body) and decodes each topic body,
// subscription body, destination and declaration it finds. None may be
// refused for a member: the API refuses unknown members, so an example
// that names one would teach a mistake. Placeholders (a key written "…")
// may fail other checks. Every environment key the examples set must be
// one the broker knows.
func TestExamples_MembersAccepted(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	var found examples
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range codeBlocks(string(text)) {
			found.block(t, filepath.Base(f), b)
		}
	}
	for _, name := range []string{"deployment.template.json", "deployment.debug.template.json"} {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		found.json(t, name, string(text))
	}
	if found.bodies < 20 || found.keys < 20 {
		t.Fatalf("found only %d example bodies and %d environment keys: the extraction no longer works", found.bodies, found.keys)
	}
	t.Logf("checked %d example bodies and %d environment keys", found.bodies, found.keys)
}

// examples counts what the test checked.
type examples struct{ bodies, keys int }

var (
	fence      = regexp.MustCompile("(?m)^```([a-z]*)\n")
	curlData   = regexp.MustCompile(`(?s)-d '([^']*)'`)
	envSetting = regexp.MustCompile(`(?i)(?:^|[\s"'])((?:api|brokers?|inbound|outbound|edgehub|metrics|log|console|debug)(?:__|:)[A-Za-z0-9_:]+|desired_config[A-Za-z0-9_]*)=`)
)

// codeBlock is a fenced block of a Markdown page.
type codeBlock struct{ lang, text string }

func codeBlocks(md string) []codeBlock {
	var out []codeBlock
	for {
		m := fence.FindStringSubmatchIndex(md)
		if m == nil {
			return out
		}
		rest := md[m[1]:]
		end := strings.Index(rest, "\n```")
		if end < 0 {
			return out
		}
		out = append(out, codeBlock{lang: md[m[2]:m[3]], text: rest[:end+1]})
		md = rest[end+4:]
	}
}

func (e *examples) block(t *testing.T, where string, b codeBlock) {
	switch b.lang {
	case "json":
		e.json(t, where, b.text)
	case "sh", "bash", "":
		for _, m := range curlData.FindAllStringSubmatch(b.text, -1) {
			e.json(t, where, m[1])
		}
		e.env(t, where, b.text)
	}
}

// json checks a JSON text, or a fragment of an object (members without
// their braces).
func (e *examples) json(t *testing.T, where, text string) {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		if json.Unmarshal([]byte("{"+text+"}"), &v) != nil {
			return // not JSON: an event stream, a log line, …
		}
	}
	e.walk(t, where, v)
}

// walk finds the bodies in v and checks each; it looks inside what it
// does not recognise, JSON held in strings included.
func (e *examples) walk(t *testing.T, where string, v any) {
	switch v := v.(type) {
	case string:
		if s := strings.TrimSpace(v); strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
			e.json(t, where, s)
		}
		return
	case []any:
		for _, x := range v {
			e.walk(t, where, x)
		}
		return
	case map[string]any:
		if e.body(t, where, v) {
			return
		}
		if env, ok := member(v, "Env").([]any); ok {
			for _, s := range env {
				if s, ok := s.(string); ok {
					e.env(t, where, s)
				}
			}
		}
		for _, x := range v {
			e.walk(t, where, x)
		}
	}
}

// body checks v if it is a body, and reports whether it was.
func (e *examples) body(t *testing.T, where string, v map[string]any) bool {
	props, _ := member(v, "properties").(map[string]any)
	hook := map[string]any{"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": "https://h/x"}}
	switch {
	case member(v, "errors") != nil:
		return true // a module twin's reported properties, not a declaration
	case props != nil && (member(props, "destination") != nil || member(props, "deliveryConfiguration") != nil):
		topic, _ := member(props, "topic").(string)
		name, _ := member(v, "name").(string)
		_, err := resource.DecodeSubscription(mustMarshal(t, v), or(topic, "t"), or(name, "s"))
		e.check(t, where, v, err)
	case props != nil && member(props, "inputSchema") != nil:
		name, _ := member(v, "name").(string)
		_, err := resource.DecodeTopic(mustMarshal(t, v), or(name, "t"))
		e.check(t, where, v, err)
	case member(v, "topics") != nil || member(v, "eventSubscriptions") != nil:
		e.declaration(t, where, v)
	case member(v, "endpointType") != nil && member(v, "properties") != nil:
		_, err := resource.DecodeSubscriptionProperties(mustMarshal(t, map[string]any{"destination": v}), "properties", "t", "s")
		e.check(t, where, v, err)
	case member(v, "destination") != nil || member(v, "retryPolicy") != nil || member(v, "filter") != nil ||
		member(v, "deadLetterDestination") != nil || member(v, "persistencePolicy") != nil:
		p := map[string]any{"destination": hook}
		for k, x := range v {
			p[k] = x
		}
		_, err := resource.DecodeSubscriptionProperties(mustMarshal(t, p), "properties", "t", "s")
		e.check(t, where, v, err)
	case member(v, "deliveryAttributeMappings") != nil || member(v, "maxEventsPerBatch") != nil:
		p := map[string]any{"endpointUrl": "https://h/x"}
		for k, x := range v {
			p[k] = x
		}
		d := map[string]any{"destination": map[string]any{"endpointType": "WebHook", "properties": p}}
		_, err := resource.DecodeSubscriptionProperties(mustMarshal(t, d), "properties", "t", "s")
		e.check(t, where, v, err)
	default:
		return false
	}
	return true
}

// declaration checks the entries of a declared configuration.
func (e *examples) declaration(t *testing.T, where string, v map[string]any) {
	for name, entry := range entries(member(v, "topics")) {
		_, err := resource.DecodeTopicProperties(mustMarshal(t, entry), "properties", name)
		e.check(t, where, entry, err)
	}
	for name, entry := range entries(member(v, "eventSubscriptions")) {
		_, err := resource.DecodeSubscriptionProperties(mustMarshal(t, entry), "properties", "", name)
		e.check(t, where, entry, err)
	}
}

// entries returns the non-null entries of a declaration's map, which may
// be JSON text (a module twin's way).
func entries(v any) map[string]any {
	if s, ok := v.(string); ok {
		_ = json.Unmarshal([]byte(s), &v)
	}
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, x := range m {
		if x != nil && !strings.HasPrefix(k, "$") {
			out[k] = x
		}
	}
	return out
}

// check fails t when err refuses a member of the example v.
func (e *examples) check(t *testing.T, where string, v any, err error) {
	t.Helper()
	e.bodies++
	switch eventgrid.ErrorCode(err) {
	case eventgrid.EUnknownMember, eventgrid.ENotSupported, eventgrid.EInvalidJSON:
		t.Errorf("%s: an example is refused: %s\n%s", where, eventgrid.ErrorMessage(err), mustMarshal(t, v))
	}
}

// env checks that every broker key text sets is a known one.
func (e *examples) env(t *testing.T, where, text string) {
	t.Helper()
	var environ []string
	for _, m := range envSetting.FindAllStringSubmatch(text, -1) {
		environ = append(environ, m[1]+"=x")
	}
	e.keys += len(environ)
	for _, u := range config.UnknownKeys(environ) {
		t.Errorf("%s: an example sets %s, which is no key (nearest: %s)", where, u.Name, u.Nearest)
	}
}

// member returns the member of m named name, ignoring case.
func member(m map[string]any, name string) any {
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
