// Package desired keeps the topics and event subscriptions declared in
// configuration applied. edgegrid keeps nothing on disk, so a deployment
// declares them in the module-twin desired-properties shape: inline in
// desired_config, in a file named by desired_config_file (followed live),
// or in the module twin's desired properties (followed live).
//
// A Reconciler applies each source's whole declaration through the
// registry behind the management API. An apply is a pure plan (makePlan:
// what the source applied and what it declares in, steps out) and a short
// execution of its steps. What a source declares it owns, and the registry
// enforces it: the REST API cannot change or delete it, and a declaration
// never takes over what the API or another source manages. What a source
// stops declaring is deleted; a subscription declared on another topic is
// put there before it leaves its old place, and a topic goes only when the
// source declares none of what it holds. A bad entry is logged, reported
// and skipped, and the others still apply; one that failed for a passing
// reason (an endpoint not answering its validation handshake, a limit
// reached) is applied again with back-off. docs/live-config.md describes
// the behaviour.
package desired
