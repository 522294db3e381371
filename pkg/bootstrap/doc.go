// Package bootstrap creates the topics and event subscriptions declared in
// configuration. edgegrid keeps nothing on disk, so a deployment declares
// them (env desired_config, or a file named by desired_config_file) in the
// module-twin desired-properties shape of spec §2.6 and they are created at
// every start, through the same services as the management API. A bad entry
// is logged and skipped; the others are still created.
package bootstrap
