package kubernetes_test

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// TestLintAndTemplate runs helm lint --strict and helm template on every
// scenario file, and checks the objects each one renders.
func TestLintAndTemplate(t *testing.T) {
	for _, f := range ciValues(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if out, err := helm("lint", "--strict", chartDir, "--namespace", namespace, "-f", f); err != nil {
				t.Fatal(err)
			} else if !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
			r := render(t, renderOpts{valuesFiles: []string{f}, apiVersions: []string{"monitoring.coreos.com/v1"}})
			for _, kind := range []string{"ConfigMap", "Deployment", "Service", "ServiceAccount"} {
				if len(r.find(kind)) != 1 {
					t.Errorf("%s rendered %d times, want once; kinds: %v", kind, len(r.find(kind)), r.kinds())
				}
			}
			d := deployment(t, r)
			for _, o := range r.objects {
				if o.GetNamespace() != namespace {
					t.Errorf("%s %s in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), namespace)
				}
			}
			// A PodDisruptionBudget only makes sense with more than one pod.
			if want := *d.Spec.Replicas > 1; (len(r.find("PodDisruptionBudget")) == 1) != want {
				t.Errorf("replicas %d: PodDisruptionBudget rendered = %v, want %v", *d.Spec.Replicas, !want, want)
			}
		})
	}
}

// TestDefaults checks the defaults a user gets without values: one pod,
// HTTPS only on a ClusterIP Service, SAS keys from the chart's Secret.
func TestDefaults(t *testing.T) {
	r := render(t, renderOpts{})
	d := deployment(t, r)
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want 1", *d.Spec.Replicas)
	}
	if s := service(t, r); s.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("service type = %s, want ClusterIP", s.Spec.Type)
	}
	if got := r.kinds(); slices.Contains(got, "PodDisruptionBudget") || slices.Contains(got, "NetworkPolicy") || slices.Contains(got, "ServiceMonitor") {
		t.Errorf("defaults render %v; want no PodDisruptionBudget, NetworkPolicy or ServiceMonitor", got)
	}
	sa := one[corev1.ServiceAccount](t, r, "ServiceAccount")
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("ServiceAccount automountServiceAccountToken is not false")
	}
	if pod := d.Spec.Template.Spec; pod.ServiceAccountName != sa.Name || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pod serviceAccountName %q (want %q), automountServiceAccountToken %v (want false)", pod.ServiceAccountName, sa.Name, pod.AutomountServiceAccountToken)
	}
	if k := secret(t, r).Data["sas-key1"]; string(k) != testKey {
		t.Errorf("sas-key1 = %q, want the key given", k)
	}
	// The ConfigMap holds valid JSON of the declared-config shape, mounted
	// where desired_config_file points.
	var doc map[string]map[string]any
	if err := json.Unmarshal([]byte(configMap(t, r).Data["desired-config.json"]), &doc); err != nil {
		t.Fatalf("desired-config.json: %v", err)
	}
	if _, ok := doc["topics"]; !ok {
		t.Errorf("desired-config.json has no topics: %v", doc)
	}
	c := container(t, d)
	env := envOf(c)
	file := env["desired_config_file"].Value
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == "config" && file == m.MountPath+"/desired-config.json" {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("desired_config_file = %q is not desired-config.json in the config volume's mount", file)
	}
}

