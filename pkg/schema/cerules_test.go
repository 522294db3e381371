package schema_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// ruleCase is one CloudEvents attribute rule applied to an otherwise minimal
// event: member is added to the structured event; header, when set, is the
// same attribute in binary mode (a header name and its value as sent). msg
// is the error message after "event at index N: ", "" when the event is
// valid, and then the attribute must come out unchanged.
type ruleCase struct {
	name   string
	member string
	header []string
	msg    string
}

const ceMinimal = `{"specversion":"1.0","id":"1","source":"/src","type":"t"`

var ruleCases = []ruleCase{
	// Optional attributes: absent, or present and not empty.
	{name: "Subject", member: `"subject":"sensors/7"`, header: []string{"ce-subject", "sensors/7"}},
	{name: "SubjectUnicode", member: `"subject":"caf\u00e9 😀"`, header: []string{"ce-subject", "caf%C3%A9 %F0%9F%98%80"}},
	{name: "SubjectEmpty", member: `"subject":""`, header: []string{"ce-subject", ""},
		msg: `"subject" must not be empty: leave it out, or null, when there is none`},
	{name: "SubjectBlank", member: `"subject":"  "`, header: []string{"ce-subject", "%20%20"}, msg: `"subject" must not be only white space`},
	{name: "SubjectNull", member: `"subject":null`},

	{name: "DataContentType", member: `"datacontenttype":"application/json"`, header: []string{"Content-Type", "application/json"}},
	{name: "DataContentTypeParameters", member: `"datacontenttype":"text/plain; charset=\"utf-8\";format=flowed"`,
		header: []string{"Content-Type", `text/plain; charset="utf-8";format=flowed`}},
	{name: "DataContentTypeVendor", member: `"datacontenttype":"application/vnd.example.v2+json"`,
		header: []string{"Content-Type", "application/vnd.example.v2+json"}},
	{name: "DataContentTypeEmpty", member: `"datacontenttype":""`, header: []string{"ce-datacontenttype", ""},
		msg: `"datacontenttype" must be a media type (RFC 2046) such as "application/json", not ""`},
	{name: "DataContentTypeNoSubtype", member: `"datacontenttype":"xyz"`, header: []string{"Content-Type", "xyz"},
		msg: `"datacontenttype" must be a media type (RFC 2046) such as "application/json", not "xyz"`},
	{name: "DataContentTypeEmptySubtype", member: `"datacontenttype":"text/"`, header: []string{"Content-Type", "text/"},
		msg: `"datacontenttype" must be a media type`},
	{name: "DataContentTypeSpaceInside", member: `"datacontenttype":"text /plain"`, msg: `"datacontenttype" must be a media type`},
	{name: "DataContentTypeTrailingSemicolon", member: `"datacontenttype":"text/plain;"`, header: []string{"Content-Type", "text/plain;"},
		msg: `"datacontenttype" must be a media type`},
	{name: "DataContentTypeParameterWithoutValue", member: `"datacontenttype":"text/plain; charset"`, msg: `"datacontenttype" must be a media type`},
	{name: "DataContentTypeParameterTwice", member: `"datacontenttype":"text/plain; charset=a; Charset=b"`, msg: `"datacontenttype" must be a media type`},
	{name: "DataContentTypeOpenQuote", member: `"datacontenttype":"text/plain; charset=\"utf-8"`, msg: `"datacontenttype" must be a media type`},

	{name: "DataSchema", member: `"dataschema":"https://example.com/schemas/reading.json"`, header: []string{"ce-dataschema", "https://example.com/schemas/reading.json"}},
	{name: "DataSchemaURN", member: `"dataschema":"urn:example:schema:7"`},
	{name: "DataSchemaFragment", member: `"dataschema":"https://example.com/s.json#/definitions/reading"`},
	{name: "DataSchemaEmpty", member: `"dataschema":""`, header: []string{"ce-dataschema", ""},
		msg: `"dataschema" must be an absolute URI (RFC 3986) such as "https://example.com/schema.json", not ""`},
	{name: "DataSchemaRelative", member: `"dataschema":"/schemas/reading.json"`, header: []string{"ce-dataschema", "/schemas/reading.json"},
		msg: `"dataschema" must be an absolute URI`},
	{name: "DataSchemaFragmentOnly", member: `"dataschema":"#"`, msg: `"dataschema" must be an absolute URI (RFC 3986) such as "https://example.com/schema.json", not "#"`},
	{name: "DataSchemaSpace", member: `"dataschema":"http://example.com/a b"`, msg: `"dataschema" must be an absolute URI`},

	// Required attributes: present, not empty, of their type.
	{name: "SourceURN", member: `"source":"urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"`, header: []string{"ce-source", "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"}},
	{name: "SourceURL", member: `"source":"https://user@example.com:8080/a/b?c=d&e#f"`},
	{name: "SourceIPv6", member: `"source":"http://[::1]:8080/x"`},
	{name: "SourcePhone", member: `"source":"1-555-123-4567"`},
	{name: "SourceMailto", member: `"source":"mailto:cncf-wg-serverless@lists.cncf.io"`},
	{name: "SourceEscaped", member: `"source":"/caf%C3%A9/100%25"`},
	{name: "SourceIRI", member: `"source":"/capteurs/température"`},
	{name: "SourceSpace", member: `"source":"my source"`, header: []string{"ce-source", "my%20source"},
		msg: `"source" must be a URI reference (RFC 3986), such as "/sensors/7" or "urn:example:s7", not "my source"`},
	{name: "SourceColonInFirstSegment", member: `"source":"1:2"`, msg: `"source" must be a URI reference`},
	{name: "SourceBadEscape", member: `"source":"/a%zz"`, msg: `"source" must be a URI reference`},
	{name: "SourceBadPort", member: `"source":"http://example.com:http/"`, msg: `"source" must be a URI reference`},
	{name: "SourceOpenBracket", member: `"source":"http://[::1/x"`, msg: `"source" must be a URI reference`},
	{name: "SourceTwoFragments", member: `"source":"/a#b#c"`, msg: `"source" must be a URI reference`},
	{name: "SourceBlank", member: `"source":" "`, header: []string{"ce-source", "%20"}, msg: `"source" must not be only white space`},
	{name: "IDBlank", member: `"id":"  "`, header: []string{"ce-id", "%20%20"}, msg: `"id" must not be only white space`},
	{name: "TypeBlank", member: `"type":"\u00a0"`, header: []string{"ce-type", "%C2%A0"}, msg: `"type" must not be only white space`},

	// Values are CloudEvents Strings: no control characters, no noncharacters.
	{name: "IDControl", member: `"id":"a\u0000b"`, header: []string{"ce-id", "a%00b"},
		msg: `"id" holds the control character U+0000, which CloudEvents attribute values cannot hold`},
	{name: "TypeDelete", member: "\"type\":\"t\x7f\"", header: []string{"ce-type", "t%7F"}, msg: `"type" holds the control character U+007F`},
	{name: "SubjectNewline", member: `"subject":"a\nb"`, header: []string{"ce-subject", "a%0Ab"}, msg: `"subject" holds the control character U+000A`},
	{name: "SubjectC1", member: `"subject":"a\u0085"`, msg: `"subject" holds the control character U+0085`},
	{name: "SubjectNoncharacter", member: `"subject":"a\uFFFE"`, header: []string{"ce-subject", "a%EF%BF%BE"},
		msg: `"subject" holds the Unicode noncharacter U+FFFE`},
	{name: "SubjectNoncharacterPlane1", member: `"subject":"\uD83F\uDFFF"`, msg: `"subject" holds the Unicode noncharacter U+1FFFF`},
	{name: "SubjectArabicNoncharacter", member: `"subject":"\uFDD0"`, msg: `"subject" holds the Unicode noncharacter U+FDD0`},
	{name: "SubjectTab", member: `"subject":"a\tb"`, msg: `"subject" holds the control character U+0009`},

	// Attribute names: lower-case ASCII letters and digits, case-sensitive.
	{name: "ExtensionName", member: `"comexampleextension1":"value"`, header: []string{"ce-comexampleextension1", "value"}},
	{name: "ExtensionLongName", member: `"abcdefghijklmnopqrstuvwxyz0123456789":"x"`},
	{name: "ExtensionUpperCase", member: `"MyExtension":"x"`,
		msg: `"MyExtension" is not a valid attribute name: CloudEvents attribute names are lower-case ASCII letters and digits; names are case-sensitive, so it is not read as "myextension"`},
	{name: "ExtensionUpperCaseNull", member: `"MyExtension":null`, msg: `"MyExtension" is not a valid attribute name`},
	{name: "ExtensionUnderscore", member: `"my_ext":"x"`, header: []string{"ce-my_ext", "x"}, msg: `"my_ext" is not a valid attribute name`},
	{name: "ExtensionNonASCII", member: `"caf\u00e9":"x"`, msg: `"café" is not a valid attribute name`},
	{name: "ExtensionLongS", member: `"\u017Fubject":"x"`, msg: `"ſubject" is not a valid attribute name`},

	// Extension values: String, Integer (int32), Boolean; never objects or arrays.
	{name: "ExtensionEmptyString", member: `"ext":""`, header: []string{"ce-ext", ""}},
	{name: "ExtensionBoolean", member: `"ext":false`},
	{name: "ExtensionInteger", member: `"ext":0`},
	{name: "ExtensionIntegerMin", member: `"ext":-2147483648`},
	{name: "ExtensionIntegerMax", member: `"ext":2147483647`},
	{name: "ExtensionIntegerTooLarge", member: `"ext":2147483648`,
		msg: `"ext" must be an integer from -2147483648 to 2147483647 (a CloudEvents Integer), not 2147483648`},
	{name: "ExtensionIntegerTooSmall", member: `"ext":-2147483649`, msg: `"ext" must be an integer from -2147483648 to 2147483647`},
	{name: "ExtensionFraction", member: `"ext":1.5`, msg: `"ext" must be an integer from -2147483648 to 2147483647 (a CloudEvents Integer), not 1.5`},
	{name: "ExtensionPointZero", member: `"ext":1.0`, msg: `"ext" must be an integer`},
	{name: "ExtensionExponent", member: `"ext":1e3`, msg: `"ext" must be an integer`},
	{name: "ExtensionObject", member: `"ext":{}`, msg: `"ext" must be a string, number or boolean, not an object`},
	{name: "ExtensionControl", member: `"ext":"a\u0001"`, header: []string{"ce-ext", "a%01"}, msg: `"ext" holds the control character U+0001`},

	// Data that datacontenttype does not declare JSON is a string.
	{name: "DataText", member: `"datacontenttype":"text/plain","data":"hi"`},
	{name: "DataTextNull", member: `"datacontenttype":"text/xml","data":null`},
	{name: "DataPlusJSON", member: `"datacontenttype":"application/vnd.example+json; v=2","data":{"a":[1]}`},
	{name: "DataBase64WithType", member: `"datacontenttype":"application/octet-stream","data_base64":"QQ=="`},
	{name: "DataObjectAsText", member: `"datacontenttype":"text/plain","data":{"a":1}`,
		msg: `"data" must be a string, not an object, when "datacontenttype" "text/plain" is not a JSON media type (*/json or */*+json)`},
	{name: "DataNumberAsXML", member: `"datacontenttype":"Application/XML; charset=utf-8","data":5`, msg: `"data" must be a string, not a number`},

	// Documented extensions of a type other than String.
	{name: "SampledRate", member: `"sampledrate":10`, header: []string{"ce-sampledrate", "10"}},
	{name: "SampledRateString", member: `"sampledrate":"-7"`},
	{name: "SampledRateNotInteger", member: `"sampledrate":"ten"`, header: []string{"ce-sampledrate", "ten"},
		msg: `"sampledrate" must be an Integer from -2147483648 to 2147483647, not "ten"`},
	{name: "SeverityNumberBoolean", member: `"severitynumber":true`, msg: `"severitynumber" must be an Integer from -2147483648 to 2147483647, not true`},
	{name: "ExpiryTime", member: `"expirytime":"2030-01-01T00:00:00Z"`, header: []string{"ce-expirytime", "2030-01-01T00:00:00Z"}},
	{name: "ExpiryTimeNotTimestamp", member: `"expirytime":"tomorrow"`, header: []string{"ce-expirytime", "tomorrow"},
		msg: `"expirytime" must be an RFC 3339 timestamp, not "tomorrow"`},
	{name: "RecordedTimeNumber", member: `"recordedtime":1700000000`, msg: `"recordedtime" must be an RFC 3339 timestamp, not 1700000000`},
	{name: "DataRef", member: `"dataref":"https://example.com/blobs/7"`},
	{name: "DataRefNotURIReference", member: `"dataref":"a b"`, msg: `"dataref" must be a URI reference (RFC 3986), not "a b"`},
	{name: "Deprecated", member: `"deprecated":true`, header: []string{"ce-deprecated", "true"}},
	{name: "DeprecatedNotBoolean", member: `"deprecated":"yes"`, msg: `"deprecated" must be a Boolean: true or false, not "yes"`},
	{name: "DeprecationMigrationRelative", member: `"deprecationmigration":"/migrate"`, msg: `"deprecationmigration" must be an absolute URI (RFC 3986), not "/migrate"`},
}

