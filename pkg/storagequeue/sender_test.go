package storagequeue_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/storagequeue"
	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
)

// sub returns a StorageQueue subscription; a ttl of 0 leaves the time to
// live unset.
func sub(connStr, queue string, ttl int) *eventgrid.EventSubscription {
	s := &eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s", EventDeliverySchema: eventgrid.EventGridSchema,
		Destination: eventgrid.Destination{EndpointType: eventgrid.StorageQueue, ConnectionString: connStr, QueueName: queue}}
	if ttl != 0 {
		s.Destination.QueueMessageTTLSeconds = &ttl
	}
	return s
}

func TestSender(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	ctx := context.Background()
	q, err := azqueue.NewQueueClientFromConnectionString(connStr, "events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s := storagequeue.New()
	bodies := [][]byte{[]byte(`{"id":"1","data":{"a":1}}`), []byte(`{"id":"2","data":"ü"}`)}
	if err := s.Send(ctx, &push.Batch{Subscription: sub(connStr, "events", -1), Bodies: bodies}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	resp, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(10))})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Messages) != 2 {
		t.Fatalf("%d messages, want one per event", len(resp.Messages))
	}
	for i, m := range resp.Messages {
		got, err := base64.StdEncoding.DecodeString(*m.MessageText)
		if err != nil || string(got) != string(bodies[i]) {
			t.Errorf("message %d decodes to %q (%v), want the event %s", i, got, err, bodies[i])
		}
		if m.ExpirationTime.Year() < 9000 {
			t.Errorf("message %d expires %v; -1 means never", i, m.ExpirationTime)
		}
	}

	t.Run("MissingQueue", func(t *testing.T) {
		err := s.Send(ctx, &push.Batch{Subscription: sub(connStr, "nosuchqueue", 0), Bodies: bodies[:1]})
		if r := push.Classify(err); r.StatusCode != 404 || !strings.Contains(err.Error(), "QueueNotFound") {
			t.Errorf("missing queue: %v (%+v)", err, r)
		}
	})
	// Keys in any case, spaces and empty segments pass at PUT; the SDK,
	// which reads keys in their documented case only, must be given the
	// string in that form.
	t.Run("KeysInAnyCase", func(t *testing.T) {
		loose := strings.NewReplacer("AccountName=", " accountname = ", "AccountKey=", "ACCOUNTKEY=", "QueueEndpoint=", ";queueendpoint=").Replace(connStr)
		other := &eventgrid.EventSubscription{UID: 3, Name: "l", Destination: sub(loose, "events", 0).Destination}
		if err := s.Send(ctx, &push.Batch{Subscription: other, Bodies: bodies[:1]}); err != nil {
			t.Errorf("Send with %q: %v", loose, err)
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		wrong := "AAAA" + azurite.Key[4:]
		other := &eventgrid.EventSubscription{UID: 2, Name: "w", Destination: sub(az.ConnectionString(wrong), "events", 0).Destination}
		err := s.Send(ctx, &push.Batch{Subscription: other, Bodies: bodies[:1]})
		if r := push.Classify(err); r.StatusCode != 403 || strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("wrong key: %v (%+v)", err, r)
		}
	})
}

func ptr[T any](v T) *T { return &v }
