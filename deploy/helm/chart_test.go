// Package helm_test checks the chartctl Helm chart (deploy/helm/chartctl):
// lint, rendering for both modes, every object strictly decoded into its
// Kubernetes API type, a round trip through a real chartctl server with
// the real Helm client, and the scale-out rendering run as real replicas
// (scaleout_test.go). k8s.io/api is a test-only dependency here.
package helm_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/servetest"
)

const chartDir = "chartctl"

// rendered is one `helm template` output, decoded.
type rendered struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	configMap      *corev1.ConfigMap
	serviceAccount *corev1.ServiceAccount
	pvc            *corev1.PersistentVolumeClaim
	ingress        *networkingv1.Ingress
	pdb            *policyv1.PodDisruptionBudget
	serviceMonitor map[string]any
}

// render runs helm template with the values files and decodes every object
// strictly into its API type; an unknown field anywhere fails.
func render(t *testing.T, h *testkit.Helm, chart string, args ...string) *rendered {
	t.Helper()
	out := h.With(t).Stdout(append([]string{"template", "rel", chart, "--namespace", "charts"}, args...)...)
	r := &rendered{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, out)
		}
		if doc == nil {
			continue
		}
		raw, _ := yaml.Marshal(doc)
		kind := fmt.Sprintf("%s/%s", doc["apiVersion"], doc["kind"])
		var target any
		switch kind {
		case "apps/v1/Deployment":
			r.deployment = &appsv1.Deployment{}
			target = r.deployment
		case "v1/Service":
			r.service = &corev1.Service{}
			target = r.service
		case "v1/ConfigMap":
			r.configMap = &corev1.ConfigMap{}
			target = r.configMap
		case "v1/ServiceAccount":
			r.serviceAccount = &corev1.ServiceAccount{}
			target = r.serviceAccount
		case "v1/PersistentVolumeClaim":
			r.pvc = &corev1.PersistentVolumeClaim{}
			target = r.pvc
		case "networking.k8s.io/v1/Ingress":
			r.ingress = &networkingv1.Ingress{}
			target = r.ingress
		case "policy/v1/PodDisruptionBudget":
			r.pdb = &policyv1.PodDisruptionBudget{}
			target = r.pdb
		case "monitoring.coreos.com/v1/ServiceMonitor":
			// Not a core type: checked field by field below.
			r.serviceMonitor = doc
			continue
		default:
			t.Fatalf("unexpected object %s", kind)
		}
		if err := sigsyaml.UnmarshalStrict(raw, target); err != nil {
			t.Fatalf("%s does not decode strictly: %v\n%s", kind, err, raw)
		}
	}
	if r.deployment == nil || r.service == nil || r.configMap == nil {
		t.Fatalf("deployment, service or configmap missing from:\n%s", out)
	}
	return r
}

