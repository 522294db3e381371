package auth_test

import (
	"net/http/httptest"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/auth"
)

// "Authorization: SharedAccessKey <key>" is how the Event Grid namespace
// SDKs present a key; it is checked like aeg-sas-key.
func TestAuthenticate_SharedAccessKeyHeader(t *testing.T) {
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Key2: key2})
	tests := []struct {
		name, header string
		wantOK       bool
		reason       string
	}{
		{"Key1", "SharedAccessKey " + key1, true, "sas key"},
		{"Key2SchemeCase", "sharedaccesskey  " + key2, true, "sas key"},
		{"Wrong", "SharedAccessKey bm90IHRoZSBrZXk=", false, "sas key mismatch"},
		{"NoKey", "SharedAccessKey", false, "no sas key or token"},
		{"OtherScheme", "Bearer " + key1, false, "no sas key or token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", publishURL, nil)
			r.Header.Set("Authorization", tt.header)
			reason, err := a.Authenticate(r)
			if (err == nil) != tt.wantOK || reason != tt.reason {
				t.Fatalf("Authenticate = %q, %v; want success %v, reason %q", reason, err, tt.wantOK, tt.reason)
			}
			assertNoSecret(t, reason, key1, key2)
		})
	}
}
