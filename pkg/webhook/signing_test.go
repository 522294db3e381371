package webhook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/webhooktest"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw=="
)

func signedSub(url string, uid uint64, mode eventgrid.ContentMode, secrets ...string) *eventgrid.EventSubscription {
	sub := modeSub(url, eventgrid.EventGridSchema, mode)
	sub.UID = uid
	sub.Destination.SigningSecrets = secrets
	return sub
}

func TestSender_Signed(t *testing.T) {
	s := webhook.New(webhook.Options{})
	for _, mode := range []eventgrid.ContentMode{eventgrid.ContentBatch, eventgrid.ContentStructured} {
		t.Run(string(mode), func(t *testing.T) {
			k := newSink(t)
			if err := s.Send(t.Context(), batch(signedSub(k.URL, 7, mode, secretA), 1, egEvent("1", "t1"))); err != nil {
				t.Fatal(err)
			}
			r := k.last(t)
			if err := webhooktest.VerifyStandardWebhook(secretA, r.header, r.body, time.Now()); err != nil {
				t.Fatal(err)
			}
			if id := r.header.Get("webhook-id"); strings.Contains(id, ".") || id == "" {
				t.Errorf("webhook-id %q is empty or has a '.'", id)
			}
			if err := webhooktest.VerifyStandardWebhook(secretB, r.header, r.body, time.Now()); err == nil {
				t.Error("a signature verified with the wrong secret")
			}
			tampered := append([]byte(nil), r.body...)
			tampered[len(tampered)-2] = ' '
			if err := webhooktest.VerifyStandardWebhook(secretA, r.header, tampered, time.Now()); err == nil {
				t.Error("a tampered body verified")
			}
		})
	}
	t.Run("Rotation", func(t *testing.T) {
		k := newSink(t)
		if err := s.Send(t.Context(), batch(signedSub(k.URL, 7, "", secretA, secretB), 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		r := k.last(t)
		if n := len(strings.Split(r.header.Get("webhook-signature"), " ")); n != 2 {
			t.Errorf("%d signatures for 2 secrets", n)
		}
		for _, sec := range []string{secretA, secretB} {
			if err := webhooktest.VerifyStandardWebhook(sec, r.header, r.body, time.Now()); err != nil {
				t.Errorf("secret %d: %v", len(sec), err)
			}
		}
	})
	t.Run("IDStableAcrossRetries", func(t *testing.T) {
		k := newSink(t)
		sub := signedSub(k.URL, 7, "", secretA)
		ids := map[string]bool{}
		for attempt := 1; attempt <= 3; attempt++ {
			if err := s.Send(t.Context(), batch(sub, attempt, egEvent("1", "t1"), egEvent("2", "t1"))); err != nil {
				t.Fatal(err)
			}
			ids[k.last(t).header.Get("webhook-id")] = true
		}
		if len(ids) != 1 {
			t.Errorf("webhook-id changed across attempts: %v", ids)
		}
		// Other bytes or another subscription: another id.
		_ = s.Send(t.Context(), batch(sub, 1, egEvent("3", "t1")))
		ids[k.last(t).header.Get("webhook-id")] = true
		_ = s.Send(t.Context(), batch(signedSub(k.URL, 8, "", secretA), 1, egEvent("1", "t1"), egEvent("2", "t1")))
		ids[k.last(t).header.Get("webhook-id")] = true
		if len(ids) != 3 {
			t.Errorf("webhook-ids %v: want distinct ids for distinct events and subscriptions", ids)
		}
	})
	t.Run("Unsigned", func(t *testing.T) {
		k := newSink(t)
		if err := s.Send(t.Context(), batch(webhookSub(k.URL, eventgrid.EventGridSchema), 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		if h := k.last(t).header; h.Get("webhook-id") != "" || h.Get("webhook-signature") != "" {
			t.Error("an unsigned subscription's delivery carries webhook-* headers")
		}
	})
}
