package registry_test

import (
	"slices"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// topicRecorder records subscription and topic changes in one list.
type topicRecorder struct {
	mock.SubscriptionObserver
	log []string
}

func (o *topicRecorder) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	o.log = append(o.log, "delete "+sub.Topic+"/"+sub.Name)
}
func (o *topicRecorder) TopicCreated(t eventgrid.Topic) { o.log = append(o.log, "topic "+t.Name) }
func (o *topicRecorder) TopicDeleted(t eventgrid.Topic) {
	o.log = append(o.log, "topic deleted "+t.Name)
}

// TestRegistry_TopicObserver: an observer that is a TopicObserver hears of
// each topic created (not of updates) and of each topic deleted, through
// the REST API or a declaration's release, after the topic's
// subscriptions.
func TestRegistry_TopicObserver(t *testing.T) {
	obs := &topicRecorder{}
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	r := registry.New(opts, obs)
	ctx := t.Context()
	MustPutTopic(t, r, "Orders", "")
	MustPutTopic(t, r, "ORDERS", "") // an update
	MustPutSubscription(t, r, "orders", "a")
	if err := r.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	owner := eventgrid.Owner{Source: eventgrid.SourceDesiredConfig}
	if _, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "declared", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReleaseTopic(ctx, "declared", owner); err != nil {
		t.Fatal(err)
	}
	want := []string{"topic Orders", "delete Orders/a", "topic deleted Orders", "topic declared", "topic deleted declared"}
	if !slices.Equal(obs.log, want) {
		t.Errorf("calls\n got %v\nwant %v", obs.log, want)
	}
}
