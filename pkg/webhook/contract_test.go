package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/sendertest"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// arrays records the events of the JSON arrays it is sent, and answers 200.
type arrays struct {
	mu     sync.Mutex
	events [][]byte
}

func (a *arrays) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var evs []json.RawMessage
	if err := json.Unmarshal(body, &evs); err != nil {
		http.Error(w, "not a JSON array", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	for _, ev := range evs {
		a.events = append(a.events, ev)
	}
	a.mu.Unlock()
}

func (a *arrays) received(testing.TB) [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]byte(nil), a.events...)
}

// TestSenderContract runs the contract every sender keeps against a real
// HTTP server on a loopback port.
func TestSenderContract(t *testing.T) {
	s := webhook.New(webhook.Options{})
	sendertest.TestSender(t, sendertest.Features{Statuses: true, RetryAfter: true}, func(t *testing.T) sendertest.Counterpart {
		rec := &arrays{}
		srv := httptest.NewUnstartedServer(nil)
		t.Cleanup(srv.Close)
		faults := sendertest.NewFaults(t, rec)
		srv.Config.Handler = faults
		srv.Start()
		return sendertest.Counterpart{
			Sender:       s,
			Subscription: webhookSub(srv.URL+"/api/events?code=secret", eventgrid.EventGridSchema),
			Received:     rec.received,
			Fail:         faults.Fail,
			Hang:         faults.Hang,
		}
	})
}
