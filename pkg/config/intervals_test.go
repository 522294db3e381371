package config_test

import (
	"slices"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestIntervals_Decode(t *testing.T) {
	tests := []struct {
		in   string
		want config.Intervals // nil: an error is expected
	}{
		{"00:01:00,00:10:00", config.Intervals{time.Minute, 10 * time.Minute}},
		{"1m,10m", config.Intervals{time.Minute, 10 * time.Minute}},
		{"500ms,1h30m", config.Intervals{500 * time.Millisecond, 90 * time.Minute}},
		{" 00:01:00 , 10m ", config.Intervals{time.Minute, 10 * time.Minute}},
		{"1.00:00:00,2.12:30:00", config.Intervals{24 * time.Hour, 60*time.Hour + 30*time.Minute}},
		{"00:00:01.5,00:00:00.0000001", config.Intervals{1500 * time.Millisecond, 100 * time.Nanosecond}},
		{"0:1:0,1:2:3", config.Intervals{time.Minute, time.Hour + 2*time.Minute + 3*time.Second}},
		{"00:05,10s", config.Intervals{5 * time.Minute, 10 * time.Second}}, // hh:mm
		{"", nil},
		{"00:01:00", nil},
		{"1m,2m,3m", nil},
		{"1m,", nil},
		{"0s,1m", nil},
		{"00:00:00,1m", nil},
		{"-1m,1m", nil},
		{"-00:01:00,1m", nil},
		{"1,2", nil},
		{"abc,1m", nil},
		{"24:00:00,1m", nil},
		{"00:60:00,1m", nil},
		{"00:00:60,1m", nil},
		{"00:00:01.1234567891,1m", nil},
		{"1.2.03:00:00,1m", nil},
		{"00:01:00:00,1m", nil},
		{"000:01:00,1m", nil},
		{"00:+1:00,1m", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := config.Intervals{time.Second, time.Second}
			err := got.Decode(tt.in)
			switch {
			case tt.want == nil && err == nil:
				t.Fatalf("Decode(%q) = %v, want an error", tt.in, got)
			case tt.want == nil && !slices.Equal(got, config.Intervals{time.Second, time.Second}):
				t.Fatalf("failed Decode changed the value to %v", got)
			case tt.want != nil && err != nil:
				t.Fatalf("Decode(%q): %v", tt.in, err)
			case tt.want != nil && !slices.Equal(got, tt.want):
				t.Fatalf("Decode(%q) = %v, want %v", tt.in, []time.Duration(got), []time.Duration(tt.want))
			}
		})
	}
}

func TestIntervals_String(t *testing.T) {
	tests := []struct {
		in   config.Intervals
		want string
	}{
		{config.Intervals{time.Minute, 10 * time.Minute}, "00:01:00,00:10:00"},
		{config.Intervals{1500 * time.Millisecond, 100 * time.Nanosecond}, "00:00:01.5,00:00:00.0000001"},
		{config.Intervals{36 * time.Hour, 25*time.Hour + time.Nanosecond}, "1.12:00:00,1.01:00:00.000000001"},
		{config.Intervals{-time.Second}, "-00:00:01"},
		{nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := tt.in.String()
			if got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			if len(tt.in) != 2 || tt.in[0] <= 0 {
				return
			}
			var back config.Intervals
			if err := back.Decode(got); err != nil || !slices.Equal(back, tt.in) {
				t.Fatalf("Decode(String()) = %v, %v; want %v", back, err, tt.in)
			}
		})
	}
}

func TestEnums_Decode(t *testing.T) {
	var p config.TLSPolicy
	if err := p.Decode("DISABLED"); err != nil || p != config.TLSDisabled {
		t.Fatalf("TLSPolicy.Decode = %q, %v", p, err)
	}
	var s config.CertSource
	if err := s.Decode("file"); err != nil || s != config.CertSourceFile {
		t.Fatalf("CertSource.Decode = %q, %v", s, err)
	}
	var r config.ReporterType
	if err := r.Decode("CONSOLE"); err != nil || r != config.ReporterConsole {
		t.Fatalf("ReporterType.Decode = %q, %v", r, err)
	}
	if err := r.Decode("azureMonitor"); err == nil || err.Error() != "accepted values are none, prometheus, console" {
		t.Fatalf("ReporterType.Decode(azureMonitor) error = %v", err)
	}
}
