package config_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestLoad_MaxIncludedEventTypes(t *testing.T) {
	MustCleanEnv(t)
	if got := MustLoad(t).MaxIncludedEventTypes; got != 1000 {
		t.Fatalf("default MaxIncludedEventTypes = %d, want 1000", got)
	}
	t.Setenv("api__filterLimits__maxIncludedEventTypes", "50")
	if got := MustLoad(t).MaxIncludedEventTypes; got != 50 {
		t.Fatalf("MaxIncludedEventTypes = %d, want 50", got)
	}
	t.Setenv("api__filterLimits__maxIncludedEventTypes", "0")
	_, err := config.Load()
	if err == nil || !strings.Contains(err.Error(), "api__filterLimits__maxIncludedEventTypes") {
		t.Fatalf("Load with 0 = %v, want an error naming the key", err)
	}
}
