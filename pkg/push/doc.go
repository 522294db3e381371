// Package push moves accepted events to their push subscribers. The
// Engine keeps one queue per event subscription with a ready list and the two
// back-off lists (1 and 10 minutes by default); workers take batches from
// the ready list and hand them to a Sender. A failed batch is split back
// into its events, each of which moves to a back-off list until it is
// delivered or its retry policy (attempts, time to live) gives up on it:
// then it goes to the subscription's dead-letter destination or, without
// one, is dropped. What happens is told as the queue subscriptions' is,
// through one reporter (package outcome): to the logs, the metrics, the
// inspection board and the dead-letter writer.
//
// # The budget
//
// Events reach the engine through Enqueue, from the publish path (package
// dispatch), which has already claimed their room in the broker's budget
// (package budget): the engine only gives it back, one delivery at a time,
// through the request's budget.Hold and the subscription's budget.Share,
// which each queue keeps. A request's bytes, its converted copies
// included, stay counted until its last delivery, push or queue, is done.
// Deleting a subscription returns its events to the budget at once, those
// in requests still in flight too.
//
// # Scheduling: hung endpoints do not hold the pool
//
// The engine's files are parted by concern: options.go (settings),
// budget.go (events enqueued and given back to the budget), sched.go
// (workers, run queues and the watchdog), control.go (a subscription's
// concurrency), stall.go (stalled requests), attempt.go (one delivery
// attempt and its outcome), queue.go (one subscription's queue) and
// lifecycle.go (subscriptions put and deleted, shutdown).
//
// MaxConcurrent workers, one per slot of the pool, take turns over two run
// queues. Proven subscriptions (a delivery succeeded, fewer than three
// attempts in a row failed, the endpoint is not hung) wait in the fast
// line; unproven, failing and hung ones in the slow line, which may hold at
// most half of the pool at once; when both lines wait, workers alternate
// between them.
//
// # A subscription's concurrency follows its endpoint
//
// How many requests of a subscription may be in flight is sized by what
// its endpoint says (control.go): 429 and 503 lower it, at most once per
// round trip, by half their share of the answers since the last decrease;
// successes add one each, or one per round trip above the limit the last
// overload left; other failures, which say nothing about load, change
// nothing. A request in flight longer than four times the subscription's
// usual answer time is stalled, and stops counting while the endpoint
// answers other requests (stall.go), so that a few requests that hang do
// not slow down the rest.
//
// # Suspect requests leave the pool
//
// A request is suspect once it has been in flight longer than four times its
// subscription's usual answer time (a moving average), within
// [SuspectAfter/5, SuspectAfter]: 200 ms to 1 s by default, and 200 ms while
// the subscription has not answered yet. What is suspect is decided from
// what is observable now, not only from timeouts that complete after
// DeliverTimeout: a watchdog, armed while requests are in flight, looks at
// the requests every SuspectAfter/200.
//
// The worker of a suspect request is parked: it leaves its slot to a new
// worker and stays with its request until the answer or the timeout, then
// exits. A stalled request is parked as soon as it stalls, before it is
// suspect, while fewer than MaxParked/2 are parked. At most MaxParked
// requests (twice MaxConcurrent by default) are parked; beyond that a
// suspect request keeps its worker and counts against the slow line's half,
// and when that half is full, or other subscriptions wait in the slow line,
// the request is cancelled and fails as timed out, to be retried by its
// policy. So the goroutines of the engine number at most MaxConcurrent +
// MaxParked; however many endpoints hang, new or formerly healthy, proven
// subscriptions keep at least half of the pool (a request that was proven
// healthy and then hangs holds its worker for SuspectAfter/5 to
// SuspectAfter only), and the slow line keeps moving, so that a new
// subscription is tried within a few watchdog rounds even beside hundreds
// of new endpoints that hang. The price, only while MaxParked requests are
// parked: a slow but live endpoint's request may be cancelled after
// SuspectAfter/5 to SuspectAfter.
//
// Lock order: Engine.mu -> queue.mu -> Engine.sched. Under a lock the engine
// only does arithmetic: the records of what happened (package outcome) are
// collected and handed to the reporter once the lock is released.
package push
