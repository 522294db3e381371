package resource

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// decodeDeliveryConfiguration reads the namespace subscription shape,
// {"deliveryConfiguration": {"deliveryMode": "Queue", "queue": {...}}}. It
// returns a nil config for a push subscription (deliveryMode Push or no
// deliveryConfiguration), and the queue's dead-letter destination if it
// names one. A queue subscription must not also have a destination.
func decodeDeliveryConfiguration(o object, k *kept) (*eventgrid.QueueConfig, *eventgrid.DeadLetterDestination, error) {
	raw, _, ok := o.get("deliveryConfiguration")
	if !ok {
		return nil, nil, nil
	}
	dc, err := parseObject(raw, o.field("deliveryConfiguration"), eventgrid.EInvalidDelivery)
	if err != nil {
		return nil, nil, err
	}
	if err := dc.check(deliveryConfigurationShape); err != nil {
		return nil, nil, err
	}
	mode, ok, err := dc.str(eventgrid.EInvalidDelivery, "deliveryMode")
	if err != nil {
		return nil, nil, err
	}
	switch {
	case !ok || strings.EqualFold(strings.TrimSpace(mode), string(eventgrid.DeliveryPush)):
		if _, _, hasQueue := dc.get("queue"); hasQueue {
			return nil, nil, eventgrid.Errorf(eventgrid.EInvalidDelivery, "%s must be Queue when %s is given.", dc.field("deliveryMode"), dc.field("queue"))
		}
		return nil, nil, nil
	case !strings.EqualFold(strings.TrimSpace(mode), string(eventgrid.DeliveryQueue)):
		return nil, nil, eventgrid.Errorf(eventgrid.EInvalidDelivery, "%s %q is not valid; accepted values are Push and Queue.", dc.field("deliveryMode"), mode)
	}
	if _, _, hasDest := o.get("destination"); hasDest {
		return nil, nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s must not be given for a subscription whose %s is Queue: its events are received, not sent.", o.field("destination"), dc.field("deliveryMode"))
	}
	return decodeQueue(dc, k)
}

// decodeQueue reads the queue of a deliveryConfiguration dc whose
// deliveryMode is Queue: its settings, defaults for those not given, and
// its dead-letter destination if it names one.
func decodeQueue(dc object, k *kept) (*eventgrid.QueueConfig, *eventgrid.DeadLetterDestination, error) {
	qraw, _, _ := dc.get("queue")
	q, err := parseObject(qraw, dc.field("queue"), eventgrid.EInvalidDelivery)
	if err != nil {
		return nil, nil, err
	}
	if err := q.check(queueShape); err != nil {
		return nil, nil, err
	}
	cfg := &eventgrid.QueueConfig{
		ReceiveLockSeconds: eventgrid.DefaultReceiveLockSeconds,
		MaxDeliveryCount:   eventgrid.DefaultQueueDeliveryCount,
		EventTimeToLive:    eventgrid.DefaultQueueEventTTL,
	}
	if err := boundedInt(q, "receiveLockDurationInSeconds", eventgrid.MinReceiveLockSeconds, eventgrid.MaxReceiveLockSeconds, &cfg.ReceiveLockSeconds); err != nil {
		return nil, nil, err
	}
	if err := boundedInt(q, "maxDeliveryCount", eventgrid.MinQueueDeliveryCount, eventgrid.MaxQueueDeliveryCount, &cfg.MaxDeliveryCount); err != nil {
		return nil, nil, err
	}
	ttl, ok, err := q.str(eventgrid.EInvalidDelivery, "eventTimeToLive")
	if err != nil {
		return nil, nil, err
	}
	if ok {
		d, err := ParseISODuration(ttl)
		if err != nil || d <= 0 {
			return nil, nil, eventgrid.Errorf(eventgrid.EInvalidDelivery, "%s %q must be a positive ISO 8601 duration such as P1D or PT1H.", q.field("eventTimeToLive"), ttl)
		}
		cfg.EventTimeToLive, cfg.EventTimeToLiveText = d, ttl
	}
	dl, err := decodeDeadLetter(q, k)
	if err != nil {
		return nil, nil, err
	}
	return cfg, dl, nil
}

// boundedInt reads an optional integer member into *v, which keeps its
// default when the member is absent. A number written as a string is
// refused, as everywhere in the API.
func boundedInt(o object, name string, lo, hi int, v *int) error {
	raw, _, ok := o.get(name)
	if !ok {
		return nil
	}
	if err := notString(eventgrid.EInvalidDelivery, o.field(name), raw); err != nil {
		return err
	}
	n, ok := parseInt(raw)
	if !ok || n < lo || n > hi {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, "%s must be an integer between %d and %d; got %s.", o.field(name), lo, hi, raw)
	}
	*v = n
	return nil
}

// decodeFiltersConfiguration reads the namespace spelling of a filter,
// {"filtersConfiguration": {"includedEventTypes": [...], "filters": [...]}},
// where "filters" are advanced filters.
func decodeFiltersConfiguration(o object) (*eventgrid.Filter, error) {
	raw, name, ok := o.get("filtersConfiguration")
	if !ok {
		return nil, nil
	}
	p, err := parseObject(raw, o.field(name), eventgrid.EInvalidFilter)
	if err != nil {
		return nil, err
	}
	if err := p.check(filtersConfigurationShape); err != nil {
		return nil, err
	}
	f := &eventgrid.Filter{}
	types, _, err := p.array(eventgrid.EInvalidFilter, "includedEventTypes")
	if err != nil {
		return nil, err
	}
	for i, t := range types {
		s, ok := rawjson.Unquote(t)
		if !ok {
			return nil, eventgrid.Errorf(eventgrid.EInvalidFilter, "%s[%d] must be a string.", p.field("includedEventTypes"), i)
		}
		f.IncludedEventTypes = append(f.IncludedEventTypes, s)
	}
	afs, _, err := p.array(eventgrid.EInvalidFilter, "filters")
	if err != nil {
		return nil, err
	}
	for i, a := range afs {
		if rawjson.KindOf(a) != rawjson.Object {
			return nil, eventgrid.Errorf(eventgrid.EInvalidFilter, "%s[%d] must be a JSON object.", p.field("filters"), i)
		}
		af, err := decodeAdvancedFilter(object{raw: a, path: fmt.Sprintf("%s[%d]", p.field("filters"), i)})
		if err != nil {
			return nil, err
		}
		f.AdvancedFilters = append(f.AdvancedFilters, af)
	}
	return f, nil
}

// ParseISODuration reads an ISO 8601 duration of weeks, days, hours,
// minutes and seconds (PnW, PnDTnHnMnS; the seconds may have a fraction).
// Years and months have no fixed length and are refused.
func ParseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not an ISO 8601 duration", s)
	rest := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(rest, "P") || len(rest) < 3 {
		return 0, bad
	}
	rest = rest[1:]
	var total float64
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, bad
			}
			inTime = true
			rest = rest[1:]
			if rest == "" {
				return 0, bad
			}
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, bad
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(rest[:i], ",", "."), 64)
		if err != nil {
			return 0, bad
		}
		var unit float64
		switch c := rest[i]; {
		case !inTime && c == 'W':
			unit = 7 * 24 * 3600
		case !inTime && c == 'D':
			unit = 24 * 3600
		case inTime && c == 'H':
			unit = 3600
		case inTime && c == 'M':
			unit = 60
		case inTime && c == 'S':
			unit = 1
		default:
			return 0, bad
		}
		total += n * unit
		if total > 100*365*24*3600 {
			return 0, bad
		}
		rest = rest[i+1:]
	}
	return time.Duration(total * float64(time.Second)), nil
}
