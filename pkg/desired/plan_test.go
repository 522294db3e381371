package desired

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// owning returns the state of a source that applied doc as it is.
func owning(t *testing.T, doc string) *state {
	t.Helper()
	st := newState()
	d := mustDeclare(t, doc)
	for _, dt := range d.topics {
		if !dt.null && dt.err == nil {
			st.topics[strings.ToLower(dt.name)] = ownedTopic{name: dt.name, raw: dt.raw}
		}
	}
	for _, ds := range d.subs {
		if !ds.null && ds.err == nil {
			st.subs[subKey(ds.sub.Topic, ds.name)] = ownedSub{topic: ds.sub.Topic, name: ds.name, raw: ds.raw}
		}
	}
	return st
}

func mustDeclare(t *testing.T, doc string) declaration {
	t.Helper()
	topics, subs, err := parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse(%s): %v", doc, err)
	}
	return declare(topics, subs, File("/d.json"))
}

// describe writes a plan as lines: "3 moveOut t1/s after 2", "skip topic
// t: <message>", "unchanged 2".
func describe(p plan) []string {
	var out []string
	for i, o := range p.ops {
		line := fmt.Sprintf("%d %s ", i, o.kind)
		if o.kind == putTopic || o.kind == releaseTopic {
			line += o.name
		} else {
			line += o.topic + "/" + o.name
		}
		for _, a := range o.after {
			line += fmt.Sprintf(" after %d", a)
		}
		out = append(out, line)
	}
	for _, s := range p.skips {
		what := "sub"
		if s.topic {
			what = "topic"
		}
		out = append(out, fmt.Sprintf("skip %s %s: %v", what, s.name, s.err))
	}
	if p.unchanged > 0 {
		out = append(out, fmt.Sprintf("unchanged %d", p.unchanged))
	}
	return out
}

// TestPlan: declared vs owned in, steps out.
func TestPlan(t *testing.T) {
	hook := func(topic, path string) string {
		return `{"topic": "` + topic + `", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://h/` + path + `"}}}`
	}
	decl := func(topics []string, subs map[string]string) string {
		var ts, ss []string
		for _, n := range topics {
			ts = append(ts, fmt.Sprintf("%q: {}", n))
		}
		for n, v := range subs {
			ss = append(ss, fmt.Sprintf("%q: %s", n, v))
		}
		return `{"topics": {` + strings.Join(ts, ",") + `}, "eventSubscriptions": {` + strings.Join(ss, ",") + `}}`
	}
	base := decl([]string{"t1"}, map[string]string{"s": hook("t1", "s")})
	tests := []struct {
		name     string
		owned    string
		declared string
		want     []string
	}{
		{"nothing applied yet", `{}`, base, []string{"0 putTopic t1", "1 putSub t1/s"}},
		{"the same again", base, base, []string{"unchanged 2"}},
		{"reformatted", base, strings.ReplaceAll(base, " ", "\n "), []string{"unchanged 2"}},
		{"a subscription changed", base, decl([]string{"t1"}, map[string]string{"s": hook("t1", "other")}),
			[]string{"0 putSub t1/s", "unchanged 1"}},
		{"a subscription removed, another added: the removal first", base, decl([]string{"t1"}, map[string]string{"n": hook("t1", "n")}),
			[]string{"0 deleteSub t1/s", "1 putSub t1/n", "unchanged 1"}},
		{"everything removed", base, `{}`, []string{"0 deleteSub t1/s", "1 releaseTopic t1"}},
		{"entries set to null are not declared", base, `{"topics": {"t1": null}, "eventSubscriptions": {"s": null}}`,
			[]string{"0 deleteSub t1/s", "1 releaseTopic t1"}},
		{"a move puts the new place, then deletes the old", decl([]string{"t1", "t2"}, map[string]string{"s": hook("t1", "s")}),
			decl([]string{"t1", "t2"}, map[string]string{"s": hook("t2", "s")}),
			[]string{"0 putSub t2/s", "1 moveOut t1/s after 0", "unchanged 2"}},
		{"a move out of a topic no longer declared: the topic goes after the move", base,
			decl([]string{"t2"}, map[string]string{"s": hook("t2", "s")}),
			[]string{"0 putTopic t2", "1 putSub t2/s", "2 moveOut t1/s after 1", "3 releaseTopic t1 after 2"}},
		{"a topic no longer declared stays while a subscription on it is", base,
			decl(nil, map[string]string{"s": hook("t1", "s")}),
			[]string{`skip topic t1: eventgrid error: code=BadRequest message=The topic "t1" is no longer declared but stays, with its events, while it holds event subscription(s) "s" that are still declared; remove or move them too.`, "unchanged 1"}},
		{"a broken entry keeps its last good version, and its topic", base,
			decl(nil, map[string]string{"s": `{"topic": "t1", "destination": 5}`}),
			[]string{"skip sub s: eventgrid error: code=InvalidDestination message=destination must be a JSON object.",
				`skip topic t1: eventgrid error: code=BadRequest message=The topic "t1" is no longer declared but stays, with its events, while it holds event subscription(s) "s" that are still declared; remove or move them too.`}},
		{"a name declared twice", `{}`, `{"topics": {"a": {}, "A": {}}}`,
			[]string{"0 putTopic a", `skip topic A: eventgrid error: code=InvalidName message=The topic "A" is declared more than once; names are case-insensitive.`}},
		{"an entry that is not an object", `{}`, `{"topics": {"a": 5}}`,
			[]string{"skip topic a: eventgrid error: code=BadRequest message=The declaration must be a JSON object (or a string holding one)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describe(makePlan(mustDeclare(t, tt.declared), owning(t, tt.owned)))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("left behind by a move that half failed", func(t *testing.T) {
		// s is applied at t1 and t2 (the delete of t1/s failed last time);
		// t2/s is as declared, so only the old place goes.
		st := owning(t, base)
		for k, v := range owning(t, decl([]string{"t2"}, map[string]string{"s": hook("t2", "s")})).subs {
			st.subs[k] = v
		}
		st.topics["t2"] = ownedTopic{name: "t2", raw: []byte(`{}`)}
		got := describe(makePlan(mustDeclare(t, decl([]string{"t1", "t2"}, map[string]string{"s": hook("t2", "s")})), st))
		want := []string{"0 moveOut t1/s", "unchanged 3"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("plan\n got %q\nwant %q", got, want)
		}
	})
}
