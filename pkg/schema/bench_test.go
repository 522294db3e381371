package schema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// benchData is a data payload that makes each benchmark event about 1 KB.
var benchData = func() string {
	var b strings.Builder
	b.WriteString(`{"deviceId":"sensor-042","readings":[`)
	for i := range 24 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"t":%d,"v":%d.25}`, 1700000000+i, 20+i)
	}
	b.WriteString(`],"status":"ok","tags":{"site":"plant-7","line":"B"}}`)
	return b.String()
}()

// benchBatch returns a JSON array of n events of schema s, about 1 KB each.
func benchBatch(s eventgrid.InputSchema, n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch s {
		case eventgrid.EventGridSchema:
			fmt.Fprintf(&b, `{"id":"6f1c2e2a-8a3b-4c55-9a7e-%012d","subject":"/devices/sensor-042/readings",`+
				`"eventType":"Contoso.Telemetry.Reading","eventTime":"2024-05-06T07:08:09.123Z","data":%s,"dataVersion":"1.0"}`, i, benchData)
		case eventgrid.CloudEventSchemaV1_0:
			fmt.Fprintf(&b, `{"specversion":"1.0","id":"6f1c2e2a-8a3b-4c55-9a7e-%012d","source":"/devices/sensor-042",`+
				`"type":"Contoso.Telemetry.Reading","subject":"readings","time":"2024-05-06T07:08:09.123Z",`+
				`"datacontenttype":"application/json","site":"plant-7","data":%s}`, i, benchData)
		default:
			fmt.Fprintf(&b, `{"seq":%d,"kind":"reading","payload":%s}`, i, benchData)
		}
	}
	b.WriteByte(']')
	return []byte(b.String())
}

func BenchmarkDecodeBatch(b *testing.B) {
	for _, s := range fuzzSchemas {
		b.Run(string(s), func(b *testing.B) {
			body := benchBatch(s, 100)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				evs, err := schema.DecodeBatch(s, "t1", body, accepted)
				if err != nil || len(evs) != 100 {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeBinary(b *testing.B) {
	h := binaryHeader("Content-Type", "application/json", "ce-subject", "readings", "ce-site", "plant%207")
	body := []byte(benchData)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.DecodeBinary(h, body, "", accepted); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckJSON compares, on the DecodeBatch bodies, the validation
// pass with and without the I-JSON checks (duplicate names, UTF-8) that
// DecodeBatch makes: their difference is what those checks cost a publish.
func BenchmarkCheckJSON(b *testing.B) {
	for _, s := range fuzzSchemas {
		body := benchBatch(s, 100)
		b.Run(string(s)+"/ValidCount", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				rawjson.ValidCount(body)
			}
		})
		b.Run(string(s)+"/ValidStrict", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := rawjson.ValidStrict(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeToCloudEvents: 100 EventGridSchema events of 1 KB
// decoded for subscriptions that take CloudEvents: decoded as published,
// then each converted into a block of its own (as the publish path did),
// against built as their CloudEvents.
func BenchmarkDecodeToCloudEvents(b *testing.B) {
	body := benchBatch(eventgrid.EventGridSchema, 100)
	b.Run("DecodeThenConvert", func(b *testing.B) {
		b.ReportAllocs()
		var s schema.Scratch
		for b.Loop() {
			evs, err := s.DecodeBatch(eventgrid.EventGridSchema, "t1", body, accepted)
			if err != nil {
				b.Fatal(err)
			}
			block := make([]byte, 0, len(body)+100*160)
			for _, ev := range evs {
				out, err := schema.AppendCloudEventOf(block[len(block):], ev)
				if err != nil {
					b.Fatal(err)
				}
				block = block[:len(block)+len(out)]
			}
		}
	})
	b.Run("ToCloudEvents", func(b *testing.B) {
		b.ReportAllocs()
		s := schema.Scratch{ToCloudEvents: true}
		for b.Loop() {
			evs, err := s.DecodeBatch(eventgrid.EventGridSchema, "t1", body, accepted)
			if err != nil || !evs[99].Converted {
				b.Fatal(err)
			}
		}
	})
}
