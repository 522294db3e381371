// Package filter compiles the filter of an event subscription (event types,
// subject prefix and suffix, advanced filters) into a Matcher that decides,
// without allocating in the common cases, whether an event is delivered to
// that subscription.
//
// Compile validates a filter once, when the subscription is stored, and
// precomputes everything Match needs: key paths, exact decimals for numbers
// and case-folded text for strings. Match reads the event's JSON body in
// place with package rawjson.
//
// Rules where the original module's documentation leaves a choice
// (docs/design.md#filters): a missing key, a null, an array
// or a value of the wrong JSON type never matches, for every operator,
// StringNotIn and NumberNotIn included (the original cloud behaviour).
// String comparisons are always case-insensitive under Unicode simple case
// folding, as strings.EqualFold; numbers compare as exact decimals.
package filter
