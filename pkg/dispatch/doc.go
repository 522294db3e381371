// Package dispatch is where a publication meets the broker's two delivery
// modes: push (pkg/push) and queue (pkg/queue). A Dispatcher converts
// each event once per delivery schema, claims the broker's budget for all
// of a request's subscriptions, push and queue, in one decision (so that a
// request that can never fit gets 413 and one that does not fit now 503,
// whatever its subscriptions' modes), and hands each subscription's events
// to the mode that serves it: all of the request, or nothing of it. A
// request that does not fit now is first held for room, up to
// PublishHold, while the subscriptions it waits for take deliveries, push
// or queue (see budget.Budget.ReserveWithin); the dispatcher also answers
// the API's question before a body is read (Admit), holding it the same
// way while the broker is full.
//
// It is also the one subscription observer of both modes: it tells each
// mode about its own subscriptions, moves a subscription from one mode to
// the other when its deliveryMode changes, refusing the change while the
// old mode holds its events, and answers a subscription's delivery status
// and what each subscription holds, whatever its mode.
package dispatch
