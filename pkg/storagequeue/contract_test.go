package storagequeue_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/storagequeue"
	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
	"github.com/edgegrid/edgegrid/pkg/testkit/sendertest"
)

// TestSenderContract runs the contract every sender keeps against a queue
// of a real Azurite, reached through a loopback proxy that fails or hangs
// when the suite asks. Azure Storage answers no Retry-After.
func TestSenderContract(t *testing.T) {
	az := azurite.Start(t)
	s := storagequeue.New()
	var n atomic.Uint64
	sendertest.TestSender(t, sendertest.Features{Statuses: true}, func(t *testing.T) sendertest.Counterpart {
		uid := n.Add(1)
		name := fmt.Sprintf("contract-%d", uid)
		q := mustQueue(t, az.ConnectionString(azurite.Key), name)

		target, _ := url.Parse(az.QueueURL())
		target.Path = ""
		proxy := httptest.NewUnstartedServer(nil)
		t.Cleanup(proxy.Close)
		faults := sendertest.NewFaults(t, httputil.NewSingleHostReverseProxy(target))
		proxy.Config.Handler = faults
		proxy.Start()
		connStr := strings.Replace(az.ConnectionString(azurite.Key), az.QueueURL(), proxy.URL+"/"+azurite.Account, 1)

		sub := sub(connStr, name, 0)
		sub.UID, sub.Name = uid, name
		return sendertest.Counterpart{Sender: s, Subscription: sub, Received: q.received, Fail: faults.Fail, Hang: faults.Hang}
	})
}

// queue reads a queue's messages as they arrive, and keeps them.
type queue struct {
	c *azqueue.QueueClient

	mu     sync.Mutex
	bodies [][]byte
}

func mustQueue(t *testing.T, connStr, name string) *queue {
	t.Helper()
	c, err := azqueue.NewQueueClientFromConnectionString(connStr, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return &queue{c: c}
}

// received takes what the queue holds off it, and returns every event
// taken so far.
func (q *queue) received(tb testing.TB) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	ctx := context.Background()
	resp, err := q.c.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(32)), VisibilityTimeout: ptr(int32(3600))})
	if err != nil {
		tb.Fatalf("dequeue: %v", err)
	}
	for _, m := range resp.Messages {
		body, err := base64.StdEncoding.DecodeString(*m.MessageText)
		if err != nil {
			tb.Fatalf("message %q is not base64: %v", *m.MessageText, err)
		}
		q.bodies = append(q.bodies, body)
		if _, err := q.c.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
			tb.Fatalf("delete: %v", err)
		}
	}
	return append([][]byte(nil), q.bodies...)
}