// TestPodHardening checks the pod and container security settings on every
// scenario.
func TestPodHardening(t *testing.T) {
	for _, f := range ciValues(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d := deployment(t, render(t, renderOpts{valuesFiles: []string{f}}))
			pod := d.Spec.Template.Spec
			if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
				psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext = %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
			}
			c := container(t, d)
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Fatal("container has no securityContext")
			case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
				t.Error("runAsNonRoot is not true")
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Error("readOnlyRootFilesystem is not true")
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Error("allowPrivilegeEscalation is not false")
			case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
				t.Errorf("capabilities = %+v, want all dropped and none added", sc.Capabilities)
			case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
				t.Error("seccomp profile is not RuntimeDefault")
			}

			// A small request, a memory limit above the queue limit and
			// GOMEMLIMIT below the limit.
			req, limit := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
			if req.IsZero() || req.Cmp(resource.MustParse("128Mi")) > 0 {
				t.Errorf("memory request = %s, want a small one (the broker idles near 20 MB)", req.String())
			}
			queued := int64(268435456)
			if v, ok := envOf(c)["broker__maxQueuedBytes"]; ok {
				queued, _ = strconv.ParseInt(v.Value, 10, 64)
			}
			if limit.Value() <= queued {
				t.Errorf("memory limit %s is not above broker__maxQueuedBytes %d", limit.String(), queued)
			}
			gml, err := strconv.ParseInt(envOf(c)["GOMEMLIMIT"].Value, 10, 64)
			if err != nil || gml <= 0 || gml >= limit.Value() {
				t.Errorf("GOMEMLIMIT = %q, want a byte count below the limit %d", envOf(c)["GOMEMLIMIT"].Value, limit.Value())
			}
			// Only the mounted volumes are writable; the root is not.
			for _, m := range c.VolumeMounts {
				if m.Name != "tmp" && !m.ReadOnly {
					t.Errorf("volume %s is mounted writable", m.Name)
				}
			}
		})
	}
}

// TestMemoryGuard checks that the chart refuses a memory limit whose
// GOMEMLIMIT (90 % of it) cannot hold everything the broker may hold at
// once: the queue budget, the request bodies being read and the receive
// answers being written (each a quarter of the queue budget by default)
// and the runtime's 32 MiB.
func TestMemoryGuard(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		refused      bool
	}{
		{"at the queue budget", "resources: {limits: {memory: 256Mi}}", true},
		{"just above it so no room for bodies", "resources: {limits: {memory: 257Mi}}", true},
		{"one MiB short", "resources: {limits: {memory: 462Mi}}", true},
		{"just enough", "resources: {limits: {memory: 463Mi}}", false},
		{"the default", "", false},
		{"a smaller queue", "resources: {limits: {memory: 256Mi}}\nconfig: {broker__maxQueuedBytes: 104857600}", false},
		{"a larger body budget", "config: {api__maxBodyBytesInFlight: 134217728}", true},
		{"a larger body budget and limit", "resources: {limits: {memory: 640Mi}}\nconfig: {api__maxBodyBytesInFlight: 134217728}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderErr(t, renderOpts{values: tc.values})
			switch {
			case !tc.refused && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused && err == nil:
				t.Fatal("rendered, want a refusal")
			case tc.refused:
				for _, want := range []string{"resources.limits.memory", "GOMEMLIMIT", "broker__maxQueuedBytes", "api__maxBodyBytesInFlight", "receive answers", "Give at least"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the refusal does not name %q: %v", want, err)
					}
				}
			}
		})
	}
	t.Run("the figures of 257Mi", func(t *testing.T) {
		_, err := renderErr(t, renderOpts{values: "resources: {limits: {memory: 257Mi}}"})
		if err == nil || !strings.Contains(err.Error(), "GOMEMLIMIT, 90 % of it, is 242535628 bytes") || !strings.Contains(err.Error(), "need 436207616. Give at least 463Mi") {
			t.Errorf("refusal %v", err)
		}
	})
	_, err := renderErr(t, renderOpts{values: "resources:\n  limits:\n    memory: 1.5Gi\n"})
	if err == nil || !strings.Contains(err.Error(), "resources.limits.memory") {
		t.Fatalf("1.5Gi: err = %v, want a clear refusal naming resources.limits.memory", err)
	}
}

