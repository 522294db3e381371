package schema

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// HasCanonicalLayout reports whether CloudEventOf reads body's members from
// their places, data starting at dataAt, rather than scanning body.
func HasCanonicalLayout(body []byte, dataAt int) bool {
	var m members
	return canonicalMembers(body, dataAt, &m)
}

// HasPlainLayout reports whether CloudEventOf takes ev's members by their
// lengths, as it does for an event the decoder marked Plain.
func HasPlainLayout(ev *eventgrid.Event) bool {
	var m members
	return ev.Plain && plainMembers(ev, &m)
}

// DataVersionByScan is DataVersion without reading from the end.
var DataVersionByScan = dataVersionByScan
