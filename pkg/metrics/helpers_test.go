package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// scrape is one parsed scrape of a metrics endpoint.
type scrape map[string]*dto.MetricFamily

// MustScrape serves h on a real HTTP server, GETs it, and parses the body
// with the Prometheus text parser.
func MustScrape(tb testing.TB, h http.Handler) scrape {
	tb.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		tb.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Fatalf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		tb.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// find returns the series of family name whose labels are exactly labels
// (given as name, value pairs).
func (s scrape) find(name string, labels ...string) (*dto.Metric, bool) {
	mf, ok := s[name]
	if !ok {
		return nil, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
				match = false
				break
			}
		}
		if match {
			return m, true
		}
	}
	return nil, false
}

// value returns a counter's or gauge's value, or a histogram's sample count
// (name "<family>#count") or sum ("<family>#sum").
func (s scrape) value(name string, labels ...string) (float64, bool) {
	family, part, _ := strings.Cut(name, "#")
	m, ok := s.find(family, labels...)
	if !ok {
		return 0, false
	}
	switch {
	case part == "count":
		return float64(m.GetHistogram().GetSampleCount()), true
	case part == "sum":
		return m.GetHistogram().GetSampleSum(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	default:
		return m.GetGauge().GetValue(), true
	}
}

// seriesWith lists the families holding series of the eventgrid_ families that carry the
// label name=value.
func (s scrape) seriesWith(name, value string) []string {
	var found []string
	for fam, mf := range s {
		if !strings.HasPrefix(fam, "eventgrid_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == name && l.GetValue() == value {
					found = append(found, fam)
				}
			}
		}
	}
	sort.Strings(found)
	return found
}

// series is one expected series value.
type series struct {
	name   string
	labels []string
	want   float64
}

func assertSeries(t *testing.T, s scrape, want []series) {
	t.Helper()
	for _, w := range want {
		t.Run(w.name+"{"+strings.Join(w.labels, ",")+"}", func(t *testing.T) {
			got, ok := s.value(w.name, w.labels...)
			if !ok {
				t.Fatalf("series missing")
			}
			if got != w.want {
				t.Errorf("value %v, want %v", got, w.want)
			}
		})
	}
}

func newSub(uid uint64, topic, name string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{UID: uid, Topic: topic, Name: name}
}
