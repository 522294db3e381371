package kubernetes_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// dashboardFile is the Grafana dashboard the chart offers.
const dashboardFile = chartDir + "/dashboards/edgegrid.json"

// dashboardQuery is one PromQL query of the dashboard, and where it is.
type dashboardQuery struct {
	where string
	expr  string
}

// dashboardQueries returns every query of the dashboard: the panels'
// targets and the template variables' label_values selectors, with
// Grafana's variables replaced by what they expand to.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Type    string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name       string
				Type       string
				Definition string
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$topic", ".*", "$subscription", ".*")
	var out []dashboardQuery
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, dashboardQuery{"panel " + p.Title, vars.Replace(tg.Expr)})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_]+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		out = append(out, dashboardQuery{"variable " + v.Name, vars.Replace(m[1])})
	}
	if len(out) < 20 {
		t.Fatalf("%s has %d queries; expected the whole dashboard", dashboardFile, len(out))
	}
	return out
}

// selectorUse is a metric a query reads and the labels it names on it.
type selectorUse struct {
	metrics []string // alternatives of a __name__ regex, or the name
	labels  []string // in matchers and in the by() of enclosing sums
}

// uses parses expr and returns the metrics it reads, with the labels it
// names for each.
func uses(expr string) ([]selectorUse, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []selectorUse
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		u := selectorUse{}
		if vs.Name != "" {
			u.metrics = []string{vs.Name}
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				if vs.Name == "" {
					u.metrics = strings.Split(m.Value, "|")
				}
				continue
			}
			u.labels = append(u.labels, m.Name)
		}
		for _, p := range path {
			if a, ok := p.(*parser.AggregateExpr); ok && !a.Without {
				u.labels = append(u.labels, a.Grouping...)
			}
		}
		out = append(out, u)
		return nil
	})
	return out, nil
}

// TestDashboardQueriesParse: every query of the dashboard is PromQL.
func TestDashboardQueriesParse(t *testing.T) {
	for _, q := range dashboardQueries(t) {
		if _, err := uses(q.expr); err != nil {
			t.Errorf("%s: %q does not parse: %v", q.where, q.expr, err)
		}
	}
}

// TestDashboardSeriesExist runs the broker as the chart's pod does, with
// the Prometheus reporter, makes it publish, deliver, fail, drop,
// dead-letter and refuse, and serve queue subscriptions, and then checks
// that every metric the dashboard reads is among those it exposes, with
// every label the dashboard names on it.
func TestDashboardSeriesExist(t *testing.T) {
	store := azurite.Start(t)
	ok := startSink(t, false)
	opts, pool := podValues(t, map[string]string{"delivered": ok.URL, "refused": "http://127.0.0.1:1/closed"})
	extra := filepath.Join(t.TempDir(), "metrics-values.yaml")
	testpki.MustWriteFile(t, extra, []byte("metrics: {reporterType: prometheus}\n"+
		"config: {broker__queueTimeScale: 0.01, broker__deadLetterFlushIntervalInSeconds: 1, broker__deadLetterMaxWaitInSeconds: 2}\n"))
	opts.valuesFiles = append(opts.valuesFiles, extra)
	p := startPod(t, render(t, opts), pool)

	mgmt := func(method, path string, body any) {
		t.Helper()
		req := brokertest.NewRequest(t, method, p.httpsURL+path+"?api-version=2019-01-01", "application/json", body)
		req.Header.Set("aeg-sas-key", p.sasKey)
		if status, _, b := brokertest.Send(t, p.client, req); status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
	}
	deadLetter := func(connStr string) map[string]any {
		return map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{"blobContainerName": "deadletters", "connectionString": connStr}}
	}
	refused := map[string]any{"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": "http://127.0.0.1:1/closed"}}
	once := map[string]any{"maxDeliveryAttempts": 1}
	mgmt(http.MethodPut, "/topics/sensors/eventSubscriptions/stored", map[string]any{"properties": map[string]any{
		"destination": refused, "retryPolicy": once, "deadLetterDestination": deadLetter(store.ConnectionString(azurite.Key))}})
	mgmt(http.MethodPut, "/topics/sensors/eventSubscriptions/unstored", map[string]any{"properties": map[string]any{
		"destination": refused, "retryPolicy": once,
		"deadLetterDestination": deadLetter("DefaultEndpointsProtocol=http;AccountName=x;AccountKey=" + azurite.Key + ";BlobEndpoint=http://127.0.0.1:1/x;")}})
	queue := func(q map[string]any) map[string]any {
		return map[string]any{"properties": map[string]any{"deliveryConfiguration": map[string]any{"deliveryMode": "Queue", "queue": q}}}
	}
	mgmt(http.MethodPut, "/topics/sensors/eventSubscriptions/pulled", queue(map[string]any{"maxDeliveryCount": 1}))
	mgmt(http.MethodPut, "/topics/sensors/eventSubscriptions/pulledstored", queue(map[string]any{"maxDeliveryCount": 1,
		"deadLetterDestination": deadLetter(store.ConnectionString(azurite.Key))}))

	p.publish(t, "sensors", "e1", "e2", "e3")
	waitFor(t, 30*time.Second, p.proc.log, func() error { return ok.missing("e1", "e2", "e3") })
	// Queue subscriptions: acknowledge one, reject one (dropped, or
	// dead-lettered), and let one lock expire.
	receive := func(sub string, n int) []string {
		var got struct {
			Value []struct{ BrokerProperties struct{ LockToken string } }
		}
		req := brokertest.NewRequest(t, http.MethodPost, fmt.Sprintf("%s/topics/sensors/eventSubscriptions/%s:receive?api-version=2024-06-01&maxEvents=%d&maxWaitTime=10", p.httpsURL, sub, n), "", nil)
		req.Header.Set("aeg-sas-key", p.sasKey)
		status, _, b := brokertest.Send(t, p.client, req)
		if status != http.StatusOK || json.Unmarshal(b, &got) != nil {
			t.Fatalf("receive %s: %d %s", sub, status, b)
		}
		var tokens []string
		for _, v := range got.Value {
			tokens = append(tokens, v.BrokerProperties.LockToken)
		}
		return tokens
	}
	settle := func(sub, action string, tokens ...string) {
		req := brokertest.NewRequest(t, http.MethodPost, p.httpsURL+"/topics/sensors/eventSubscriptions/"+sub+":"+action+"?api-version=2024-06-01",
			"application/json", map[string]any{"lockTokens": tokens})
		req.Header.Set("aeg-sas-key", p.sasKey)
		if status, _, b := brokertest.Send(t, p.client, req); status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", action, sub, status, b)
		}
	}
	for _, sub := range []string{"pulled", "pulledstored"} {
		tokens := receive(sub, 3)
		if len(tokens) != 3 {
			t.Fatalf("received %d events of %s, want 3", len(tokens), sub)
		}
		settle(sub, "acknowledge", tokens[0])
		settle(sub, "reject", tokens[1])
	}
	// A request without a credential, for the authentication failures.
	if resp, err := p.client.Get(p.httpsURL + "/topics?api-version=2019-01-01"); err == nil {
		resp.Body.Close()
	}

	t.Log("traffic done; scraping")
	var exposed map[string][]string
	queries := dashboardQueries(t)
	waitFor(t, 30*time.Second, p.proc.log, func() error {
		exposed = p.metrics(t)
		for _, q := range queries {
			us, err := uses(q.expr)
			if err != nil {
				t.Fatalf("%s: %v", q.where, err)
			}
			for _, u := range us {
				if err := seriesExist(u, exposed); err != nil {
					return fmt.Errorf("%s: %w", q.where, err)
				}
			}
		}
		return nil
	})
	t.Log("every series found")
}

