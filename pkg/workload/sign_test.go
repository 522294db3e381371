package workload_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"net/http"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// The real security daemon cannot run in tests: the stand-in signs with a
// key the test knows, after the daemon's request checks.
func TestClient_Sign(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	c := MustClient(t, ws)
	data := []byte("hub%2Fdevices%2Fd\n1700000000")
	for _, keyID := range []string{"primary", "secondary"} {
		digest, err := c.Sign(t.Context(), keyID, data)
		if err != nil {
			t.Fatalf("Sign(%s): %v", keyID, err)
		}
		mac := hmac.New(sha256.New, testpki.ModuleKey(keyID))
		mac.Write(data)
		if !hmac.Equal(digest, mac.Sum(nil)) {
			t.Fatalf("Sign(%s): digest does not match HMAC-SHA256 with the module's key", keyID)
		}
	}
	if got := ws.Signed(); len(got) != 2 || string(got[0]) != string(data) {
		t.Fatalf("signed %q", got)
	}

	var we *workload.Error
	if _, err := c.Sign(t.Context(), "tertiary", data); !errors.As(err, &we) || we.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown key: %v", err)
	}
	ws.SetFailure(testpki.EndpointSign, http.StatusInternalServerError, "hsm away")
	if _, err := c.Sign(t.Context(), "primary", data); !errors.As(err, &we) || we.StatusCode != 500 || we.Message != "hsm away" {
		t.Fatalf("failure: %v", err)
	}
	ws.SetFailure(testpki.EndpointSign, 0, "")
	other, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, "42")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Sign(t.Context(), "primary", data); !errors.As(err, &we) || we.StatusCode != http.StatusNotFound {
		t.Fatalf("wrong generation: %v", err)
	}
	if calls := ws.Calls(testpki.EndpointSign); calls != 5 {
		t.Fatalf("sign calls = %d, want 5", calls)
	}
}