// ruleEvent returns the minimal event with member added, or replacing the
// required attribute of the same name.
func ruleEvent(member string) string {
	ev := `{"specversion":"1.0"`
	for _, kv := range [][2]string{{"id", `"1"`}, {"source", `"/src"`}, {"type", `"t"`}} {
		if !strings.HasPrefix(member, `"`+kv[0]+`":`) {
			ev += `,"` + kv[0] + `":` + kv[1]
		}
	}
	return ev + "," + member + "}"
}

func TestCloudEventRules_Single(t *testing.T) {
	for _, tt := range ruleCases {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := schema.DecodeOne(eventgrid.CloudEventSchemaV1_0, "t1", []byte(ruleEvent(tt.member)), "", accepted)
			if checkRule(t, tt, 0, err) {
				mustHoldMember(t, ev.Body, tt.member)
			}
		})
	}
}

func TestCloudEventRules_Batch(t *testing.T) {
	for _, tt := range ruleCases {
		t.Run(tt.name, func(t *testing.T) {
			// The event at index 1 decides for the whole request.
			in := "[" + ceFull + "," + ruleEvent(tt.member) + "]"
			evs, err := schema.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1", []byte(in), accepted)
			if err != nil && evs != nil {
				t.Fatal("events returned with an error")
			}
			if checkRule(t, tt, 1, err) {
				if len(evs) != 2 {
					t.Fatalf("%d events, want 2", len(evs))
				}
				mustHoldMember(t, evs[1].Body, tt.member)
			}
		})
	}
}

