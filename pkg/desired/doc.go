// Package desired keeps the topics and event subscriptions declared in
// configuration applied. edgegrid keeps nothing on disk, so a deployment
// declares them in the module-twin desired-properties shape: inline in
// desired_config, in a file named by desired_config_file (followed live),
// or in the module twin's desired properties (followed live). A Reconciler
// applies each source's whole desired state through the same services as
// the management API: what a source declares it owns, and what it stops
// declaring is deleted; what the API created is never touched. A bad entry
// is logged and skipped; the others still apply. docs/live-config.md
// describes the behaviour.
package desired
