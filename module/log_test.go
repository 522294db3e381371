package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestConsoleLogs(t *testing.T) {
	tests := []struct {
		format, moduleID string
		terminal, want   bool
	}{
		{"auto", "", true, true},
		{"auto", "", false, false},
		{"auto", "eventgridmodule", true, false}, // IoT Edge collects JSON
		{"json", "", true, false},
		{"console", "", false, true},
		{"console", "eventgridmodule", false, true},
	}
	for _, tt := range tests {
		cfg := config.Default()
		cfg.LogFormat, cfg.IoTEdgeModuleID = tt.format, tt.moduleID
		if got := consoleLogs(cfg, tt.terminal); got != tt.want {
			t.Errorf("format %s, module %q, terminal %v: console = %v, want %v", tt.format, tt.moduleID, tt.terminal, got, tt.want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer taken for a terminal")
	}
	var buf bytes.Buffer
	cfg := config.Default()
	l := newLogger(&buf, cfg)
	l.Info().Msg("hello")
	if !strings.HasPrefix(buf.String(), "{") {
		t.Errorf("auto format off a terminal wrote %q, want JSON", buf.String())
	}
	buf.Reset()
	cfg.LogFormat = "console"
	l = newLogger(&buf, cfg)
	l.Info().Msg("hello")
	if strings.HasPrefix(buf.String(), "{") || !strings.Contains(buf.String(), "hello") {
		t.Errorf("console format wrote %q", buf.String())
	}
}

// One warning names each misspelt key and the key it most likely meant.
func TestWarnUnknownKeys(t *testing.T) {
	var buf bytes.Buffer
	warnUnknownKeys(zerolog.New(&buf), []string{"api__port=5899", "broker__maxTopics=3", "console__x=1", "PATH=/bin"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []map[string]any{
		{"level": "warn", "key": "api__port", "nearestKey": "api__httpPort"},
		{"level": "warn", "key": "console__x"},
	} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, got[k], v)
			}
		}
		if _, has := got["nearestKey"]; has != (want["nearestKey"] != nil) {
			t.Errorf("line %d: nearestKey present = %v: %s", i, has, lines[i])
		}
	}
}
