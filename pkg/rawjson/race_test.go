//go:build race

package rawjson_test

const raceEnabled = true