// checkCommon checks what holds in every mode: selectors, ports, probes,
// the restricted security context, the config file.
func checkCommon(t *testing.T, r *rendered) {
	t.Helper()
	d := r.deployment
	podLabels := d.Spec.Template.Labels
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 {
		t.Fatal("deployment has no selector")
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if podLabels[k] != v {
			t.Errorf("deployment selector %s=%s does not match the pod labels %v", k, v, podLabels)
		}
	}
	if len(r.service.Spec.Selector) == 0 || !maps.Equal(r.service.Spec.Selector, d.Spec.Selector.MatchLabels) {
		t.Errorf("service selector %v != deployment selector %v", r.service.Spec.Selector, d.Spec.Selector.MatchLabels)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("containers = %d", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image == "" || !strings.HasPrefix(c.Image, "ghcr.io/chartctl/chartctl") {
		t.Errorf("image = %q", c.Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("container ports = %+v", c.Ports)
	}
	sp := r.service.Spec.Ports
	if len(sp) != 1 || sp[0].TargetPort != intstr.FromString("http") || sp[0].Port == 0 {
		t.Errorf("service ports = %+v", sp)
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		want := "/livez"
		if name == "readiness" {
			want = "/readyz"
		}
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want || p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("%s probe = %+v, want GET %s on port http", name, p, want)
		}
	}
	// Pod Security Standards, "restricted" profile.
	ps := d.Spec.Template.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != 65532 ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context not restricted: %+v", ps)
	}
	cs := c.SecurityContext
	if cs == nil || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
		cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
		cs.RunAsNonRoot == nil || !*cs.RunAsNonRoot ||
		cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 ||
		cs.Privileged != nil && *cs.Privileged {
		t.Errorf("container security context not restricted: %+v", cs)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources = %+v", c.Resources)
	}
	if !slices.Equal(c.Args, []string{"serve", "--config", "/etc/chartctl/config.yaml"}) {
		t.Errorf("args = %v", c.Args)
	}
	// The config file is mounted where --config points, and /var/lib/chartctl
	// and /tmp are the writable places.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	vols := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	for path, name := range mounts {
		if _, ok := vols[name]; !ok {
			t.Errorf("mount %s uses undefined volume %s", path, name)
		}
	}
	if v := vols[mounts["/etc/chartctl"]]; v.ConfigMap == nil || v.ConfigMap.Name != r.configMap.Name {
		t.Errorf("/etc/chartctl is not the config map %s: %+v", r.configMap.Name, v)
	}
	if mounts["/var/lib/chartctl"] == "" || mounts["/tmp"] == "" {
		t.Errorf("mounts = %v", mounts)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(r.configMap.Data["config.yaml"]), &cfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	if cfg["addr"] != "0.0.0.0:8080" || cfg["data"] != "/var/lib/chartctl" {
		t.Errorf("config.yaml = %v", cfg)
	}
	if d.Spec.Template.Spec.AutomountServiceAccountToken == nil || *d.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("the service account token is mounted; chartctl does not call the Kubernetes API")
	}
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestChartLintAndRender(t *testing.T) {
	for name, h := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) { lintAndRender(t, h) })
	}
}

