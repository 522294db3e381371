package registry_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

var (
	fileOwner = eventgrid.Owner{Source: eventgrid.SourceDesiredConfigFile, File: "/etc/edgegrid/desired.json"}
	twinOwner = eventgrid.Owner{Source: eventgrid.SourceModuleTwin}
)

func ownedHook(topic, name string, o eventgrid.Owner) eventgrid.EventSubscription {
	s := hook(topic, name)
	s.Owner = o
	return s
}

// mustConflict fails tb unless err is EConflict with each of parts in its
// message.
func mustConflict(tb testing.TB, err error, parts ...string) {
	tb.Helper()
	mustCode(tb, err, eventgrid.EConflict)
	for _, p := range parts {
		if msg := eventgrid.ErrorMessage(err); !strings.Contains(msg, p) {
			tb.Errorf("message %q lacks %q", msg, p)
		}
	}
}

// TestOwnership: what a declaration manages, the REST API can neither
// change nor delete; what the API made, a declaration never takes over;
// two sources cannot declare the same resource. Each refusal names where
// the resource is declared and how to change it.
func TestOwnership(t *testing.T) {
	ctx := t.Context()
	r, _ := MustNew(t, nil)
	if _, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "declared", Owner: fileOwner}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.PutSubscription(ctx, ownedHook("declared", "mine", fileOwner)); err != nil {
		t.Fatal(err)
	}
	MustPutTopic(t, r, "api", eventgrid.EventGridSchema)
	MustPutSubscription(t, r, "api", "by-api")

	t.Run("the API cannot change or delete a declared resource", func(t *testing.T) {
		where := []string{"desired_config_file /etc/edgegrid/desired.json", "edit that file"}
		_, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "DECLARED"})
		mustConflict(t, err, append(where, `Topic "declared"`)...)
		mustConflict(t, r.DeleteTopic(ctx, "declared"), where...)
		_, _, err = r.PutSubscription(ctx, hook("declared", "MINE"))
		mustConflict(t, err, append(where, `Event subscription "mine" of topic "declared"`)...)
		mustConflict(t, r.DeleteSubscription(ctx, "declared", "mine"), where...)
	})
	t.Run("the API can add its own subscription to a declared topic", func(t *testing.T) {
		MustPutSubscription(t, r, "declared", "by-api")
		if err := r.DeleteSubscription(ctx, "declared", "by-api"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a declaration does not take over what the API made", func(t *testing.T) {
		_, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "api", Owner: fileOwner})
		mustConflict(t, err, "created over the REST API")
		_, _, err = r.PutSubscription(ctx, ownedHook("api", "by-api", fileOwner))
		mustConflict(t, err, "created over the REST API")
		mustConflict(t, r.DeleteOwnedSubscription(ctx, "api", "by-api", fileOwner), "created over the REST API")
		if _, err := r.ReleaseTopic(ctx, "api", fileOwner); eventgrid.ErrorCode(err) != eventgrid.EConflict {
			t.Errorf("ReleaseTopic of the API's topic: %v", err)
		}
	})
	t.Run("two sources cannot declare the same resource", func(t *testing.T) {
		_, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "declared", Owner: twinOwner})
		mustConflict(t, err, "declared in desired_config_file /etc/edgegrid/desired.json already")
		_, _, err = r.PutSubscription(ctx, ownedHook("declared", "mine", twinOwner))
		mustConflict(t, err, "declare it in one place only")
	})
	t.Run("a topic holding a declared subscription is not the API's to delete", func(t *testing.T) {
		if _, _, err := r.PutSubscription(ctx, ownedHook("api", "twin-sub", twinOwner)); err != nil {
			t.Fatal(err)
		}
		mustConflict(t, r.DeleteTopic(ctx, "api"), `Topic "api" cannot be deleted`, "module twin's desired properties", "IoT Hub")
		if err := r.DeleteOwnedSubscription(ctx, "api", "twin-sub", twinOwner); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the owner changes and deletes", func(t *testing.T) {
		if _, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "declared", InputSchema: eventgrid.EventGridSchema, Owner: fileOwner}); err != nil {
			t.Fatal(err)
		}
		s, created, err := r.PutSubscription(ctx, ownedHook("declared", "mine", fileOwner))
		if err != nil || created || s.Owner != fileOwner {
			t.Fatalf("update by the owner: %+v created %v, %v", s, created, err)
		}
		if err := r.DeleteOwnedSubscription(ctx, "declared", "mine", fileOwner); err != nil {
			t.Fatal(err)
		}
	})
}

// TestReleaseTopic: a topic its source stops declaring goes with its
// subscriptions when they are all the source's; otherwise it stays, with
// them, and passes to the REST API.
func TestReleaseTopic(t *testing.T) {
	ctx := t.Context()
	r, obs := MustNew(t, nil)
	for _, name := range []string{"alone", "shared"} {
		if _, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: name, Owner: fileOwner}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.PutSubscription(ctx, ownedHook(name, "mine", fileOwner)); err != nil {
			t.Fatal(err)
		}
	}
	MustPutSubscription(t, r, "shared", "by-api")
	obs.Reset()

	if kept, err := r.ReleaseTopic(ctx, "alone", fileOwner); err != nil || kept != 0 {
		t.Fatalf("ReleaseTopic(alone) = %d, %v", kept, err)
	}
	if _, err := r.Topic(ctx, "alone"); eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound {
		t.Errorf("alone after its release: %v", err)
	}
	if got := obs.Changes(); len(got) != 1 || got[0].String() != "delete alone/mine#1" {
		t.Errorf("observer %v, want alone/mine deleted", got)
	}
	obs.Reset()

	if kept, err := r.ReleaseTopic(ctx, "shared", fileOwner); err != nil || kept != 1 {
		t.Fatalf("ReleaseTopic(shared) = %d, %v", kept, err)
	}
	if tp, err := r.Topic(ctx, "shared"); err != nil || tp.Owner.Declared() {
		t.Errorf("shared after its release: %+v, %v; want it kept, the API's", tp, err)
	}
	if got := obs.Changes(); len(got) != 0 {
		t.Errorf("observer %v, want nothing deleted", got)
	}
	if _, err := r.ReleaseTopic(ctx, "missing", fileOwner); eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound {
		t.Errorf("ReleaseTopic(missing): %v", err)
	}
}

// TestOwnership_NoTakeOverRace: a declaration and the API create the same
// subscription at the same moment, the declaration's put waiting for its
// endpoint's handshake while the API's lands. Exactly one wins, and the
// loser is told so: the declaration never takes over what the API made in
// the meantime.
func TestOwnership_NoTakeOverRace(t *testing.T) {
	ctx := t.Context()
	inHandshake, apiDone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r, _ := MustNew(t, func(o *registry.Options) {
		o.Handshake = func(_ context.Context, _, sub *eventgrid.EventSubscription) (func(*eventgrid.EventSubscription), error) {
			if sub.Owner.Declared() {
				once.Do(func() { close(inHandshake); <-apiDone })
			}
			return nil, nil
		}
	})
	MustPutTopic(t, r, "t", eventgrid.EventGridSchema)
	errc := make(chan error, 1)
	go func() {
		_, _, err := r.PutSubscription(ctx, ownedHook("t", "s", fileOwner))
		errc <- err
	}()
	<-inHandshake
	MustPutSubscription(t, r, "t", "s")
	close(apiDone)
	mustConflict(t, <-errc, "created over the REST API")
	if s, _ := r.Subscription(ctx, "t", "s"); s.Owner.Declared() {
		t.Errorf("the subscription is %v's, want the API's", s.Owner)
	}
}
