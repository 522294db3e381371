package main

import "testing"

func TestLockTokens(t *testing.T) {
	body := []byte(`{"value":[{"brokerProperties":{"lockToken":"AbC-_1","deliveryCount":1},"event":{"data":{"bt":1}}},` +
		`{"brokerProperties":{"deliveryCount":1,"lockToken": "x2"},"event":{}}]}`)
	got, err := lockTokens(body, nil)
	if err != nil || len(got) != 2 || got[0] != "AbC-_1" || got[1] != "x2" {
		t.Fatalf("lockTokens = %q, %v; want [AbC-_1 x2]", got, err)
	}
	if got := string(ackBody(nil, got)); got != `{"lockTokens":["AbC-_1","x2"]}` {
		t.Errorf("ackBody = %s", got)
	}
	for _, bad := range []string{`{"lockToken":1}`, `{"lockToken":"a\"b"}`, `{"lockToken":"abc`} {
		if _, err := lockTokens([]byte(bad), nil); err == nil {
			t.Errorf("lockTokens(%s) took it", bad)
		}
	}
}
