//go:build race

package tests_test

// raceEnabled makes the broker under test a race-detector build too, when
// the tests themselves run with -race.
const raceEnabled = true
