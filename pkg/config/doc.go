// Package config reads every setting of the broker from the environment, the
// way IoT Edge passes it: .NET-style names such as
// inbound__serverAuth__tlsPolicy (or inbound:serverAuth:tlsPolicy), matched
// case-insensitively, with case-insensitive enum and boolean values.
//
// Load is the only function that reads the process environment. It returns a
// validated Config; components receive plain values copied from it and never
// see the environment. Tests build a Config in code, usually from Default,
// and call Validate. UnknownKeys, given the environment, names the variables
// under the broker's prefixes that are no key, for a warning at start.
//
// Keys marked as edgegrid extensions in the Config field comments have no
// counterpart in the original module.
package config
