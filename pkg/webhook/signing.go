package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks 1.0.0 headers of a signed delivery
// (docs/design.md#signatures).
const (
	headerWebhookID        = "webhook-id"
	headerWebhookTimestamp = "webhook-timestamp"
	headerWebhookSignature = "webhook-signature"
)

// messageID returns a delivery's webhook-id: "msg_" and the URL-safe base64
// of the first 18 bytes of SHA-256 over the subscription's UID and the
// request body. It is the same for every attempt to deliver the same bytes
// to the same subscription, so a receiver can drop retried duplicates, and
// it never contains '.', which the signed content uses as separator.
func messageID(uid uint64, b *body) string {
	h := sha256.New()
	var u [8]byte
	binary.BigEndian.PutUint64(u[:], uid)
	h.Write(u[:])
	for _, p := range b.parts {
		h.Write(p)
	}
	return "msg_" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// sign adds webhook-id, webhook-timestamp and webhook-signature to h: one
// "v1,<base64 HMAC-SHA256>" signature per secret, space-separated, over
// "<id>.<timestamp>.<body>". A secret that is not "whsec_" and base64 (the
// registry refuses those) signs nothing.
func sign(h http.Header, secrets []string, uid uint64, b *body, now time.Time) {
	id := messageID(uid, b)
	ts := strconv.FormatInt(now.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			continue
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		for _, p := range b.parts {
			mac.Write(p)
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	h.Set(headerWebhookID, id)
	h.Set(headerWebhookTimestamp, ts)
	h.Set(headerWebhookSignature, strings.Join(sigs, " "))
}
