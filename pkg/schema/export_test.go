package schema

// HasCanonicalLayout reports whether CloudEventOf reads body's members from
// their places, data starting at dataAt, rather than scanning body.
func HasCanonicalLayout(body []byte, dataAt int) bool {
	var m members
	return canonicalMembers(body, dataAt, &m)
}

// DataVersionByScan is DataVersion without reading from the end.
var DataVersionByScan = dataVersionByScan
