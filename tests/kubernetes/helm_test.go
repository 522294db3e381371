package kubernetes_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, relative to this module.
const chartDir = "../../charts/edgegrid"

// Release name and namespace the tests render with.
const (
	releaseName = "eg"
	namespace   = "edgegrid"
)

// helm runs the helm pinned as a tool of this module (go tool helm) and
// returns its standard output; stderr goes into the error.
func helm(args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"tool", "helm"}, args...)...)
	// helm keeps no state the tests need: point its directories at a
	// throwaway place so no user configuration leaks in.
	home, err := os.MkdirTemp("", "edgegrid-helm-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "kubeconfig"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// renderOpts says how to render the chart.
type renderOpts struct {
	valuesFiles []string          // -f, in order
	values      string            // YAML written to a file and given last
	setFiles    map[string]string // --set-file key=path
	apiVersions []string          // --api-versions
	// noKey leaves out testKey: helm template has no cluster to keep a
	// generated SAS key in, so without a key the chart refuses.
	noKey bool
}

// testKey is the SAS key every render is given first (unless noKey), as a
// render without a cluster must be.
const testKey = "render-test-key"

// rendered is the output of helm template: every object, parsed.
type rendered struct {
	objects []*unstructured.Unstructured
	raw     string
}

// render runs helm template and parses what it prints.
func render(tb testing.TB, o renderOpts) rendered {
	tb.Helper()
	out, err := renderErr(tb, o)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// renderErr is render returning helm's error instead of failing.
func renderErr(tb testing.TB, o renderOpts) (rendered, error) {
	tb.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", namespace}
	if !o.noKey {
		f := filepath.Join(tb.TempDir(), "key-values.yaml")
		if err := os.WriteFile(f, []byte("auth: {sasKeys: {key1: "+testKey+"}}\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "-f", f)
	}
	for _, f := range o.valuesFiles {
		args = append(args, "-f", f)
	}
	if o.values != "" {
		f := filepath.Join(tb.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(o.values), 0o600); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "-f", f)
	}
	keys := make([]string, 0, len(o.setFiles))
	for k := range o.setFiles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--set-file", k+"="+o.setFiles[k])
	}
	for _, a := range o.apiVersions {
		args = append(args, "--api-versions", a)
	}
	out, err := helm(args...)
	if err != nil {
		return rendered{}, err
	}
	return rendered{objects: parseObjects(tb, out), raw: out}, nil
}

// parseObjects splits a multi-document YAML stream into objects.
func parseObjects(tb testing.TB, stream string) []*unstructured.Unstructured {
	tb.Helper()
	var objs []*unstructured.Unstructured
	dec := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	for {
		doc, err := dec.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			tb.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		if m == nil {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// find returns the objects of kind, in rendering order.
func (r rendered) find(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r.objects {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// kinds lists the kinds rendered, sorted.
func (r rendered) kinds() []string {
	var out []string
	for _, o := range r.objects {
		out = append(out, o.GetKind())
	}
	sort.Strings(out)
	return out
}

// one decodes the single object of kind into a typed object.
func one[T any](tb testing.TB, r rendered, kind string) *T {
	tb.Helper()
	objs := r.find(kind)
	if len(objs) != 1 {
		tb.Fatalf("rendered %d objects of kind %s, want 1; kinds: %v", len(objs), kind, r.kinds())
	}
	return typed[T](tb, objs[0])
}

// typed converts an unstructured object to T, refusing unknown fields, so
// that a field the API does not know fails the test as it would fail apply.
func typed[T any](tb testing.TB, u *unstructured.Unstructured) *T {
	tb.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	var v T
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		tb.Fatalf("%s %s does not decode strictly as %T: %v", u.GetKind(), u.GetName(), v, err)
	}
	return &v
}

func deployment(tb testing.TB, r rendered) *appsv1.Deployment {
	tb.Helper()
	return one[appsv1.Deployment](tb, r, "Deployment")
}

func service(tb testing.TB, r rendered) *corev1.Service {
	tb.Helper()
	return one[corev1.Service](tb, r, "Service")
}

func secret(tb testing.TB, r rendered) *corev1.Secret {
	tb.Helper()
	return one[corev1.Secret](tb, r, "Secret")
}

func configMap(tb testing.TB, r rendered) *corev1.ConfigMap {
	tb.Helper()
	return one[corev1.ConfigMap](tb, r, "ConfigMap")
}

func networkPolicy(tb testing.TB, r rendered) *networkingv1.NetworkPolicy {
	tb.Helper()
	return one[networkingv1.NetworkPolicy](tb, r, "NetworkPolicy")
}

func pdb(tb testing.TB, r rendered) *policyv1.PodDisruptionBudget {
	tb.Helper()
	return one[policyv1.PodDisruptionBudget](tb, r, "PodDisruptionBudget")
}

// ciValues lists the scenario files charts/edgegrid/ci/*-values.yaml.
func ciValues(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) < 4 {
		tb.Fatalf("found %d scenario files in %s/ci, want at least 4", len(files), chartDir)
	}
	return files
}

// container returns the broker container of d.
func container(tb testing.TB, d *appsv1.Deployment) corev1.Container {
	tb.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "edgegrid" {
		tb.Fatalf("containers = %d, want the one named edgegrid", len(cs))
	}
	return cs[0]
}

// envOf returns the container's env by name.
func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}
