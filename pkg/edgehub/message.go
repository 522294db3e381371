package edgehub

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// properties returns the custom delivery properties as name, value pairs,
// Dynamic values taken from ev (the batch's first event) by the rules every
// destination shares (eventgrid.Properties).
func properties(attrs []eventgrid.DeliveryAttribute, ev []byte) []string {
	ps := eventgrid.Properties(attrs, ev)
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(ps))
	for _, p := range ps {
		out = append(out, p.Name, p.Value)
	}
	return out
}

// payload is the message body: the JSON array a webhook would get.
func payload(events [][]byte) []byte {
	n := 2
	for _, ev := range events {
		n += len(ev) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, ev := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ev...)
	}
	return append(b, ']')
}
