// Package delivery moves accepted events to their subscribers. The Engine
// keeps one queue per event subscription with a ready list and the two
// back-off lists (1 and 10 minutes by default); workers, started on demand
// and bounded per subscription and overall, take batches from the ready
// list and hand them to a Sender. A failed batch is split back into its
// events, each of which moves to a back-off list until it is delivered or its
// retry policy (attempts, time to live) drops it, with a log line and a
// counter. Publish never blocks on delivery; it refuses a request whole when
// the broker's memory budget for queued events would be exceeded.
package delivery
