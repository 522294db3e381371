// Package azurite runs Azurite, the Azure Storage emulator, for tests: a
// real blob and queue service on free loopback ports with in-memory
// persistence, stopped (by its process id) when the test ends. It is for
// tests only.
package azurite
