// Package outcome tells what happened to deliveries, push and queue alike.
// Each delivery mode makes one Record for each attempt begun and ended,
// each settlement, each event given up on and each lot of events
// discarded, where it already knows the facts (under its own lock, with no
// I/O), and hands it, once that lock is released, to one Reporter, which
// tells it once to the logs, the metrics, the inspection board (package
// inspect) and the dead-letter writer. Both modes so tell one story: the
// same fact has the same log line, the same metric series and the same
// board entry whichever mode it happened in.
//
// Reason is the one vocabulary of why events left a subscription
// undelivered: Event Grid's deadLetterReason names, used alike in metric
// labels, log fields, dead letters, the inspection API and the console
// (docs/metrics.md#reasons).
//
// The log lines of a subscription's failed attempts and of the events it
// gives up on are rate-limited per subscription (Options.LogRateWindow and
// LogRateBurst): a Sub, the reporter of one subscription, counts the lines
// it suppresses and reports them on its next line, or in a "log lines
// suppressed" line once the window ends or the subscription's queue goes.
package outcome
