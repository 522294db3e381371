package tests_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
)

// TestStorageQueue_PartialBatch: a proxy in front of Azurite fails the
// third enqueue of a batch; the retry sends only the events not enqueued,
// so every event is in the queue exactly once.
func TestStorageQueue_PartialBatch(t *testing.T) {
	az := azurite.Start(t)
	q, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(azurite.Key), "events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(az.QueueURL())
	target.Path = ""
	rp := httputil.NewSingleHostReverseProxy(target)
	var enqueues atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/events/messages") && enqueues.Add(1) == 3 {
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	connStr := "DefaultEndpointsProtocol=http;AccountName=" + azurite.Account + ";AccountKey=" + azurite.Key +
		";QueueEndpoint=" + proxy.URL + "/" + azurite.Account + ";"

	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "sq", map[string]any{"destination": storageQueueDest(connStr, "events", "maxEventsPerBatch", 10)})
	publish(t, b.URL, "t", egEvents("p", 6))
	ids := map[string]int{}
	eventually(t, 20*time.Second, func() error {
		queueIDs(t, q, ids)
		if len(ids) != 6 {
			return fmt.Errorf("queue holds %v", ids)
		}
		return nil
	})
	// Let any duplicate arrive before counting.
	eventually(t, 10*time.Second, func() error {
		if n := enqueues.Load(); n < 7 {
			return fmt.Errorf("%d enqueue requests so far", n)
		}
		return nil
	})
	queueIDs(t, q, ids)
	for id, n := range ids {
		if n != 1 {
			t.Errorf("event %s enqueued %d times", id, n)
		}
	}
	t.Logf("%d enqueue requests for 6 events, one refused; queue holds %v", enqueues.Load(), ids)
	if n := enqueues.Load(); n != 7 {
		t.Errorf("%d enqueue requests, want 7: six events and the one refused", n)
	}
}
