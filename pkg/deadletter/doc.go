// Package deadletter keeps the events subscriptions give up on, push and
// queue alike, in an Azure Storage blob container
// (docs/design.md#dead-lettering), as cloud Event Grid does: one JSON array
// per blob at <SUBSCRIPTION>/<yyyy>/<M>/<d>/<H>/<uuid>.json, each event as
// its subscription would have received it plus why it was dead-lettered and
// how its last delivery ended. Writer implements eventgrid.DeadLetterer for
// both delivery modes: it never blocks them, writes at most one blob per
// subscription per flush interval, creates the container when it is
// missing, and while storage is away keeps the letters (inside their
// subscription's share of the queue budget) and retries, for four hours by
// default; then it drops them with a log line and a counter. When their
// subscription is deleted, its letters leave the budget at once and are
// written as storage takes them, or dropped (logged and counted) at the
// first failure. Connection strings are secrets: storage errors are reduced
// to their status and code before they are logged.
package deadletter
