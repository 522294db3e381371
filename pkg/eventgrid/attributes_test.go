package eventgrid_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

func TestProperties(t *testing.T) {
	long := strings.Repeat("x", eventgrid.MaxAttributeValueSize)
	event := `{"id":"1","subject":"s/1","data":{"s":"text","n":-1.5e3,"b":true,"nil":null,"obj":{"k":"v"},"arr":[1],` +
		`"crlf":"a\r\nb","nul":"a\u0000b","esc":"caf\u00e9 \"q\"","long":"` + long + `","longer":"` + long + `x","Mixed":"case"}}`
	static := func(name, value string) eventgrid.DeliveryAttribute {
		return eventgrid.DeliveryAttribute{Name: name, Type: "Static", Value: value}
	}
	dynamic := func(name, field string) eventgrid.DeliveryAttribute {
		return eventgrid.DeliveryAttribute{Name: name, Type: "Dynamic", SourceField: field}
	}
	tests := []struct {
		name string
		attr eventgrid.DeliveryAttribute
		want []eventgrid.Property // nil: left out
	}{
		{"Static", static("h", "v"), []eventgrid.Property{{Name: "h", Value: "v"}}},
		{"StaticEmpty", static("h", ""), []eventgrid.Property{{Name: "h", Value: ""}}},
		{"EnvelopeField", dynamic("h", "subject"), []eventgrid.Property{{Name: "h", Value: "s/1"}}},
		{"String", dynamic("h", "data.s"), []eventgrid.Property{{Name: "h", Value: "text"}}},
		{"EscapedString", dynamic("h", "data.esc"), []eventgrid.Property{{Name: "h", Value: `café "q"`}}},
		{"Number", dynamic("h", "data.n"), []eventgrid.Property{{Name: "h", Value: "-1.5e3", Literal: true}}},
		{"Bool", dynamic("h", "data.b"), []eventgrid.Property{{Name: "h", Value: "true", Literal: true}}},
		{"CaseInsensitiveMember", dynamic("h", "data.mixed"), []eventgrid.Property{{Name: "h", Value: "case"}}},
		{"LongestString", dynamic("h", "data.long"), []eventgrid.Property{{Name: "h", Value: long}}},
		{"TooLong", dynamic("h", "data.longer"), nil},
		{"LineBreaks", dynamic("h", "data.crlf"), nil},
		{"NUL", dynamic("h", "data.nul"), nil},
		{"Null", dynamic("h", "data.nil"), nil},
		{"Object", dynamic("h", "data.obj"), nil},
		{"Array", dynamic("h", "data.arr"), nil},
		{"Missing", dynamic("h", "data.none"), nil},
		{"ThroughAString", dynamic("h", "data.s.x"), nil},
		{"LowerCaseType", eventgrid.DeliveryAttribute{Name: "h", Type: "dynamic", SourceField: "data.s"}, []eventgrid.Property{{Name: "h", Value: "text"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eventgrid.Properties([]eventgrid.DeliveryAttribute{tt.attr}, []byte(event))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Properties = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := eventgrid.Properties(nil, []byte(event)); got != nil {
		t.Errorf("no attributes: %v", got)
	}
	// Order is kept and left-out attributes leave no gap.
	got := eventgrid.Properties([]eventgrid.DeliveryAttribute{static("a", "1"), dynamic("b", "data.nil"), dynamic("c", "data.n")}, []byte(event))
	if want := []eventgrid.Property{{Name: "a", Value: "1"}, {Name: "c", Value: "-1.5e3", Literal: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Properties = %+v, want %+v", got, want)
	}
}

// A Dynamic value that cannot be an HTTP field value is left out rather
// than failing the delivery.
func TestPropertiesDynamicValueNotAFieldValue(t *testing.T) {
	attrs := []eventgrid.DeliveryAttribute{
		{Name: "x-ok", Type: "Dynamic", SourceField: "data.ok"},
		{Name: "x-ctl", Type: "Dynamic", SourceField: "data.ctl"},
		{Name: "x-del", Type: "Dynamic", SourceField: "data.del"},
	}
	body := []byte(`{"data":{"ok":"a\tb é","ctl":"a\u0001b","del":"\u007f"}}`)
	got := eventgrid.Properties(attrs, body)
	if len(got) != 1 || got[0].Name != "x-ok" || got[0].Value != "a\tb é" {
		t.Fatalf("Properties = %+v, want only x-ok", got)
	}
}
