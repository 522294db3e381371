package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestConcurrentPublishAndManage publishes from several clients while
// subscriptions come and go (meant for -race): every publish succeeds and
// every event handed to the publisher went to the one subscription that
// never changes.
func TestConcurrentPublishAndManage(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	ts.MustPutSubscription(t, "t", "stable", webhook(nil))
	body := brokertest.MustJSON(t, []any{egEvent("1"), egEvent("2")})
	hook := brokertest.MustJSON(t, webhook(nil))

	post := func(method, path string, b []byte) error {
		req, err := http.NewRequest(method, ts.url(path, edgeVersion), bytes.NewReader(b))
		if err != nil {
			return err
		}
		if b != nil {
			req.Header.Set("Content-Type", ctJSON)
		}
		resp, err := ts.Client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		if resp.StatusCode == http.StatusNotFound && method != http.MethodDelete {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return nil
	}
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				if err := post(http.MethodPost, "/topics/t/events", body); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for w := range 2 {
		wg.Go(func() {
			for i := range 25 {
				name := fmt.Sprintf("s%d", (w+i)%3)
				method, b := http.MethodPut, hook
				if i%2 == 1 {
					method, b = http.MethodDelete, nil
				}
				if err := post(method, "/topics/t/eventSubscriptions/"+name, b); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	calls := ts.Recorder.Calls()
	if len(calls) != 100 {
		t.Errorf("publisher called %d times, want 100", len(calls))
	}
	for _, c := range calls {
		for _, d := range c.Deliveries {
			stable := slices.ContainsFunc(d.Subscriptions, func(s *eventgrid.EventSubscription) bool { return s.Name == "stable" })
			if !stable || len(d.Subscriptions) > 4 {
				t.Fatalf("event %s went to %d subscriptions without the stable one", d.Event.ID, len(d.Subscriptions))
			}
		}
	}
}
