package tests_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
)

// deadLetters reads every dead letter in the container, by
// "<SUBSCRIPTION FOLDER>/<event id>".
func deadLetters(t *testing.T, connStr string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, raw := range azurite.Blobs(t, connStr, "deadletters") {
		var evs []map[string]any
		if err := json.Unmarshal(raw, &evs); err != nil {
			t.Fatalf("blob %s: %v", name, err)
		}
		folder, _, _ := strings.Cut(name, "/")
		for _, ev := range evs {
			ev["_blob"] = name
			out[folder+"/"+fmt.Sprint(ev["id"])] = ev
		}
	}
	return out
}

func deadLetterDest(connStr string) map[string]any {
	return map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{
		"blobContainerName": "deadletters", "connectionString": connStr}}
}

func TestDeadLetter_EndToEnd(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	b := startBroker(t, cloudEnv("broker__deadLetterFlushIntervalInSeconds", "1"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusBadRequest })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "dl", map[string]any{
		"destination":           webhookDest(k.URL),
		"retryPolicy":           map[string]any{"schedule": "CloudExponential"},
		"deadLetterDestination": deadLetterDest(connStr),
	})
	publish(t, b.URL, "t", egEvents("bad", 3))
	var got map[string]map[string]any
	eventually(t, 30*time.Second, func() error {
		if got = deadLetters(t, connStr); len(got) != 3 {
			return fmt.Errorf("%d of 3 dead letters in storage", len(got))
		}
		return nil
	})
	for id, ev := range got {
		if ev["deadLetterReason"] != "UndeliverableDueToHttpBadRequest" || ev["lastHttpStatusCode"] != 400.0 ||
			ev["deliveryAttempts"] != 1.0 || ev["topic"] != "t" || !strings.HasPrefix(ev["_blob"].(string), "DL/") {
			t.Errorf("dead letter %s: %v", id, ev)
		}
	}
	sub := string(mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/dl?"+apiVersion, "", nil, 200))
	if !strings.Contains(sub, `"blobContainerName":"deadletters"`) || strings.Contains(sub, azurite.Key) || strings.Contains(sub, "AccountKey") {
		t.Errorf("GET shows %s", sub)
	}
	eventually(t, 10*time.Second, func() error {
		if v, _ := mustScrape(t, b.URL).value("eventgrid_dead_letter_written_total", "subscription", "dl"); v != 3 {
			return fmt.Errorf("eventgrid_dead_letter_written_total = %v", v)
		}
		return nil
	})
	if v, _ := mustScrape(t, b.URL).value("eventgrid_subscription_dead_lettered_total", "subscription", "dl", "reason", "UndeliverableDueToHttpBadRequest"); v != 3 {
		t.Errorf("eventgrid_subscription_dead_lettered_total = %v", v)
	}
	if strings.Contains(b.Output(), azurite.Key) {
		t.Error("the account key reached the broker's log")
	}
}

func TestDeadLetter_BadDestination(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	put := func(dl any) string {
		return string(mustDo(t, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "application/json", map[string]any{
			"properties": map[string]any{"destination": webhookDest("http://127.0.0.1:1/"), "deadLetterDestination": dl}}, 400))
	}
	for _, tc := range []struct {
		dl   any
		want string
	}{
		{map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{"blobContainerName": "x1", "resourceId": "/subscriptions/…"}}, "nothing at the edge can resolve"},
		{map[string]any{"endpointType": "StorageQueue", "properties": map[string]any{}}, "must be StorageBlob"},
		{map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{"blobContainerName": "Bad_Name", "connectionString": "AccountName=a;AccountKey=" + azurite.Key}}, "blobContainerName"},
		{map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{"blobContainerName": "ok1", "connectionString": "AccountKey=" + azurite.Key}}, "has no AccountName"},
	} {
		if body := put(tc.dl); !strings.Contains(body, tc.want) || strings.Contains(body, azurite.Key) {
			t.Errorf("PUT with %v: %s; want it to say %q, without the key", tc.dl, body, tc.want)
		}
	}
}

// TestDeadLetter_Conservation: with dead-lettering on and subscribers that
// fail at random with retriable and never-retried statuses, every accepted
// (event, subscription) pair ends delivered or dead-lettered: none lost.
func TestDeadLetter_Conservation(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	b := startBroker(t, cloudEnv("broker__deadLetterFlushIntervalInSeconds", "1", "broker__exponentialScale", "0.001",
		"broker__logDeliveryFailure", "false", "broker__logEventExpiry", "false"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	const subs, n = 3, 600
	sinks := make([]*sink, subs)
	for i := range sinks {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		var mu sync.Mutex
		sinks[i] = newSink(t, func(int, *http.Request) int {
			mu.Lock()
			defer mu.Unlock()
			switch r := rng.IntN(100); {
			case r < 10:
				return []int{400, 403, 404, 413}[r%4]
			case r < 40:
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		createSubscription(t, b.URL, "t", fmt.Sprint("s", i), map[string]any{
			"destination":           webhookDest(sinks[i].URL),
			"retryPolicy":           map[string]any{"schedule": "CloudExponential", "maxDeliveryAttempts": 3},
			"deadLetterDestination": deadLetterDest(connStr),
		})
	}
	for i := range n / 10 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint(i, "-"), 10))
	}
	eventually(t, 60*time.Second, func() error {
		letters := deadLetters(t, connStr)
		for i, k := range sinks {
			dead := 0
			for key := range letters {
				if strings.HasPrefix(key, fmt.Sprint("S", i, "/")) {
					dead++
				}
			}
			if got := len(k.accepted(t)) + dead; got != n {
				return fmt.Errorf("s%d: %d delivered + %d dead-lettered of %d", i, len(k.accepted(t)), dead, n)
			}
		}
		return nil
	})
}