func lintAndRender(t *testing.T, h *testkit.Helm) {
	h = h.With(t)
	chart, _ := filepath.Abs(chartDir)
	valueFiles, _ := filepath.Glob(filepath.Join(chart, "ci", "*.yaml"))
	if len(valueFiles) < 4 {
		t.Fatalf("values files: %v", valueFiles)
	}
	h.Must("lint", "--strict", chart)
	for _, f := range valueFiles {
		h.Must("lint", "--strict", chart, "-f", f)
	}

	t.Run("single node by default", func(t *testing.T) {
		r := render(t, h, chart)
		checkCommon(t, r)
		d := r.deployment
		if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("replicas %d strategy %s, want 1 and Recreate (the embedded store is locked by one pod)", *d.Spec.Replicas, d.Spec.Strategy.Type)
		}
		if r.pvc == nil || r.pdb != nil || r.ingress != nil || r.serviceMonitor != nil {
			t.Errorf("pvc %v pdb %v ingress %v monitor %v", r.pvc != nil, r.pdb != nil, r.ingress != nil, r.serviceMonitor != nil)
		}
		var data *corev1.Volume
		for i, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == "data" {
				data = &d.Spec.Template.Spec.Volumes[i]
			}
		}
		if data == nil || data.PersistentVolumeClaim == nil || data.PersistentVolumeClaim.ClaimName != r.pvc.Name {
			t.Errorf("data volume = %+v, want the claim %s", data, r.pvc.Name)
		}
		if r.pvc.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Error("the data claim is deleted with the release")
		}
		if env(d.Spec.Template.Spec.Containers[0], "CHARTCTL_DATABASE") != nil {
			t.Error("single node mode sets a database")
		}
		if r.serviceAccount == nil || d.Spec.Template.Spec.ServiceAccountName != r.serviceAccount.Name {
			t.Error("service account not used")
		}
	})

	t.Run("single node values", func(t *testing.T) {
		r := render(t, h, chart, "-f", filepath.Join(chart, "ci", "single-node-values.yaml"))
		checkCommon(t, r)
		cfg := r.configMap.Data["config.yaml"]
		for _, want := range []string{"base-url: \"https://charts.example.com\"", "max-chart-size: 20MiB", "allow-overwrite: true"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
			}
		}
	})

	t.Run("single sign-on", func(t *testing.T) {
		r := render(t, h, chart, "--set", "baseURL=https://charts.example.com", "--set", "oidc.existingSecret=chartctl-oidc",
			"--set", "config.oidc-issuer=https://login.example.com", "--set", "config.oidc-client-id=chartctl")
		checkCommon(t, r)
		cfg := r.configMap.Data["config.yaml"]
		for _, want := range []string{"oidc-issuer: https://login.example.com", "oidc-client-id: chartctl"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
			}
		}
		spec := r.deployment.Spec.Template.Spec
		if e := env(spec.Containers[0], "CHARTCTL_OIDC_CLIENT_SECRET_FILE"); e == nil || e.Value != "/run/secrets/chartctl-oidc/client-secret" {
			t.Errorf("client secret file = %+v", e)
		}
		found := false
		for _, v := range spec.Volumes {
			if v.Name == "oidc" && v.Secret != nil && v.Secret.SecretName == "chartctl-oidc" && len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == "client-secret" {
				found = true
			}
		}
		if !found {
			t.Errorf("no volume of the Secret chartctl-oidc: %+v", spec.Volumes)
		}
	})

	t.Run("federation", func(t *testing.T) {
		r := render(t, h, chart, "--set", "federation.allowPrivateUpstreams=10.20.0.0/16\\,fd00::/8",
			"--set", "federation.plainHTTPUpstreams={charts.internal:8080,nexus.internal:8081}",
			"--set", "federation.upstreamTimeout=20s", "--set", "federation.upstreamIndexMaxSize=128MiB",
			"--set", "federation.httpsProxy=http://egress.internal:3128", "--set", "federation.noProxy=.cluster.local")
		checkCommon(t, r)
		cfg := r.configMap.Data["config.yaml"]
		for _, want := range []string{`allow-private-upstreams: "10.20.0.0/16,fd00::/8"`, `plain-http-upstreams: "charts.internal:8080,nexus.internal:8081"`,
			`upstream-timeout: "20s"`, `upstream-index-max-size: "128MiB"`} {
			if !strings.Contains(cfg, want) {
				t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
			}
		}
		c := r.deployment.Spec.Template.Spec.Containers[0]
		if e := env(c, "HTTPS_PROXY"); e == nil || e.Value != "http://egress.internal:3128" {
			t.Errorf("HTTPS_PROXY = %+v", e)
		}
		if e := env(c, "NO_PROXY"); e == nil || e.Value != ".cluster.local" {
			t.Errorf("NO_PROXY = %+v", e)
		}
		// allowPrivateUpstreams=true is the boolean form.
		r = render(t, h, chart, "--set", "federation.allowPrivateUpstreams=true")
		if cfg := r.configMap.Data["config.yaml"]; !strings.Contains(cfg, `allow-private-upstreams: "true"`) {
			t.Errorf("config.yaml with allowPrivateUpstreams=true:\n%s", cfg)
		}
		// Defaults write none of them.
		r = render(t, h, chart)
		if cfg := r.configMap.Data["config.yaml"]; strings.Contains(cfg, "upstream") {
			t.Errorf("default config.yaml sets upstream flags:\n%s", cfg)
		}
	})

	t.Run("ldap", func(t *testing.T) {
		r := render(t, h, chart, "--set", "ldap.existingSecret=chartctl-ldap", "--set", "config.ldap-url=ldaps://ldap.example.com",
			"--set", "config.ldap-user-base=ou=people\\,dc=example\\,dc=com", "--set", "config.ldap-bind-dn=cn=chartctl\\,dc=example\\,dc=com")
		checkCommon(t, r)
		cfg := r.configMap.Data["config.yaml"]
		for _, want := range []string{"ldap-url: ldaps://ldap.example.com", "ldap-user-base: ou=people,dc=example,dc=com", "ldap-bind-dn: cn=chartctl,dc=example,dc=com"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("config.yaml lacks %q:\n%s", want, cfg)
			}
		}
		spec := r.deployment.Spec.Template.Spec
		if e := env(spec.Containers[0], "CHARTCTL_LDAP_BIND_PASSWORD_FILE"); e == nil || e.Value != "/run/secrets/chartctl-ldap/bind-password" {
			t.Errorf("bind password file = %+v", e)
		}
		found := false
		for _, v := range spec.Volumes {
			if v.Name == "ldap" && v.Secret != nil && v.Secret.SecretName == "chartctl-ldap" && len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == "bind-password" {
				found = true
			}
		}
		if !found {
			t.Errorf("no volume of the Secret chartctl-ldap: %+v", spec.Volumes)
		}
	})

	t.Run("sigstore trusted root", func(t *testing.T) {
		r := render(t, h, chart, "--set", "sigstore.trustedRoot.existingConfigMap=sigstore-root")
		checkCommon(t, r)
		spec := r.deployment.Spec.Template.Spec
		if e := env(spec.Containers[0], "CHARTCTL_SIGSTORE_TRUSTED_ROOT"); e == nil || e.Value != "/etc/chartctl-sigstore/trusted_root.json" {
			t.Errorf("trusted root file = %+v", e)
		}
		mounted := false
		for _, m := range spec.Containers[0].VolumeMounts {
			mounted = mounted || (m.Name == "sigstore" && m.MountPath == "/etc/chartctl-sigstore" && m.ReadOnly)
		}
		found := false
		for _, v := range spec.Volumes {
			if v.Name == "sigstore" && v.ConfigMap != nil && v.ConfigMap.Name == "sigstore-root" && len(v.ConfigMap.Items) == 1 &&
				v.ConfigMap.Items[0].Key == "trusted_root.json" && v.ConfigMap.Items[0].Path == "trusted_root.json" {
				found = true
			}
		}
		if !found || !mounted {
			t.Errorf("no read-only volume of the ConfigMap sigstore-root (mounted %v): %+v", mounted, spec.Volumes)
		}
		if e := env(render(t, h, chart).deployment.Spec.Template.Spec.Containers[0], "CHARTCTL_SIGSTORE_TRUSTED_ROOT"); e != nil {
			t.Errorf("the default values name a trusted root: %+v", e)
		}
	})

	t.Run("scale out with three replicas", func(t *testing.T) {
		r := render(t, h, chart, "-f", filepath.Join(chart, "ci", "scale-out-values.yaml"))
		checkCommon(t, r)
		d := r.deployment
		if *d.Spec.Replicas != 3 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			t.Errorf("replicas %d strategy %s", *d.Spec.Replicas, d.Spec.Strategy.Type)
		}
		if r.pvc != nil {
			t.Error("scale-out renders a ReadWriteOnce claim the replicas cannot share")
		}
		if r.pdb == nil || r.pdb.Spec.MinAvailable == nil || r.pdb.Spec.MinAvailable.IntValue() != 2 || !maps.Equal(r.pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
			t.Errorf("pdb = %+v", r.pdb)
		}
		c := d.Spec.Template.Spec.Containers[0]
		for name, key := range map[string]string{"CHARTCTL_DATABASE": "database", "CHARTCTL_BLOB_STORE": "blob-store"} {
			e := env(c, name)
			if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "chartctl-storage" || e.ValueFrom.SecretKeyRef.Key != key {
				t.Errorf("%s = %+v, want key %s of the Secret chartctl-storage", name, e, key)
			}
		}
		if e := env(c, "CHARTCTL_ADMIN_PASSWORD_FILE"); e == nil || e.Value != "/run/secrets/chartctl-admin/password" {
			t.Errorf("admin password file = %+v", e)
		}
		if e := env(c, "CHARTCTL_SECRETS_KEY_FILE"); e == nil || e.Value != "/run/secrets/chartctl/secrets-key" {
			t.Errorf("secrets key file = %+v", e)
		}
		if len(d.Spec.Template.Spec.TopologySpreadConstraints) != 1 {
			t.Error("topology spread constraints dropped")
		}
	})

	t.Run("ingress, monitoring, existing claim, digest", func(t *testing.T) {
		r := render(t, h, chart, "-f", filepath.Join(chart, "ci", "ingress-monitoring-values.yaml"))
		checkCommon(t, r)
		if r.pvc != nil {
			t.Error("a claim is rendered although existingClaim is set")
		}
		ing := r.ingress
		if ing == nil || len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "charts.example.com" || len(ing.Spec.TLS) != 1 {
			t.Fatalf("ingress = %+v", ing)
		}
		be := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
		if be.Name != r.service.Name || be.Port.Name != r.service.Spec.Ports[0].Name {
			t.Errorf("ingress backend %+v does not name the service %s port %s", be, r.service.Name, r.service.Spec.Ports[0].Name)
		}
		sm := r.serviceMonitor
		spec, _ := sm["spec"].(map[string]any)
		sel, _ := spec["selector"].(map[string]any)
		ml, _ := sel["matchLabels"].(map[string]any)
		for k, v := range ml {
			if r.service.Labels[k] != v {
				t.Errorf("service monitor selector %s=%v does not match the service labels", k, v)
			}
		}
		eps, _ := spec["endpoints"].([]any)
		if len(ml) == 0 || len(eps) != 1 || eps[0].(map[string]any)["port"] != "http" || eps[0].(map[string]any)["path"] != "/metrics" {
			t.Errorf("service monitor = %v", sm)
		}
		c := r.deployment.Spec.Template.Spec.Containers[0]
		if !strings.HasSuffix(c.Image, "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") {
			t.Errorf("image = %s, want the digest", c.Image)
		}
		for _, v := range r.deployment.Spec.Template.Spec.Volumes {
			if v.Name == "admin" && (v.Secret == nil || v.Secret.Items[0].Key != "admin-password" || v.Secret.Items[0].Path != "password") {
				t.Errorf("admin volume = %+v", v)
			}
			if v.Name == "data" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "chartctl-data") {
				t.Errorf("data volume = %+v", v)
			}
		}
	})

	t.Run("ephemeral", func(t *testing.T) {
		r := render(t, h, chart, "-f", filepath.Join(chart, "ci", "ephemeral-values.yaml"))
		checkCommon(t, r)
		if r.pvc != nil || r.serviceAccount != nil || r.service.Spec.Type != corev1.ServiceTypeNodePort {
			t.Errorf("pvc %v sa %v service %s", r.pvc != nil, r.serviceAccount != nil, r.service.Spec.Type)
		}
	})

	t.Run("values that cannot work are refused", func(t *testing.T) {
		for args, want := range map[string]string{
			"--set replicaCount=3":                                                             "scaleOut.existingSecret",
			"--set replicaCount=3 --set scaleOut.existingSecret=s":                             "admin.existingSecret",
			"--set replicaCount=0":                                                             "at least 1",
			"--set config.addr=0.0.0.0:9999":                                                   "config.addr",
			"--set config.log-format=text":                                                     "set logFormat instead",
			"--set config.base-url=https://charts.example.com":                                 "set baseURL instead",
			"--set config.admin-email=ops@example.com":                                         "set admin.email instead",
			"--set replicaCount=2 --set scaleOut.existingSecret=s --set admin.existingSecret=": "admin.existingSecret",
		} {
			out, err := h.Run(append([]string{"template", "rel", chart}, strings.Fields(args)...)...)
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("%s: err %v, output %s; want a failure naming %s", args, err, out, want)
			}
		}
	})
}