// TestSASKeyWithoutCluster: helm template (or Argo CD) has no cluster to
// keep a generated key in, so an empty key1 is refused with a message that
// says what to give instead; an explicit key, an existingSecret or SAS keys
// turned off render.
func TestSASKeyWithoutCluster(t *testing.T) {
	_, err := renderErr(t, renderOpts{noKey: true})
	for _, want := range []string{"auth.sasKeys.key1 is empty", "no cluster", "helm template", "Argo CD", "existingSecret.name", "docs/kubernetes.md"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("render without a key: %v, want a refusal saying %q", err, want)
		}
	}
	if s := secret(t, render(t, renderOpts{noKey: true, values: "auth: {sasKeys: {key1: mine}}"})); string(s.Data["sas-key1"]) != "mine" {
		t.Errorf("sas-key1 = %q, want the key given", s.Data["sas-key1"])
	}
	if r := render(t, renderOpts{noKey: true, valuesFiles: []string{filepath.Join(chartDir, "ci", "existingsecret-values.yaml")}}); len(r.find("Secret")) != 0 {
		t.Error("a Secret rendered with existingSecret")
	}
	if s := secret(t, render(t, renderOpts{noKey: true, values: "auth: {sasKeys: {enabled: false}}"})); len(s.Data["sas-key1"]) != 0 {
		t.Errorf("sas-key1 rendered with SAS keys off")
	}
}

// TestReplicasWithQueueSubscriptions: more than one replica with a declared
// queue subscription is refused, naming both and why (each replica would
// keep its own queue); one replica with queues, and several without, render
// as before, each pod told how many replicas run.
func TestReplicasWithQueueSubscriptions(t *testing.T) {
	const queues = `desiredConfig:
  topics: {orders: {}}
  eventSubscriptions:
    app1: {topic: orders, deliveryConfiguration: {deliveryMode: Queue, queue: {}}}
    twin-style: {topic: orders, DeliveryConfiguration: '{"DeliveryMode": "queue"}'}
    hook: {topic: orders, destination: {endpointType: WebHook, properties: {endpointUrl: "https://app.example/hook"}}}
`
	_, err := renderErr(t, renderOpts{values: "replicaCount: 2\n" + queues})
	for _, want := range []string{"replicaCount is 2", "queue subscription(s) orders/app1, orders/twin-style:", "its own queue", "can be received only from that pod", "Set replicaCount to 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("2 replicas with queues: %v, want a refusal saying %q", err, want)
		}
	}
	for _, tc := range []struct {
		values, replicas string
	}{
		{"replicaCount: 1\n" + queues, "1"},
		{"replicaCount: 3\n" + strings.ReplaceAll(strings.ReplaceAll(queues, "deliveryMode: Queue", "deliveryMode: Push"), "queue", "push"), "3"},
		{"replicaCount: 0\n", "1"},
	} {
		r := render(t, renderOpts{values: tc.values})
		if got := envOf(container(t, deployment(t, r)))["broker__replicas"].Value; got != tc.replicas {
			t.Errorf("%q: broker__replicas = %q, want %s", tc.values, got, tc.replicas)
		}
	}
}

// TestProbes checks that the pod is probed on the listener that runs, that
// readiness asks /readyz (ready once the declared state is applied) and that
// startup and liveness ask /healthz.
func TestProbes(t *testing.T) {
	for _, tc := range []struct{ policy, port, scheme string }{
		{"strict", "https", "HTTPS"},
		{"enabled", "http", "HTTP"},
		{"disabled", "http", "HTTP"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c := container(t, deployment(t, render(t, renderOpts{values: "tlsPolicy: " + tc.policy + "\n"})))
			for name, tt := range map[string]struct {
				p    *corev1.Probe
				path string
			}{
				"startup":   {c.StartupProbe, "/healthz"},
				"readiness": {c.ReadinessProbe, "/readyz"},
				"liveness":  {c.LivenessProbe, "/healthz"},
			} {
				if tt.p == nil || tt.p.HTTPGet == nil {
					t.Errorf("%s probe missing or not httpGet", name)
					continue
				}
				g := tt.p.HTTPGet
				if g.Path != tt.path || g.Port != intstr.FromString(tc.port) || string(g.Scheme) != tc.scheme {
					t.Errorf("%s probe = %s %s %s, want %s %s %s", name, g.Scheme, g.Port.String(), g.Path, tc.scheme, tc.port, tt.path)
				}
			}
			env := envOf(c)
			if env["api__health__httpProbe__enabled"].Value != "true" {
				t.Error("api__health__httpProbe__enabled is not true, so the probes' routes would not be served")
			}
		})
	}
}

