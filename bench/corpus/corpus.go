// Package corpus makes a deterministic set of realistic Helm chart archives
// for benchmarks: the same N always yields byte-identical archives, so runs
// on different machines (and against different servers) upload the same
// bytes.
package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// VersionsPerChart is how many versions each chart name gets; a corpus of N
// archives holds ceil(N / VersionsPerChart) chart names.
const VersionsPerChart = 10

// modTime is the fixed modification time written into every tar header so
// archives do not depend on when they were made.
var modTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Chart is one chart version of the corpus and its .tgz archive.
type Chart struct {
	// Name is the chart name (also the archive's top directory).
	Name string
	// Version is the chart's SemVer version.
	Version string
	// AppVersion is Chart.yaml's appVersion.
	AppVersion string
	// Description is Chart.yaml's description.
	Description string
	// Keywords are Chart.yaml's keywords.
	Keywords []string
	// Archive is the gzipped tar archive, as `helm package` would make.
	Archive []byte
}

// Filename is the archive's conventional file name, NAME-VERSION.tgz.
func (c Chart) Filename() string { return c.Name + "-" + c.Version + ".tgz" }

// Generate returns n chart versions of set number set. Sets differ only in
// their versions (set s uses major version s+1), so set 1 uploads new
// versions of the charts set 0 created. Charts are interleaved: the k-th
// archive is version k / names of chart k % names, the order a busy CI would
// push them in. The result depends only on n and set.
func Generate(n, set int) ([]Chart, error) {
	if n < 0 || set < 0 {
		return nil, fmt.Errorf("corpus: n and set must be ≥ 0 (got %d, %d)", n, set)
	}
	names := (n + VersionsPerChart - 1) / VersionsPerChart
	out := make([]Chart, 0, n)
	var b builder
	for k := range n {
		c, err := b.make(k%names, k/names, set)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ChartName is the name of the i-th chart of the corpus, such as
// "redis-operator" or, past the word combinations, "redis-operator-3".
func ChartName(i int) string {
	p := prefixes[i%len(prefixes)]
	s := suffixes[(i/len(prefixes))%len(suffixes)]
	name := p + "-" + s
	if round := i / (len(prefixes) * len(suffixes)); round > 0 {
		name += fmt.Sprintf("-%d", round)
	}
	return name
}

// Make builds version j of chart i in set set, exactly as Generate does.
func Make(i, j, set int) (Chart, error) {
	var b builder
	return b.make(i, j, set)
}

// builder reuses one gzip writer across archives (a new one allocates
// hundreds of KiB).
type builder struct {
	zw *gzip.Writer
}

func (bld *builder) make(i, j, set int) (Chart, error) {
	rng := rand.New(rand.NewPCG(uint64(set)<<32|uint64(i), uint64(j)+0x9e3779b97f4a7c15))
	name := ChartName(i)
	c := Chart{
		Name:       name,
		Version:    fmt.Sprintf("%d.%d.%d", set+1, j, rng.IntN(4)),
		AppVersion: fmt.Sprintf("%d.%d.%d", 1+rng.IntN(9), rng.IntN(30), rng.IntN(20)),
	}
	topic := prefixes[i%len(prefixes)]
	c.Description = fmt.Sprintf("A Helm chart for %s %s on Kubernetes: %s", topic, suffixes[(i/len(prefixes))%len(suffixes)], sentence(rng, 8))
	c.Keywords = []string{topic, suffixes[(i/len(prefixes))%len(suffixes)]}
	for range 1 + rng.IntN(3) {
		c.Keywords = append(c.Keywords, pick(rng, words))
	}

	files := []struct {
		path string
		body string
	}{
		{"Chart.yaml", chartYAML(c, rng)},
		{"values.yaml", valuesYAML(c, rng)},
		{"templates/deployment.yaml", deploymentTemplate},
		{"README.md", readme(c, rng)},
	}
	var buf bytes.Buffer
	if bld.zw == nil {
		zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		if err != nil {
			return Chart{}, fmt.Errorf("corpus: gzip: %w", err)
		}
		bld.zw = zw
	} else {
		bld.zw.Reset(&buf)
	}
	zw := bld.zw
	tw := tar.NewWriter(zw)
	for _, f := range files {
		hdr := &tar.Header{
			Name:     name + "/" + f.path,
			Mode:     0o644,
			Size:     int64(len(f.body)),
			ModTime:  modTime,
			Typeflag: tar.TypeReg,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return Chart{}, fmt.Errorf("corpus: tar header %s: %w", hdr.Name, err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			return Chart{}, fmt.Errorf("corpus: tar %s: %w", hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return Chart{}, fmt.Errorf("corpus: close tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return Chart{}, fmt.Errorf("corpus: close gzip: %w", err)
	}
	c.Archive = buf.Bytes()
	return c, nil
}

func chartYAML(c Chart, rng *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", c.Name, c.Version, c.AppVersion)
	fmt.Fprintf(&b, "description: %q\ntype: application\n", c.Description)
	fmt.Fprintf(&b, "home: https://charts.example.org/%s\n", c.Name)
	fmt.Fprintf(&b, "icon: https://charts.example.org/%s/icon.svg\n", c.Name)
	b.WriteString("keywords:\n")
	for _, k := range c.Keywords {
		fmt.Fprintf(&b, "  - %s\n", k)
	}
	b.WriteString("maintainers:\n")
	for range 1 + rng.IntN(2) {
		first, last := pick(rng, firstNames), pick(rng, lastNames)
		fmt.Fprintf(&b, "  - name: %s %s\n    email: %s.%s@example.org\n", capitalize(first), capitalize(last), first, last)
	}
	fmt.Fprintf(&b, "sources:\n  - https://github.com/example/%s\n", c.Name)
	fmt.Fprintf(&b, "annotations:\n  example.org/revision: %q\n", hex(rng, 20))
	return b.String()
}

func valuesYAML(c Chart, rng *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Default values for %s.\nreplicaCount: %d\n\n", c.Name, 1+rng.IntN(3))
	fmt.Fprintf(&b, "image:\n  repository: registry.example.org/%s\n  tag: %q\n  digest: sha256:%s\n  pullPolicy: IfNotPresent\n\n", c.Name, c.AppVersion, hex(rng, 32))
	fmt.Fprintf(&b, "service:\n  type: ClusterIP\n  port: %d\n\n", 1024+rng.IntN(60000))
	fmt.Fprintf(&b, "resources:\n  limits:\n    cpu: %dm\n    memory: %dMi\n  requests:\n    cpu: %dm\n    memory: %dMi\n\n",
		100*(1+rng.IntN(20)), 64*(1+rng.IntN(32)), 50*(1+rng.IntN(10)), 32*(1+rng.IntN(16)))
	b.WriteString("env:\n")
	for range 10 + rng.IntN(5) {
		fmt.Fprintf(&b, "  - name: %s_%s\n    value: %q\n", strings.ToUpper(pick(rng, words)), strings.ToUpper(pick(rng, words)), hex(rng, 12))
	}
	b.WriteString("\nplugins:\n")
	for range 18 + rng.IntN(6) {
		fmt.Fprintf(&b, "  - name: %s-%s\n    version: %d.%d.%d\n    sha256: %s\n", pick(rng, words), pick(rng, words), rng.IntN(5), rng.IntN(20), rng.IntN(10), hex(rng, 32))
	}
	fmt.Fprintf(&b, "\nconfig:\n  logLevel: %s\n  featureFlags: [%s, %s]\n  clusterId: %q\n", pick(rng, []string{"debug", "info", "warn"}), pick(rng, words), pick(rng, words), hex(rng, 16))
	return b.String()
}

func readme(c Chart, rng *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n## Installing\n\n    helm install my-%s example/%s --version %s\n\n## Notes\n\n",
		c.Name, c.Description, c.Name, c.Name, c.Version)
	for range 10 {
		b.WriteString(sentence(rng, 14+rng.IntN(8)))
		b.WriteString("\n\n")
	}
	return b.String()
}

// deploymentTemplate is a plain Deployment template, the same in every chart.
const deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
  labels:
    app.kubernetes.io/name: {{ .Chart.Name }}
    app.kubernetes.io/instance: {{ .Release.Name }}
    app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ .Chart.Name }}
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ .Chart.Name }}
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}@{{ .Values.image.digest }}"
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          ports:
            - containerPort: {{ .Values.service.port }}
          env:
            {{- toYaml .Values.env | nindent 12 }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
`

func sentence(rng *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = pick(rng, words)
	}
	return capitalize(strings.Join(ws, " ")) + "."
}

func hex(rng *rand.Rand, nbytes int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*nbytes)
	for i := range b {
		b[i] = digits[rng.IntN(16)]
	}
	return string(b)
}

func pick(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var prefixes = []string{
	"nginx", "redis", "postgres", "mysql", "kafka", "grafana", "loki", "tempo",
	"vault", "consul", "etcd", "minio", "harbor", "argo", "flux", "istio",
	"linkerd", "traefik", "envoy", "keycloak", "rabbitmq", "mongodb", "elastic",
	"jaeger", "cassandra", "memcached", "zookeeper", "nats", "thanos", "cortex",
	"velero", "falco", "kyverno", "gitea", "jenkins", "sonarqube", "airflow",
	"spark", "clickhouse", "mariadb",
}

var suffixes = []string{
	"operator", "exporter", "gateway", "proxy", "agent", "controller",
	"ingress", "cache", "cluster", "ui", "api", "worker", "scheduler", "sync",
	"backup", "stack", "server", "collector", "webhook", "dashboard",
	"sidecar", "relay", "bridge", "monitor", "manager",
}

var words = []string{
	"scalable", "secure", "observability", "metrics", "tracing", "logging",
	"storage", "network", "replicated", "highly", "available", "cloud",
	"native", "service", "mesh", "database", "queue", "stream", "batch",
	"cluster", "deployment", "helm", "kubernetes", "container", "registry",
	"proxy", "ingress", "tls", "certificate", "backup", "restore", "snapshot",
	"federation", "tenant", "quota", "policy", "audit", "compliance", "cache",
	"search", "index", "shard", "leader", "election", "consensus", "raft",
	"gossip", "sidecar", "operator", "controller", "webhook", "admission",
	"autoscaling", "rollout", "canary", "blue", "green", "migration", "schema",
	"upgrade", "lightweight", "production", "ready", "configurable", "fast",
	"reliable", "durable", "distributed", "streaming", "analytics", "events",
}

var firstNames = []string{
	"ada", "alan", "grace", "linus", "ken", "rob", "barbara", "margaret",
	"dennis", "radia", "frances", "edsger", "leslie", "donald", "niklaus", "john",
}

var lastNames = []string{
	"lovelace", "turing", "hopper", "torvalds", "thompson", "pike", "liskov",
	"hamilton", "ritchie", "perlman", "allen", "dijkstra", "lamport", "knuth", "wirth", "backus",
}

// Spread returns n chart versions over n/50 chart names (at least one)
// with the skew of a real repository: chart i gets a share proportional to
// 1/(i+1)^0.9, so at n = 100,000 the busiest of 2,000 charts has about
// 8,400 versions and the quietest about ten. The pushes are interleaved
// by a fixed-seed shuffle, each chart's versions in ascending order, as
// many CI pipelines releasing at their own pace would push them. The
// result depends only on n.
func Spread(n int) ([]Chart, error) {
	if n < 0 {
		return nil, fmt.Errorf("corpus: n must be ≥ 0 (got %d)", n)
	}
	if n == 0 {
		return nil, nil
	}
	names := max(1, n/50)
	counts := spreadCounts(n, names)
	order := make([]int, 0, n)
	for i, c := range counts {
		for range c {
			order = append(order, i)
		}
	}
	rng := rand.New(rand.NewPCG(0x5eed, uint64(n)))
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	next := make([]int, names)
	out := make([]Chart, 0, n)
	var b builder
	for _, i := range order {
		c, err := b.make(i, next[i], 0)
		if err != nil {
			return nil, err
		}
		next[i]++
		out = append(out, c)
	}
	return out, nil
}

// spreadCounts splits n versions over names charts in proportion to
// 1/(i+1)^0.9, every chart at least one, by largest remainder so the
// counts sum to n exactly.
func spreadCounts(n, names int) []int {
	weights := make([]float64, names)
	var total float64
	for i := range weights {
		weights[i] = 1 / math.Pow(float64(i+1), 0.9)
		total += weights[i]
	}
	counts := make([]int, names)
	rest := make([]float64, names)
	left := n - names
	sum := 0
	for i, w := range weights {
		share := float64(left) * w / total
		counts[i] = 1 + int(share)
		rest[i] = share - float64(int(share))
		sum += counts[i]
	}
	// Hand the rounding's remainder to the largest fractions; ties go to
	// the busier chart, so the result is deterministic.
	idx := make([]int, names)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rest[idx[a]] > rest[idx[b]] })
	for k := 0; sum < n; k++ {
		counts[idx[k%names]]++
		sum++
	}
	return counts
}
