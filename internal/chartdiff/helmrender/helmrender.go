// Package helmrender renders chart archives with Helm's template engine
// and the chart's default values, and finds the images the rendered pod
// specs name. It pulls Helm's engine and Kubernetes libraries, so only the
// separate chartctl-lint binary (its render mode) and tests import it:
// chartctl serve runs that binary as a bounded child process per chart
// (chartdiff.Subprocess, CONTRACT §18 decision 9).
package helmrender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartdiff"
)

// errLookup is what the lookup function answers: rendering without a
// cluster cannot know what a lookup would find, and Helm's own `helm
// template` answering an empty object would render a chart that no
// install renders.
var errLookup = errors.New("the chart looks up objects in a cluster (lookup), so it renders only against one")

// Render renders the chart archive with its default values, in this
// process and unbounded: call it in a child process (RunChild), or from
// tests. A chart that cannot be rendered is answered with Unrenderable
// set, never an error; an error is a failure to read the archive that
// chartctl stored, which validated it.
func Render(ctx context.Context, archive []byte, lim chart.Limits) *chartdiff.Rendering {
	// Validated as every stored chart was (no path escapes, no links,
	// sizes within the limits) before Helm's loader sees it.
	if _, err := chart.Walk(bytes.NewReader(archive), lim, func(string, int64, io.Reader) error { return nil }); err != nil {
		return &chartdiff.Rendering{Unrenderable: "the archive is not a valid chart: " + err.Error()}
	}
	chrt, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return &chartdiff.Rendering{Unrenderable: "Helm cannot load the chart: " + err.Error()}
	}
	kv, err := kubeVersionFor(chrt.Metadata.KubeVersion)
	if err != nil {
		return &chartdiff.Rendering{Unrenderable: err.Error()}
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	vals := map[string]any{}
	if err := chartutil.ProcessDependencies(chrt, vals); err != nil {
		return &chartdiff.Rendering{Unrenderable: "the chart's dependencies: " + err.Error()}
	}
	// The release as `helm template` names it.
	opts := common.ReleaseOptions{Name: "release-name", Namespace: "default", Revision: 1, IsInstall: true}
	top, err := util.ToRenderValues(chrt, vals, opts, caps)
	if err != nil {
		return &chartdiff.Rendering{Unrenderable: "the default values: " + err.Error()}
	}
	eng := engine.Engine{CustomTemplateFuncs: map[string]any{
		"lookup": func(string, string, string, string) (map[string]any, error) { return nil, errLookup },
	}}
	out, err := eng.RenderWithContext(ctx, chrt, top)
	if err != nil {
		if strings.Contains(err.Error(), errLookup.Error()) {
			return &chartdiff.Rendering{Unrenderable: errLookup.Error()}
		}
		return &chartdiff.Rendering{Unrenderable: "a template failed: " + err.Error()}
	}
	res := &chartdiff.Rendering{Manifests: map[string]string{}, KubeVersion: kv.Version}
	seen := map[string]bool{}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		text := out[name]
		// Engine keys start with the chart's name (web/templates/x.yaml);
		// diffs name paths from the chart's root.
		_, rel, ok := strings.Cut(name, "/")
		if !ok || path.Base(rel) == "NOTES.txt" || strings.TrimSpace(text) == "" {
			continue
		}
		res.Manifests[rel] = text
		imgs, err := podImages(text)
		if err != nil {
			return &chartdiff.Rendering{Unrenderable: rel + " does not render valid YAML: " + err.Error()}
		}
		for _, img := range imgs {
			if !seen[img] {
				seen[img] = true
				res.Images = append(res.Images, img)
			}
		}
	}
	sort.Strings(res.Images)
	return res
}

// kubeVersionFor returns a Kubernetes version the constraint allows:
// Helm's default (the version of the Kubernetes libraries it was built
// with, as `helm template` renders for) when it does, else the newest
// older one, else the oldest newer one. Versions are tried as Helm checks
// kubeVersion (chartutil.IsCompatibleRange).
func kubeVersionFor(constraint string) (*common.KubeVersion, error) {
	def := common.DefaultCapabilities.KubeVersion
	if strings.TrimSpace(constraint) == "" || chartutil.IsCompatibleRange(constraint, def.String()) {
		return &def, nil
	}
	var major, minor int
	if _, err := fmt.Sscanf(def.Major+"."+def.Minor, "%d.%d", &major, &minor); err != nil {
		return nil, fmt.Errorf("Helm's default Kubernetes version %q: %w", def.Version, err)
	}
	try := func(m int) *common.KubeVersion {
		// Patch releases rarely matter to a constraint; ~1.25.3 does.
		for patch := 0; patch <= 30; patch++ {
			v := fmt.Sprintf("v%d.%d.%d", major, m, patch)
			if chartutil.IsCompatibleRange(constraint, v) {
				kv, err := common.ParseKubeVersion(v)
				if err == nil {
					return kv
				}
			}
		}
		return nil
	}
	for m := minor; m >= 0; m-- {
		if kv := try(m); kv != nil {
			return kv, nil
		}
	}
	for m := minor + 1; m <= minor+20; m++ {
		if kv := try(m); kv != nil {
			return kv, nil
		}
	}
	return nil, fmt.Errorf("no Kubernetes version satisfies the chart's kubeVersion %q", constraint)
}

