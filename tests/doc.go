// Package tests holds black-box tests of edgegrid: they build the real
// broker binary, start it as a process with an environment like the one IoT
// Edge gives it, and talk to it over loopback HTTP(S) like its users do.
package tests