// chartctl is a real chartctl server (the serve command's composition,
// OCI registry included) on loopback, with its first admin's API key.
type chartctl struct {
	url, key string
}

func startChartctl(t *testing.T) *chartctl {
	t.Helper()
	c := &chartctl{}
	c.url, c.key = servetest.Start(t)
	return c
}

func (c *chartctl) post(t *testing.T, path, ctype string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// TestChartRoundTripsThroughChartctl publishes the packaged chart to a
// real chartctl server, as a classic Helm repository and over OCI, and
// pulls, renders and (client-side dry run: no cluster here) installs it
// from there with the real Helm clients.
func TestChartRoundTripsThroughChartctl(t *testing.T) {
	for name, h := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) { roundTrip(t, name, h) })
	}
}

func roundTrip(t *testing.T, name string, h *testkit.Helm) {
	h = h.With(t)
	chart, _ := filepath.Abs(chartDir)
	h.Must("package", chart, "--destination", h.Home)
	pkgs, _ := filepath.Glob(filepath.Join(h.Home, "chartctl-*.tgz"))
	if len(pkgs) != 1 {
		t.Fatalf("packaged: %v", pkgs)
	}
	archive, err := os.ReadFile(pkgs[0])
	if err != nil {
		t.Fatal(err)
	}

	s := startChartctl(t)
	s.post(t, "/v1/repositories", "application/json", []byte(`{"name":"deploy","visibility":"private"}`))
	s.post(t, "/v1/repositories", "application/json", []byte(`{"name":"deploy-oci","visibility":"private"}`))
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	s.post(t, "/v1/repositories/deploy/charts", ctype, body)
	h.Must("repo", "add", "deploy", s.url+"/helm/deploy", "--username", "ops", "--password", s.key)
	if out := h.Must("search", "repo", "deploy/chartctl"); !strings.Contains(out, "deploy/chartctl") {
		t.Fatalf("helm search:\n%s", out)
	}
	pulled := filepath.Join(h.Home, "pulled")
	if err := os.Mkdir(pulled, 0o755); err != nil {
		t.Fatal(err)
	}
	h.Must("pull", "deploy/chartctl", "--destination", pulled)
	got, err := os.ReadFile(filepath.Join(pulled, filepath.Base(pkgs[0])))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(archive) {
		t.Fatalf("pulled archive differs from the uploaded one")
	}
	// Installing from the repository renders the same valid objects.
	r := render(t, h, "deploy/chartctl", "-f", filepath.Join(chart, "ci", "scale-out-values.yaml"))
	checkCommon(t, r)
	if *r.deployment.Spec.Replicas != 3 {
		t.Errorf("replicas = %d", *r.deployment.Spec.Replicas)
	}

	// Over OCI: pushed with helm push, pulled back byte for byte, rendered
	// from oci://.
	host := strings.TrimPrefix(s.url, "http://")
	h.Must("registry", "login", host, "--username", "ops", "--password", s.key, "--plain-http")
	h.Must("push", pkgs[0], "oci://"+host+"/deploy-oci", "--plain-http")
	ociDir := filepath.Join(h.Home, "oci")
	if err := os.Mkdir(ociDir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.Must("pull", "oci://"+host+"/deploy-oci/chartctl", "--version", "0.1.0", "--destination", ociDir, "--plain-http")
	got, err = os.ReadFile(filepath.Join(ociDir, filepath.Base(pkgs[0])))
	if err != nil || sha256.Sum256(got) != sha256.Sum256(archive) {
		t.Fatalf("chart pulled over OCI differs from the pushed one (%v)", err)
	}
	r = render(t, h, "oci://"+host+"/deploy-oci/chartctl", "--version", "0.1.0", "--plain-http", "-f", filepath.Join(chart, "ci", "single-node-values.yaml"))
	checkCommon(t, r)

	if name == "helm3" {
		// Helm 3's install contacts a cluster even with --dry-run=client.
		return
	}
	out := h.Must("install", "chartctl", "deploy/chartctl", "--dry-run=client", "--namespace", "charts")
	if !strings.Contains(out, "STATUS: pending-install") || !strings.Contains(out, "initial-admin.json") {
		t.Errorf("helm install --dry-run output lacks the status or the NOTES:\n%s", out)
	}
	sum := sha256.Sum256(archive)
	t.Logf("chart %s (sha256 %s) round-tripped", filepath.Base(pkgs[0]), hex.EncodeToString(sum[:8]))
}
