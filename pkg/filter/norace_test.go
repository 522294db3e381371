//go:build !race

package filter_test

const raceEnabled = false