// splitDocs splits a rendered template into its YAML documents at lines
// of "---" (a comment may follow). A line scan: a regular expression over
// a megabyte of manifests costs more than Helm's rendering of them.
func splitDocs(text string) []string {
	var docs []string
	start := 0
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		if isSeparator(text[i:end]) {
			docs = append(docs, text[start:i])
			start = min(end+1, len(text))
		}
		i = end + 1
	}
	return append(docs, text[start:])
}

func isSeparator(line string) bool {
	rest, ok := strings.CutPrefix(line, "---")
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, " \t\r")
	return rest == "" || rest[0] == '#'
}

// workloads are the kinds whose objects run pods.
var workloads = map[string]bool{"Pod": true, "Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true,
	"ReplicationController": true, "Job": true, "CronJob": true}

// isWorkload reports whether a YAML document has a top-level kind line
// naming a workload.
func isWorkload(doc string) bool {
	for i := 0; i < len(doc); {
		end := strings.IndexByte(doc[i:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += i
		}
		if kind, ok := strings.CutPrefix(doc[i:end], "kind:"); ok {
			kind, _, _ = strings.Cut(kind, "#")
			return workloads[strings.Trim(kind, " \t\r\"'")]
		}
		i = end + 1
	}
	return false
}

// podImages returns the images of the pod specs in a rendered template's
// YAML documents, normalized; references that do not parse (a value left
// empty) are skipped.
func podImages(text string) ([]string, error) {
	var out []string
	for _, doc := range splitDocs(text) {
		// Only workloads run pods: other documents (ConfigMaps holding
		// large files, CRDs) are not parsed, which is most of the cost
		// of a large chart. JSON documents are parsed whatever they are.
		trimmed := strings.TrimSpace(doc)
		if trimmed == "" || (!strings.HasPrefix(trimmed, "{") && !isWorkload(doc)) {
			continue
		}
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			return nil, err
		}
		// A document that is not an object (a list, a bare value) is
		// not a Kubernetes object and runs no pod.
		obj, _ := v.(map[string]any)
		spec := podSpec(obj)
		for _, field := range []string{"containers", "initContainers", "ephemeralContainers"} {
			list, _ := spec[field].([]any)
			for _, c := range list {
				cm, _ := c.(map[string]any)
				s, _ := cm["image"].(string)
				if ref, err := chartdiff.NormalizeImage(s); err == nil && s != "" {
					out = append(out, ref)
				}
			}
		}
	}
	return out, nil
}

// podSpec returns the pod spec of a workload object, nil for other kinds.
func podSpec(obj map[string]any) map[string]any {
	var p []string
	switch obj["kind"] {
	case "Pod":
		p = []string{"spec"}
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job":
		p = []string{"spec", "template", "spec"}
	case "CronJob":
		p = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return nil
	}
	cur := obj
	for _, k := range p {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// RunChild is the child side of chartdiff.Subprocess: it limits its own
// address space as chartdiff.RenderChildEnv says, renders the archive
// read from in and writes the answer to out as JSON.
func RunChild(in io.Reader, out io.Writer, lim chart.Limits) error {
	if v := os.Getenv(chartdiff.RenderChildEnv); v != "" {
		var n uint64
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				return fmt.Errorf("limit memory: %w", err)
			}
		}
	}
	archive, err := io.ReadAll(io.LimitReader(in, 1<<30))
	if err != nil {
		return err
	}
	b, err := json.Marshal(Render(context.Background(), archive, lim))
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// InProcess returns a Renderer that renders in this process, without
// bounds: for tests and tools, never for a server taking untrusted
// charts.
func InProcess(lim chart.Limits) chartdiff.Renderer {
	return func(ctx context.Context, archive []byte) (*chartdiff.Rendering, error) {
		return Render(ctx, archive, lim), nil
	}
}
