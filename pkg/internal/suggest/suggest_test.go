package suggest_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/internal/suggest"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"subjectBeginWith", "subjectBeginsWith", 1},
		{"SUBJECTBEGINSWITH", "subjectBeginsWith", 0},
		{"retryPolicyy", "retryPolicy", 1},
		{"inputSchmea", "inputSchema", 1}, // a swap is one edit
		{"kitten", "sitting", 3},
		{"api__port", "api__httpPort", 4},
		{"ĳssel", "ĲSSEL", 0},
	}
	for _, tt := range tests {
		if got := suggest.Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := suggest.Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClose(t *testing.T) {
	known := []string{"includedEventTypes", "subjectBeginsWith", "subjectEndsWith", "isSubjectCaseSensitive", "advancedFilters", "key", "value", "values"}
	tests := []struct{ name, want string }{
		{"subjectBeginWith", "subjectBeginsWith"},
		{"includedEventType", "includedEventTypes"},
		{"SubjectEndWith", "subjectEndsWith"},
		{"advanceFilter", "advancedFilters"},
		{"vale", "value"},
		{"keys", "key"},
		{"subjectBeginsWith", ""}, // known, not a misspelling
		{"colour", ""},
		{"k", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest.Close(tt.name, known); got != tt.want {
			t.Errorf("Close(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := suggest.Close("x", nil); got != "" {
		t.Errorf("Close with no candidates = %q", got)
	}
}

func TestNearest(t *testing.T) {
	got, d := suggest.Nearest("api__port", []string{"api__httpsPort", "api__httpPort", "log__level"})
	if got != "api__httpPort" || d != 4 {
		t.Errorf("Nearest = %q, %d; want api__httpPort, 4", got, d)
	}
	if got, d := suggest.Nearest("x", nil); got != "" || d != -1 {
		t.Errorf("Nearest with no candidates = %q, %d", got, d)
	}
}
