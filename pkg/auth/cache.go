package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"sync"
	"time"
)

// maxVerified bounds the verified-chain cache; it is emptied when full.
const maxVerified = 1024

// verifiedCache remembers client certificate chains that verified against a
// trust pool, so that requests on a kept-alive connection (which all carry
// the same chain) do not repeat the signature checks. An entry is keyed by
// the exact certificates presented and the pool (a refreshed trust bundle is
// a new pool), and is valid only while every certificate of the verified
// chain is. Only successes are cached. It is safe for concurrent use.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[verifiedKey]validity
}

type verifiedKey struct {
	pool   *x509.CertPool
	digest [sha256.Size]byte
}

type validity struct{ from, until time.Time }

func cacheKey(pool *x509.CertPool, peers []*x509.Certificate) verifiedKey {
	h := sha256.New()
	var n [8]byte
	for _, c := range peers {
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	k := verifiedKey{pool: pool}
	h.Sum(k.digest[:0])
	return k
}

func (c *verifiedCache) valid(k verifiedKey, now time.Time) bool {
	c.mu.Lock()
	v, ok := c.entries[k]
	c.mu.Unlock()
	return ok && !now.Before(v.from) && !now.After(v.until)
}

// add records that chain (leaf first, root last) verified for key k.
func (c *verifiedCache) add(k verifiedKey, chain []*x509.Certificate) {
	var v validity
	for i, cert := range chain {
		if i == 0 || cert.NotBefore.After(v.from) {
			v.from = cert.NotBefore
		}
		if i == 0 || cert.NotAfter.Before(v.until) {
			v.until = cert.NotAfter
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxVerified {
		c.entries = make(map[verifiedKey]validity)
	}
	c.entries[k] = v
}