// TestPortsByTLSPolicy checks the container and Service ports each
// tlsPolicy opens, by name.
func TestPortsByTLSPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   map[string]int32 // port name → container port
	}{
		{"strict", map[string]int32{"https": 4438}},
		{"enabled", map[string]int32{"https": 4438, "http": 5888}},
		{"disabled", map[string]int32{"http": 5888}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			r := render(t, renderOpts{values: "tlsPolicy: " + tc.policy + "\nservice:\n  httpsPort: 443\n  httpPort: 80\n"})
			c := container(t, deployment(t, r))
			got := map[string]int32{}
			for _, p := range c.Ports {
				got[p.Name] = p.ContainerPort
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("container ports = %v, want %v", got, tc.want)
			}
			env := envOf(c)
			if env["inbound__serverAuth__tlsPolicy"].Value != tc.policy || env["api__httpsPort"].Value != "4438" || env["api__httpPort"].Value != "5888" {
				t.Errorf("env tlsPolicy %q httpsPort %q httpPort %q", env["inbound__serverAuth__tlsPolicy"].Value, env["api__httpsPort"].Value, env["api__httpPort"].Value)
			}
			svc := service(t, r)
			gotSvc := map[string]int32{}
			for _, p := range svc.Spec.Ports {
				gotSvc[p.Name] = p.Port
				if p.TargetPort != intstr.FromString(p.Name) {
					t.Errorf("service port %s targets %s, want the container port of the same name", p.Name, p.TargetPort.String())
				}
			}
			wantSvc := map[string]int32{}
			for name := range tc.want {
				wantSvc[name] = map[string]int32{"https": 443, "http": 80}[name]
			}
			if !maps.Equal(gotSvc, wantSvc) {
				t.Errorf("service ports = %v, want %v", gotSvc, wantSvc)
			}
		})
	}
}

// TestSecretReferences checks where the keys and certificates come from:
// the chart's Secret, or an existing one, and that every reference names a
// key the Secret has.
func TestSecretReferences(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "chart test CA")
	certFile, keyFile := ca.WriteFiles(t, dir, "eg-edgegrid.edgegrid.svc", "eg-edgegrid.edgegrid.svc")
	caFile := filepath.Join(dir, "ca.pem")
	testpki.MustWriteFile(t, caFile, ca.PEM())

	t.Run("chart secret", func(t *testing.T) {
		r := render(t, renderOpts{
			values:   "tlsPolicy: enabled\nauth:\n  sasKeys:\n    key1: one\n    key2: two\n  clientCert:\n    enabled: true\n",
			setFiles: map[string]string{"tls.cert": certFile, "tls.key": keyFile, "tls.ca": caFile, "auth.clientCert.ca": caFile},
		})
		s := secret(t, r)
		if string(s.Data["sas-key1"]) != "one" || string(s.Data["sas-key2"]) != "two" {
			t.Errorf("secret sas keys = %q, %q", s.Data["sas-key1"], s.Data["sas-key2"])
		}
		for _, k := range []string{"tls.crt", "tls.key", "ca.crt", "client-ca.crt"} {
			if len(s.Data[k]) == 0 {
				t.Errorf("secret has no %s", k)
			}
		}
		checkSecretRefs(t, r, s.Name, s.Data)
		env := envOf(container(t, deployment(t, r)))
		for k, want := range map[string]string{
			"inbound__serverAuth__serverCert__source":  "File",
			"inbound__serverAuth__serverCert__caFile":  "/etc/edgegrid/tls/ca.crt",
			"inbound__clientAuth__clientCert__source":  "File",
			"inbound__clientAuth__clientCert__caFile":  "/etc/edgegrid/tls/client-ca.crt",
			"inbound__clientAuth__clientCert__enabled": "true",
		} {
			if env[k].Value != want {
				t.Errorf("%s = %q, want %q", k, env[k].Value, want)
			}
		}
	})

	t.Run("existing secret", func(t *testing.T) {
		r := render(t, renderOpts{valuesFiles: []string{filepath.Join(chartDir, "ci", "existingsecret-values.yaml")}})
		if n := len(r.find("Secret")); n != 0 {
			t.Errorf("rendered %d Secrets with existingSecret, want none", n)
		}
		checkSecretRefs(t, r, "edgegrid-credentials", map[string][]byte{
			"sas-key1": nil, "sas-key2": nil, "tls.crt": nil, "tls.key": nil, "ca.crt": nil, "client-ca.crt": nil,
		})
	})

	t.Run("no certificate", func(t *testing.T) {
		// Without a certificate the broker makes its own: no File source,
		// nothing mounted from the Secret.
		r := render(t, renderOpts{})
		env := envOf(container(t, deployment(t, r)))
		if _, ok := env["inbound__serverAuth__serverCert__source"]; ok {
			t.Error("serverCert source set without a certificate")
		}
		checkSecretRefs(t, r, secret(t, r).Name, secret(t, r).Data)
	})
}