// seriesExist checks that the broker exposes each metric u reads, with
// each label u names on it.
func seriesExist(u selectorUse, exposed map[string][]string) error {
	for _, m := range u.metrics {
		labels, ok := exposed[m]
		if !ok {
			return fmt.Errorf("the broker exposes no series %s", m)
		}
		for _, l := range u.labels {
			if l != "le" && !slices.Contains(labels, l) || l == "le" && !strings.HasSuffix(m, "_bucket") {
				return fmt.Errorf("series %s has no label %s (it has %v)", m, l, labels)
			}
		}
	}
	return nil
}

// metrics scrapes /metrics and returns each series name with the labels
// its samples carry.
func (p *pod) metrics(t *testing.T) map[string][]string {
	t.Helper()
	req := brokertest.NewRequest(t, http.MethodGet, p.httpsURL+"/metrics", "", nil)
	req.Header.Set("aeg-sas-key", p.sasKey)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		name = strings.Fields(name)[0]
		if rest != "" {
			rest, _, _ = strings.Cut(rest, "}")
		}
		for _, m := range label.FindAllStringSubmatch(rest, -1) {
			if !slices.Contains(out[name], m[1]) {
				out[name] = append(out[name], m[1])
			}
		}
		if _, ok := out[name]; !ok {
			out[name] = []string{}
		}
	}
	return out
}

// TestDashboardConfigMap: the chart offers the dashboard only when asked,
// as a ConfigMap with the label Grafana's sidecar looks for and the
// dashboard file as it is in the repository.
func TestDashboardConfigMap(t *testing.T) {
	dashboards := func(r rendered) []*corev1.ConfigMap {
		var out []*corev1.ConfigMap
		for _, o := range r.find("ConfigMap") {
			if cm := typed[corev1.ConfigMap](t, o); cm.Labels["grafana_dashboard"] != "" {
				out = append(out, cm)
			}
		}
		return out
	}
	if got := dashboards(render(t, renderOpts{})); len(got) != 0 {
		t.Errorf("the defaults render %d dashboard ConfigMaps, want none", len(got))
	}
	r := render(t, renderOpts{values: "grafanaDashboard: {enabled: true, labels: {team: ops}, annotations: {grafana_folder: Brokers}}\n"})
	got := dashboards(r)
	if len(got) != 1 {
		t.Fatalf("rendered %d dashboard ConfigMaps, want 1", len(got))
	}
	cm := got[0]
	want, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["grafana_dashboard"] != "1" || cm.Labels["team"] != "ops" || cm.Annotations["grafana_folder"] != "Brokers" {
		t.Errorf("labels %v, annotations %v", cm.Labels, cm.Annotations)
	}
	if cm.Namespace != namespace {
		t.Errorf("namespace %q, want %q", cm.Namespace, namespace)
	}
	if cm.Data["edgegrid.json"] != strings.TrimRight(string(want), "\n") {
		t.Errorf("edgegrid.json in the ConfigMap differs from %s", dashboardFile)
	}
	if !json.Valid([]byte(cm.Data["edgegrid.json"])) {
		t.Error("the ConfigMap's dashboard is not JSON")
	}
	// The broker's own ConfigMap is still there, and still one.
	if n := len(r.find("ConfigMap")); n != 2 {
		t.Errorf("rendered %d ConfigMaps, want the broker's and the dashboard", n)
	}
	// A value the schema does not know is refused.
	if _, err := renderErr(t, renderOpts{values: "grafanaDashboard: {enabled: true, folder: x}\n"}); err == nil {
		t.Error("an unknown grafanaDashboard value was accepted")
	}
}
