package auth

import (
	"fmt"
	"strings"
)

// Permission is what a route of the API needs of a request's credential
// (docs/security.md#who-may-do-what).
type Permission string

// The permissions. A SAS key and a trusted client certificate hold all of
// them; a SAS token holds Publish, Receive and Scrape, on the resource it
// was signed for and what lies below it.
const (
	// Publish: send events to a topic (the edge publish routes, the cloud
	// path /api/events, the namespace :publish).
	Publish Permission = "publish"
	// Receive: take events from a queue subscription and settle them (the
	// namespace data plane's :receive, :acknowledge, :release, :reject and
	// :renewLock).
	Receive Permission = "receive"
	// Scrape: read the Prometheus metrics (GET /metrics): counters and
	// gauges by topic and subscription name, no event.
	Scrape Permission = "scrape"
	// Read: see resources, their status and the events they hold (GET of
	// topics and subscriptions, peek, the events given up on, history, the
	// live tail and outcome streams).
	Read Permission = "read"
	// Manage: change resources and act on them (PUT, DELETE, getFullUrl,
	// :retryNow and every other action).
	Manage Permission = "manage"
)

// Permissions lists every permission.
var Permissions = []Permission{Publish, Receive, Scrape, Read, Manage}

// TokenHolds reports whether a SAS token can hold p at all. Azure Event
// Grid gives a token exactly this: publishing to the custom topic, domain,
// namespace or namespace topic it was signed for, and, on namespaces,
// receiving from the event subscriptions below its resource
// (https://learn.microsoft.com/azure/event-grid/authenticate-with-access-keys-shared-access-signatures).
// Receiving there covers what a receiver does with what it received:
// acknowledge, release, reject and renew the lock. Scrape is edgegrid's
// own (Azure serves no metrics on its data plane): a token signed for the
// /metrics URL is how Prometheus scrapes without holding a key
// (docs/kubernetes.md#metrics).
func TokenHolds(p Permission) bool { return p == Publish || p == Receive || p == Scrape }

// Grant is what a request's credential holds, as Authenticator.Check found
// it. The zero Grant holds nothing.
type Grant struct {
	credential string // one of the Credential* kinds; "" for none
	all        bool   // every permission on every resource
	resource   string // a token's: the path it was signed for, without a trailing '/'
	accepts    kinds  // what the broker takes, for the refusals Permit returns
}

// Kinds of credential, as Grant.Credential names them.
const (
	// CredentialNone: authentication is off, and every request holds
	// everything.
	CredentialNone = "none"
	// CredentialSASKey: aeg-sas-key, or Authorization: SharedAccessKey.
	CredentialSASKey = "sas_key"
	// CredentialSASToken: aeg-sas-token, or Authorization:
	// SharedAccessSignature.
	CredentialSASToken = "sas_token"
	// CredentialClientCertificate: a TLS client certificate.
	CredentialClientCertificate = "client_certificate"
)

// Credential names the kind of credential that passed: one of the
// Credential* constants, or "" for the zero Grant.
func (g Grant) Credential() string { return g.credential }

// HoldsAll reports whether g holds every permission on every resource: a
// key, a trusted client certificate, or authentication off.
func (g Grant) HoldsAll() bool { return g.all }

// Resource is a token's resource: the path it was signed for, "" for the
// broker's root. It is "" for other grants.
func (g Grant) Resource() string { return g.resource }

// Permit reports whether g may do p on resource, the path of what the
// request acts on: /topics/{t}/events for the edge publish route,
// /topics/{t} for :publish, /topics/{t}/eventSubscriptions/{s} for
// :receive, and for other routes their path. It returns nil when it may.
// When g is a token signed for something that does not lie above resource,
// the token is no credential for this request: a *Failure (401). When the
// token reaches resource but p is one a token never holds, a *Denied (403).
// The reason is for the log only, like Check's.
func (g Grant) Permit(p Permission, resource string) (reason string, err error) {
	switch {
	case g.all:
		return "", nil
	case g.credential != CredentialSASToken:
		return "no credential", &Failure{Kind: FailNoCredentials, accepts: g.accepts}
	case !under(g.resource, resource):
		f := &Failure{Kind: FailSASToken, accepts: g.accepts}
		f.note(tokenKind, refused, "the SAS token presented was signed for another resource than "+resource)
		return "sas token resource mismatch", f
	case !TokenHolds(p):
		return "sas token lacks the " + string(p) + " permission", &Denied{Permission: p, accepts: g.accepts}
	}
	return "", nil
}

// under reports whether a token signed for the path prefix reaches path:
// prefix is path, or a prefix of it ending at a segment boundary, compared
// case-insensitively; "" is the root and reaches everything.
func under(prefix, path string) bool {
	if prefix == "" {
		return true
	}
	if len(path) < len(prefix) || !strings.EqualFold(path[:len(prefix)], prefix) {
		return false
	}
	return len(path) == len(prefix) || path[len(prefix)] == '/'
}

// Denied is the error of a request whose credential is good for the
// resource but does not hold the permission its route needs: a SAS token
// on a route that reads or manages. The HTTP layer answers it with 403.
type Denied struct {
	// Permission is the one the route needs.
	Permission Permission
	accepts    kinds
}

func (d *Denied) Error() string { return "auth: forbidden (needs " + string(d.Permission) + ")" }

// AuthFailureReason returns FailPermission, the kind of refusal for the
// auth failure metric.
func (d *Denied) AuthFailureReason() string { return FailPermission }

// Message says what the route needs and what would hold it, for the
// client. It holds no credential.
func (d *Denied) Message() string {
	holders := "an aeg-sas-key or a client certificate"
	switch {
	case d.accepts&certKind != 0 && d.accepts&keyKind == 0:
		holders = "a client certificate"
	case d.accepts&certKind == 0:
		holders = "an aeg-sas-key"
	}
	return fmt.Sprintf("This route needs the %s permission, which a SAS token does not hold: below the resource it was signed for, a token publishes, receives from queue subscriptions and scrapes the metrics, nothing more. Use %s.", d.Permission, holders)
}
