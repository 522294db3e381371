package registry

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// Options are the limits and destination rules the registry enforces.
type Options struct {
	MaxTopics                int
	MaxSubscriptionsPerTopic int
	// MaxNameLength bounds topic and subscription names.
	MaxNameLength int
	Filter        filter.Limits

	MinExpiryMinutes    int
	MaxExpiryMinutes    int
	MaxDeliveryAttempts int

	MaxEventsPerBatch       int
	MaxPreferredBatchSizeKB int

	WebhookHTTPSOnly               bool
	EventGridHTTPSOnly             bool
	EventGridAllowInvalidHostnames bool
	SkipEventGridURLValidation     bool

	// Handshake, if not nil, is called before a subscription is stored, with
	// the subscription as validated and the one it replaces (nil when it is
	// new), without the registry's lock held: it may take a while, and its
	// error refuses the put. The webhook validation handshakes use it.
	//
	// onStored, when not nil, is how what the handshake agreed takes
	// effect: the registry calls it once with the stored subscription, with
	// its lock held and before the observer hears of the change, and never
	// when the put is refused or starts over. It must not block and must
	// not call back into the registry.
	Handshake func(ctx context.Context, old, sub *eventgrid.EventSubscription) (onStored func(stored *eventgrid.EventSubscription), err error)
	// EdgeHubAvailable says whether the broker can reach edgeHub (under IoT
	// Edge, or with an MQTT endpoint configured).
	EdgeHubAvailable bool
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		MaxTopics:                100,
		MaxSubscriptionsPerTopic: 500,
		MaxNameLength:            128,
		Filter:                   filter.DefaultLimits,
		MinExpiryMinutes:         1,
		MaxExpiryMinutes:         1440,
		MaxDeliveryAttempts:      30,
		MaxEventsPerBatch:        50,
		MaxPreferredBatchSizeKB:  1033,
		WebhookHTTPSOnly:         true,
		EventGridHTTPSOnly:       true,
	}
}

// eventGridHosts are the cloud Event Grid domains an EventGrid destination
// may target unless invalid host names are allowed.
var eventGridHosts = []string{".eventgrid.azure.net", ".eventgrid.azure.us", ".eventgrid.azure.cn"}

// ValidateName checks a topic or subscription name: 1 to max characters of
// letters, digits, '-' and '_'.
func ValidateName(name, what string, max int) error {
	if name == "" || len(name) > max {
		return eventgrid.Errorf(eventgrid.EInvalidName, "%s name must be 1 to %d characters long; got %d.", what, max, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return eventgrid.Errorf(eventgrid.EInvalidName, "%s name %q may contain only letters, digits, '-' and '_'.", what, name)
		}
	}
	return nil
}

// validateSubscription checks everything about sub that does not depend on
// other subscriptions and returns its compiled filter. sub is normalised in
// place: the delivery schema defaults to the topic's and filter operator
// names take their canonical spelling.
func (o Options) validateSubscription(sub *eventgrid.EventSubscription, topic eventgrid.Topic) (*filter.Matcher, error) {
	if sub.Queue != nil {
		if err := o.validateQueue(sub, topic); err != nil {
			return nil, err
		}
	} else {
		if sub.EventDeliverySchema == "" {
			sub.EventDeliverySchema = topic.InputSchema
		} else if err := checkDeliverySchema(sub.EventDeliverySchema, topic.InputSchema); err != nil {
			return nil, err
		}
		if err := o.validateDestination(sub); err != nil {
			return nil, err
		}
	}
	if p := sub.RetryPolicy; p != nil {
		if p.MaxDeliveryAttempts < 0 || p.MaxDeliveryAttempts > o.MaxDeliveryAttempts {
			return nil, eventgrid.Errorf(eventgrid.EInvalidRetryPolicy, "properties.retryPolicy.maxDeliveryAttempts must be between 1 and %d (api__retryPolicyLimits__maxDeliveryAttempts); got %d.", o.MaxDeliveryAttempts, p.MaxDeliveryAttempts)
		}
		if p.EventExpiryInMinutes != 0 && (p.EventExpiryInMinutes < o.MinExpiryMinutes || p.EventExpiryInMinutes > o.MaxExpiryMinutes) {
			return nil, eventgrid.Errorf(eventgrid.EInvalidRetryPolicy, "properties.retryPolicy.eventExpiryInMinutes must be between %d and %d; got %d.", o.MinExpiryMinutes, o.MaxExpiryMinutes, p.EventExpiryInMinutes)
		}
	}
	if p := sub.PersistencePolicy; p != nil && p.IsPersisted {
		return nil, eventgrid.Errorf(eventgrid.EInvalidPersistence, "properties.persistencePolicy.isPersisted cannot be true: edgegrid keeps events in memory by design; declare topics and subscriptions in desired_config to restore them at start.")
	}
	m, err := filter.Compile(sub.Filter, topic.InputSchema, o.Filter)
	if err != nil {
		return nil, err
	}
	if f := sub.Filter; f != nil {
		// Copy before normalising, so the stored subscription shares no
		// memory with the caller's.
		fc := *f
		fc.IncludedEventTypes = slices.Clone(f.IncludedEventTypes)
		fc.AdvancedFilters = slices.Clone(f.AdvancedFilters)
		sub.Filter, f = &fc, &fc
		for i := range f.AdvancedFilters {
			if c, ok := filter.CanonicalOperator(f.AdvancedFilters[i].OperatorType); ok {
				f.AdvancedFilters[i].OperatorType = c
			}
		}
	}
	return m, nil
}

// hostPortProblem says why u's host and port cannot be connected to, or "":
// the host must not be empty and a port, when given, must be 1 to 65535.
func hostPortProblem(u *url.URL) string {
	if u.Hostname() == "" {
		return "must name a host"
	}
	if !hostName(u.Hostname()) {
		return fmt.Sprintf("host %q is not a host name (letters, digits, '-', '.' and '_', or an IP address): replace any placeholder with the real host", u.Hostname())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("port %s is out of range; a port is 1 to 65535", p)
		}
	}
	return ""
}

// hostName reports whether h can name a host: an IP address, or a name of
// letters, digits, '-', '.' and '_' (non-ASCII letters included, which
// resolve as internationalised names). A placeholder such as "<topic>",
// which url.Parse lets through, never resolves.
func hostName(h string) bool {
	if ip, _, _ := strings.Cut(h, "%"); net.ParseIP(ip) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c >= 0x80) {
			return false
		}
	}
	return true
}

func hasEventGridHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, s := range eventGridHosts {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// checkDeliverySchema allows a subscription's delivery schema to differ from
// its topic's input schema only where the broker converts (EventGridSchema
// to CloudEventSchemaV1_0).
func checkDeliverySchema(delivery, topic eventgrid.InputSchema) error {
	if delivery == topic || schema.Converts(topic, delivery) {
		return nil
	}
	return eventgrid.Errorf(eventgrid.EInvalidSchema, "properties.eventDeliverySchema %s must equal the topic's inputSchema %s; the only conversion the broker makes is from EventGridSchema to CloudEventSchemaV1_0.", delivery, topic)
}
