// Package kubernetes holds the tests of the Helm chart in charts/edgegrid.
// See docs/kubernetes.md.
package kubernetes
