package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw=="
)

// verifyStandardWebhook checks a request the way a Standard Webhooks 1.0.0
// receiver does, written from the specification: the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>", the key the base64 after
// "whsec_", and webhook-signature a space-separated list of "v1,<base64
// HMAC-SHA256>" of which one must match; the timestamp must be within five
// minutes of now.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %v", ts, err)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %s is %v away", ts, d)
	}
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range strings.Split(sigs, " ") {
		version, b64, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}

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
			if err := verifyStandardWebhook(secretA, r.header, r.body, time.Now()); err != nil {
				t.Fatal(err)
			}
			if id := r.header.Get("webhook-id"); strings.Contains(id, ".") || id == "" {
				t.Errorf("webhook-id %q is empty or has a '.'", id)
			}
			if err := verifyStandardWebhook(secretB, r.header, r.body, time.Now()); err == nil {
				t.Error("a signature verified with the wrong secret")
			}
			tampered := append([]byte(nil), r.body...)
			tampered[len(tampered)-2] = ' '
			if err := verifyStandardWebhook(secretA, r.header, tampered, time.Now()); err == nil {
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
			if err := verifyStandardWebhook(sec, r.header, r.body, time.Now()); err != nil {
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