// checkSecretRefs checks that every Secret the Deployment uses is name and
// that each key it reads is in keys (unless the reference is optional).
func checkSecretRefs(t *testing.T, r rendered, name string, keys map[string][]byte) {
	t.Helper()
	d := deployment(t, r)
	for _, e := range container(t, d).Env {
		if e.ValueFrom == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil {
			t.Errorf("env %s is not from a Secret", e.Name)
			continue
		}
		if ref.Name != name {
			t.Errorf("env %s reads Secret %q, want %q", e.Name, ref.Name, name)
		}
		if _, ok := keys[ref.Key]; !ok && (ref.Optional == nil || !*ref.Optional) {
			t.Errorf("env %s reads key %q the Secret does not have", e.Name, ref.Key)
		}
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		if v.Secret.SecretName != name {
			t.Errorf("volume %s mounts Secret %q, want %q", v.Name, v.Secret.SecretName, name)
		}
		for _, it := range v.Secret.Items {
			if _, ok := keys[it.Key]; !ok {
				t.Errorf("volume %s mounts key %q the Secret does not have", v.Name, it.Key)
			}
		}
	}
}

// TestSchemaRefusesUnknownValues checks that a misspelt value anywhere fails
// with a message naming it.
func TestSchemaRefusesUnknownValues(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"replicaCuont: 2\n", "replicaCuont"},
		{"service:\n  tpye: NodePort\n", "tpye"},
		{"auth:\n  sasKeys:\n    key3: x\n", "key3"},
		{"config:\n  broker__maxQueuedByte: 1\n", "broker__maxQueuedByte"},
		{"config:\n  inbound__serverAuth__tlsPolicy: disabled\n", "inbound__serverAuth__tlsPolicy"},
		{"resources:\n  limits:\n    memroy: 1Gi\n", "memroy"},
		{"networkPolicy:\n  from:\n    - podSelecter: {}\n", "podSelecter"},
		{"tlsPolicy: loose\n", "tlsPolicy"},
		{"config:\n  log__level: verbose\n", "log__level"},
		{"config:\n  broker__maxQueuedBytes: lots\n", "broker__maxQueuedBytes"},
	} {
		_, err := renderErr(t, renderOpts{values: tc.values})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %q: err = %v, want a schema error naming %s", tc.values, err, tc.want)
		}
	}
}

// TestConfigValuesBecomeEnv checks that config entries reach the container
// as written: whole numbers without an exponent, booleans and text as text.
func TestConfigValuesBecomeEnv(t *testing.T) {
	r := render(t, renderOpts{values: `config:
  broker__maxQueuedBytes: 268435457
  broker__exponentialScale: 0.01
  outbound__webhook__httpsOnly: false
  broker__backoffIntervals: "00:00:05,00:00:30"
  log__level: warn
resources:
  limits:
    memory: 1Gi
`})
	env := envOf(container(t, deployment(t, r)))
	for k, want := range map[string]string{
		"broker__maxQueuedBytes":       "268435457",
		"broker__exponentialScale":     "0.01",
		"outbound__webhook__httpsOnly": "false",
		"broker__backoffIntervals":     "00:00:05,00:00:30",
		"log__level":                   "warn",
		"GOMEMLIMIT":                   "966367641",
	} {
		if env[k].Value != want {
			t.Errorf("%s = %q, want %q", k, env[k].Value, want)
		}
	}
}