func TestCloudEventRules_Binary(t *testing.T) {
	for _, tt := range ruleCases {
		if tt.header == nil {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			h := binaryHeader()
			h.Del(tt.header[0])
			h[http.CanonicalHeaderKey(tt.header[0])] = []string{tt.header[1]}
			ev, err := schema.DecodeBinary(h, nil, "", accepted)
			if err != nil && ev != nil {
				t.Fatal("event returned with an error")
			}
			if !checkRule(t, tt, 0, err) {
				return
			}
			// Binary mode carries every value as a string.
			var body, want map[string]any
			if json.Unmarshal(ev.Body, &body) != nil || json.Unmarshal([]byte("{"+tt.member+"}"), &want) != nil {
				t.Fatalf("Body %s or member %s is not JSON", ev.Body, tt.member)
			}
			for k, v := range want {
				if fmt.Sprint(body[k]) != fmt.Sprint(v) {
					t.Fatalf("Body %s: %q is %v, want %v", ev.Body, k, body[k], v)
				}
			}
		})
	}
}

// checkRule checks the error of decoding tt's event at index i, and
// reports whether the event was to be accepted.
func checkRule(t *testing.T, tt ruleCase, i int, err error) bool {
	t.Helper()
	if tt.msg != "" {
		MustFail(t, err, eventgrid.EInvalidEvent, fmt.Sprintf("event at index %d: %s", i, tt.msg))
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// mustHoldMember fails t unless body holds member byte for byte, or, for
// a null attribute (null data is a payload), leaves it out.
func mustHoldMember(t *testing.T, body []byte, member string) {
	t.Helper()
	switch name, null := strings.CutSuffix(member, ":null"); {
	case strings.Contains(string(body), member):
	case null && !strings.Contains(name, ","):
		if strings.Contains(string(body), name) {
			t.Fatalf("Body %s keeps the null attribute %s", body, name)
		}
	default:
		t.Fatalf("Body %s does not hold %s", body, member)
	}
}
