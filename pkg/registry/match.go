package registry

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// Match appends to deliveries each event paired with the subscriptions whose
// filters it passes. Events that match nothing are left out. Events that match every route
// share one slice, the common case, which saves an allocation per event.
func Match(deliveries []eventgrid.Delivery, events []*eventgrid.Event, routes []Route) []eventgrid.Delivery {
	if len(routes) == 0 {
		return deliveries
	}
	var all []*eventgrid.EventSubscription
	for _, ev := range events {
		var subs []*eventgrid.EventSubscription // stays nil while every route matches
		matched := 0
		for i, r := range routes {
			if r.Matcher.Match(ev) {
				matched++
				if subs != nil {
					subs = append(subs, r.Subscription)
				}
				continue
			}
			if subs == nil { // first miss: every earlier route matched
				subs = make([]*eventgrid.EventSubscription, 0, len(routes)-1)
				for _, prev := range routes[:i] {
					subs = append(subs, prev.Subscription)
				}
			}
		}
		if matched == 0 {
			continue
		}
		if subs == nil {
			if all == nil {
				all = make([]*eventgrid.EventSubscription, len(routes))
				for i, r := range routes {
					all[i] = r.Subscription
				}
			}
			subs = all
		}
		deliveries = append(deliveries, eventgrid.Delivery{Event: ev, Subscriptions: subs})
	}
	return deliveries
}
