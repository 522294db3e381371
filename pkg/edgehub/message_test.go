package edgehub_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/edgehub/mqtttopic"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

func TestTopic(t *testing.T) {
	tests := []struct {
		output string
		props  []string
		want   string
	}{
		{"sampleSub4", nil, "devices/dev1/modules/eventgridmodule/messages/events/%24.on=sampleSub4&%24.ct=application%2Fjson&%24.ce=utf-8/"},
		{"out put~é", []string{"x-device", "a&b=c", "n", "1.5"},
			"devices/dev1/modules/eventgridmodule/messages/events/%24.on=out%20put%7E%C3%A9&%24.ct=application%2Fjson&%24.ce=utf-8&x-device=a%26b%3Dc&n=1.5/"},
		{"a b", []string{"p+q #1", "v\x00 +#"},
			"devices/dev1/modules/eventgridmodule/messages/events/%24.on=a%20b&%24.ct=application%2Fjson&%24.ce=utf-8&p%2Bq%20%231=v%00%20%2B%23/"},
		{"(a)*!", nil, "devices/dev1/modules/eventgridmodule/messages/events/%24.on=(a)*!&%24.ct=application%2Fjson&%24.ce=utf-8/"},
	}
	for _, tt := range tests {
		if got := mqtttopic.ModuleOutput("dev1", "eventgridmodule", tt.output, tt.props...); got != tt.want {
			t.Errorf("Topic(%q, %q)\n got %s\nwant %s", tt.output, tt.props, got, tt.want)
		}
	}
}

// The real security daemon cannot run here: the workload stand-in signs with
// a key the test knows, so the test can check the token edgeHub would.
func TestSASToken(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	wl, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.Unix(1893456000, 0)
	tok, err := edgehub.SASToken(t.Context(), wl, testpki.WorkloadHubName, testpki.WorkloadDeviceID, testpki.WorkloadModuleID, expiry)
	if err != nil {
		t.Fatal(err)
	}
	wantSR := "testhub.azure-devices.net%2Fdevices%2Fedgedevice%2Fmodules%2Feventgridmodule"
	if tok != expectedToken(wantSR, "1893456000") {
		t.Fatalf("token %s", tok)
	}
	if got := ws.Signed(); len(got) != 1 || string(got[0]) != wantSR+"\n1893456000" {
		t.Fatalf("signed %q", got)
	}
}

// expectedToken makes the token the way edgeHub checks it, with the module
// key the stand-in signs with.
func expectedToken(sr, se string) string {
	mac := hmac.New(sha256.New, testpki.ModuleKey("primary"))
	mac.Write([]byte(sr + "\n" + se))
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	sig = strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(sig)
	return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se
}

func TestSASTokenDecodes(t *testing.T) {
	// What edgeHub does first with the token: split and URL-decode.
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	wl, _ := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	tok, err := edgehub.SASToken(t.Context(), wl, "h.example", "d", "m", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(tok, "SharedAccessSignature "))
	if err != nil || q.Get("sr") != "h.example/devices/d/modules/m" || q.Get("sig") == "" || q.Get("se") == "" || q.Has("skn") {
		t.Fatalf("token %s: %v %v", tok, q, err)
	}
}

func TestCheckTopic(t *testing.T) {
	ok := mqtttopic.ModuleOutput("dev1", "m", "out put", "a+b", "#\x00")
	if err := mqtttopic.Check(ok); err != nil {
		t.Errorf("CheckTopic(%q) = %v", ok, err)
	}
	for _, bad := range []string{"a+b", "a/#", "a\x00b", "\xff", strings.Repeat("a", mqtttopic.MaxLength+1)} {
		if mqtttopic.Check(bad) == nil {
			t.Errorf("CheckTopic(%.20q) = nil, want an error", bad)
		}
	}
}