// TestOptionalObjects checks when the ServiceMonitor, NetworkPolicy and
// PodDisruptionBudget are rendered.
func TestOptionalObjects(t *testing.T) {
	replicas := filepath.Join(chartDir, "ci", "replicas-values.yaml")
	t.Run("ServiceMonitor needs the API", func(t *testing.T) {
		if n := len(render(t, renderOpts{valuesFiles: []string{replicas}}).find("ServiceMonitor")); n != 0 {
			t.Errorf("ServiceMonitor rendered %d times without monitoring.coreos.com/v1", n)
		}
		r := render(t, renderOpts{valuesFiles: []string{replicas}, apiVersions: []string{"monitoring.coreos.com/v1"}})
		sm := r.find("ServiceMonitor")
		if len(sm) != 1 {
			t.Fatalf("ServiceMonitor rendered %d times with monitoring.coreos.com/v1, want once", len(sm))
		}
		if env := envOf(container(t, deployment(t, r))); env["metrics__reporterType"].Value != "prometheus" {
			t.Errorf("metrics__reporterType = %q with a ServiceMonitor", env["metrics__reporterType"].Value)
		}
	})
	t.Run("PodDisruptionBudget and NetworkPolicy", func(t *testing.T) {
		r := render(t, renderOpts{valuesFiles: []string{replicas}})
		p := pdb(t, r)
		if p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("PDB maxUnavailable = %v, want 1", p.Spec.MaxUnavailable)
		}
		np := networkPolicy(t, r)
		if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 2 || len(np.Spec.Ingress[0].Ports) != 1 ||
			np.Spec.Ingress[0].Ports[0].Port.String() != "https" {
			t.Errorf("NetworkPolicy ingress = %+v, want the https port from the two peers", np.Spec.Ingress)
		}
		if len(np.Spec.Egress) != 1 {
			t.Errorf("NetworkPolicy egress = %+v, want the configured rule", np.Spec.Egress)
		}
		sel := deployment(t, r).Spec.Template.Labels
		for k, v := range np.Spec.PodSelector.MatchLabels {
			if sel[k] != v {
				t.Errorf("NetworkPolicy selects %s=%s, which the pods do not carry", k, v)
			}
		}
	})
	t.Run("no PodDisruptionBudget for one pod", func(t *testing.T) {
		if n := len(render(t, renderOpts{values: "replicaCount: 1\nnetworkPolicy:\n  enabled: true\n"}).find("PodDisruptionBudget")); n != 0 {
			t.Errorf("PodDisruptionBudget rendered with one replica")
		}
	})
}

// TestNotes checks that the install notes give the Azure Arc style publish
// URL, the module route and a curl with the SAS key.
func TestNotes(t *testing.T) {
	out, err := helm("install", releaseName, chartDir, "--namespace", namespace, "--dry-run=client",
		"-f", filepath.Join(chartDir, "ci", "http-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, notes, ok := strings.Cut(out, "NOTES:")
	if !ok {
		t.Fatalf("no NOTES in:\n%s", out)
	}
	for _, want := range []string{
		"http://eg-edgegrid.edgegrid.svc:5888/topics/sensors/api/events?api-version=2018-01-01",
		"http://eg-edgegrid.edgegrid.svc:5888/topics/sensors/events?api-version=2019-01-01",
		`-H "aeg-sas-key: $KEY"`,
		"curl -X POST",
		"get secret eg-edgegrid",
		"checked by the broker when it applies it, not by helm",
		"kubectl get --raw '/api/v1/namespaces/edgegrid/services/http:eg-edgegrid:http/proxy/readyz'",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
}
