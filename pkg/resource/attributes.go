package resource

import (
	"fmt"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Limits of custom delivery properties
// (docs/design.md#custom-delivery-properties), as the cloud has them.
const (
	maxDeliveryAttributes    = 10
	maxDeliveryAttributeSize = 4096
)

// reservedHeaders are the header names the broker sets itself
// (docs/design.md#custom-delivery-properties); a
// name ending in '-' reserves the prefix.
var reservedHeaders = []string{"aeg-", "content-type", "content-length", "host", "connection", "transfer-encoding", "webhook-", "ce-"}

// decodeDeliveryAttributes reads deliveryAttributeMappings: custom headers
// (docs/design.md#custom-delivery-properties),
// Static (a value, secret or not) or Dynamic (the value at a key of
// the event). A Static secret mapping given without its value, as GET
// returns it, is recorded for kept.
func decodeDeliveryAttributes(p object, d *eventgrid.Destination, k *kept) error {
	list, ok, err := p.array(eventgrid.EInvalidDestination, "deliveryAttributeMappings")
	if err != nil || !ok {
		return err
	}
	field := p.field("deliveryAttributeMappings")
	if len(list) > maxDeliveryAttributes {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s has %d entries; at most %d are allowed.", field, len(list), maxDeliveryAttributes)
	}
	seen := map[string]bool{}
	for i, raw := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		o, err := parseObject(raw, at, eventgrid.EInvalidDestination)
		if err != nil {
			return err
		}
		if err := o.check(deliveryAttributeShape); err != nil {
			return err
		}
		a, keep, err := decodeDeliveryAttribute(o)
		if err != nil {
			return err
		}
		if keep {
			k.attributes = append(k.attributes, len(d.DeliveryAttributes))
		}
		lower := strings.ToLower(a.Name)
		if seen[lower] {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s names %q a second time.", o.field("name"), a.Name)
		}
		seen[lower] = true
		d.DeliveryAttributes = append(d.DeliveryAttributes, a)
	}
	return nil
}

// decodeDeliveryAttribute reads one mapping. keep reports a Static secret
// mapping without its value, whose stored value is to be kept.
func decodeDeliveryAttribute(o object) (a eventgrid.DeliveryAttribute, keep bool, err error) {
	if a.Name, _, err = o.str(eventgrid.EInvalidDestination, "name"); err != nil {
		return a, false, err
	}
	if msg := headerNameProblem(a.Name); msg != "" {
		return a, false, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", o.field("name"), msg)
	}
	typ, _, err := o.str(eventgrid.EInvalidDestination, "type")
	if err != nil {
		return a, false, err
	}
	propsRaw, _, _ := o.get("properties")
	props, err := parseObject(propsRaw, o.field("properties"), eventgrid.EInvalidDestination)
	if err != nil {
		return a, false, err
	}
	switch {
	case strings.EqualFold(typ, "Static"):
		a.Type = "Static"
		keep, err = decodeStatic(props, &a)
	case strings.EqualFold(typ, "Dynamic"):
		a.Type = "Dynamic"
		err = decodeDynamic(props, &a)
	default:
		err = eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %q is not valid; accepted values are Static and Dynamic.", o.field("type"), typ)
	}
	return a, keep, err
}

// decodeStatic reads the properties of a Static mapping.
func decodeStatic(props object, a *eventgrid.DeliveryAttribute) (keep bool, err error) {
	if err := props.check(staticAttributeShape); err != nil {
		return false, err
	}
	if a.IsSecret, _, err = props.boolean(eventgrid.EInvalidDestination, "isSecret"); err != nil {
		return false, err
	}
	var ok bool
	if a.Value, ok, err = props.str(eventgrid.EInvalidDestination, "value"); err != nil {
		return false, err
	}
	switch {
	case !ok && a.IsSecret:
		return true, nil
	case !ok:
		return false, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required for a Static mapping.", props.field("value"))
	case len(a.Value) > maxDeliveryAttributeSize:
		return false, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is %d bytes long; at most %d are allowed.", props.field("value"), len(a.Value), maxDeliveryAttributeSize)
	}
	if msg := ValueProblem(a.Value); msg != "" {
		return false, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", props.field("value"), msg)
	}
	return false, nil
}

// decodeDynamic reads the properties of a Dynamic mapping.
func decodeDynamic(props object, a *eventgrid.DeliveryAttribute) error {
	if err := props.check(dynamicAttributeShape); err != nil {
		return err
	}
	var ok bool
	var err error
	if a.SourceField, ok, err = props.str(eventgrid.EInvalidDestination, "sourceField"); err != nil {
		return err
	} else if !ok || a.SourceField == "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required for a Dynamic mapping.", props.field("sourceField"))
	}
	for _, seg := range strings.Split(a.SourceField, ".") {
		if seg == "" {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %q has an empty segment.", props.field("sourceField"), a.SourceField)
		}
	}
	return nil
}

// headerNameProblem says why name cannot be a custom header, or "".
func headerNameProblem(name string) string {
	if name == "" {
		return "is required"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return fmt.Sprintf("%q is not a valid HTTP header name", name)
		}
	}
	lower := strings.ToLower(name)
	for _, r := range reservedHeaders {
		if lower == r || (strings.HasSuffix(r, "-") && strings.HasPrefix(lower, r)) {
			return fmt.Sprintf("%q is a header the broker sets itself (aeg-*, Content-Type, Content-Length, Host, Connection, Transfer-Encoding, webhook-*, ce-*)", name)
		}
	}
	return ""
}

// ValueProblem says why s cannot be the value of an HTTP header, or "".
// RFC 9110 §5.5 allows visible ASCII, bytes from 0x80 on (such as UTF-8),
// and spaces and tabs between them; Go's HTTP client refuses a request with
// anything else in a header, so such a value would fail every delivery.
func ValueProblem(s string) string {
	if i := eventgrid.ControlCharAt(s); i >= 0 {
		return fmt.Sprintf("holds the control character %U at byte %d; an HTTP header value may hold visible characters, spaces and tabs (RFC 9110 §5.5)", rune(s[i]), i)
	}
	if s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		return "must not begin or end with a space or tab: HTTP drops them from a header value (RFC 9110 §5.5)"
	}
	return ""
}

// DeliveryAttribute is the response shape of a delivery attribute mapping;
// a secret value is never returned.
type DeliveryAttribute struct {
	Name       string                      `json:"name"`
	Type       string                      `json:"type"`
	Properties DeliveryAttributeProperties `json:"properties"`
}

// DeliveryAttributeProperties are a mapping's value or source field. The
// value of a Static mapping is always written, empty or not, unless it is
// secret, so that a PUT of what GET returned gives it back.
type DeliveryAttributeProperties struct {
	Value       *string `json:"value,omitempty"`
	IsSecret    bool    `json:"isSecret,omitempty"`
	SourceField string  `json:"sourceField,omitempty"`
}

func encodeDeliveryAttributes(attrs []eventgrid.DeliveryAttribute) []DeliveryAttribute {
	var out []DeliveryAttribute
	for _, a := range attrs {
		r := DeliveryAttribute{Name: a.Name, Type: a.Type}
		r.Properties.IsSecret = a.IsSecret
		r.Properties.SourceField = a.SourceField
		if a.Type == "Static" && !a.IsSecret {
			r.Properties.Value = &a.Value
		}
		out = append(out, r)
	}
	return out
}
