package chartdiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/sandbox"
)

// Bounds of a rendering in a child process (CONTRACT §18 decision 9), the
// same as a lint's.
const (
	// DefaultRenderTimeout is how long rendering one chart may take.
	DefaultRenderTimeout = 20 * time.Second
	// DefaultRenderMemory caps the child's address space (Go reserves
	// address space generously: this is well above the heap an ordinary
	// chart's rendering needs).
	DefaultRenderMemory = 2 << 30
	// MaxRenderedBytes bounds the manifests one rendering may answer;
	// a chart rendering more is unrenderable.
	MaxRenderedBytes = 64 << 20
)

// RenderChildEnv, set in a rendering child's environment, carries its
// address-space limit in bytes.
const RenderChildEnv = "CHARTCTL_RENDER_MEMORY"

// RenderedPrefix starts the path of a rendered manifest in a diff:
// rendered/templates/deployment.yaml.
const RenderedPrefix = "rendered/"

// Rendering is what rendering a chart with its default values found.
type Rendering struct {
	// Manifests are the rendered templates by path relative to the
	// chart's root (templates/deployment.yaml, charts/redis/templates/…);
	// templates that render to nothing and NOTES.txt are left out.
	Manifests map[string]string `json:"manifests,omitempty"`
	// Images are the images of the rendered pod specs (containers, init
	// and ephemeral containers of Pods, Deployments, StatefulSets,
	// DaemonSets, ReplicaSets, Jobs and CronJobs), normalized, sorted,
	// without duplicates.
	Images []string `json:"images,omitempty"`
	// KubeVersion is the Kubernetes version rendered for, one the
	// chart's kubeVersion constraint allows.
	KubeVersion string `json:"kube_version,omitempty"`
	// Unrenderable, when set, says why the chart could not be rendered
	// (it looks objects up in a cluster, a template failed, the bounds
	// were passed); the other fields are then empty.
	Unrenderable string `json:"unrenderable,omitempty"`
}

// Renderer renders a chart archive with its default values. Reasons the
// chart itself gives (a failing template, the bounds) are answered as
// Rendering.Unrenderable; an error means the renderer could not run at
// all, and the same chart may render later.
type Renderer func(ctx context.Context, archive []byte) (*Rendering, error)

// Subprocess returns a Renderer that renders in pool's warm chartctl-lint
// workers (chartctl-lint serve, render mode), the archive on the worker's
// standard input; a rendering past the pool's timeout or memory bound
// kills its worker (decision 9). A chart past a bound is unrenderable
// with the bound named.
func Subprocess(pool *sandbox.Pool) Renderer {
	return func(ctx context.Context, archive []byte) (*Rendering, error) {
		b, err := pool.Do(ctx, sandbox.Request{Mode: "render"}, archive)
		var ee *sandbox.ExitError
		switch {
		case errors.Is(err, sandbox.ErrTimeout):
			return &Rendering{Unrenderable: fmt.Sprintf("rendering took longer than %s", pool.Timeout())}, nil
		case errors.Is(err, sandbox.ErrAnswerTooLarge):
			return &Rendering{Unrenderable: fmt.Sprintf("the chart renders more than %d MiB of manifests", MaxRenderedBytes>>20)}, nil
		case errors.As(err, &ee):
			return &Rendering{Unrenderable: fmt.Sprintf("rendering stopped: it passed the memory bound of %d MiB or failed (exit status %d)", pool.Memory()>>20, ee.Code)}, nil
		case err != nil:
			// The caller gave up (a request ended) or no worker could
			// start: nothing is known about the chart.
			return nil, err
		}
		var out Rendering
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("read the renderer's answer: %w", err)
		}
		return out.bounded(), nil
	}
}

// bounded returns r, or an unrenderable answer when its manifests are
// over MaxRenderedBytes (an in-process renderer has no pipe to cut).
func (r *Rendering) bounded() *Rendering {
	n := 0
	for _, m := range r.Manifests {
		n += len(m)
	}
	if n > MaxRenderedBytes {
		return &Rendering{Unrenderable: fmt.Sprintf("the chart renders more than %d MiB of manifests", MaxRenderedBytes>>20)}
	}
	return r
}

// CompareRendered diffs the manifests two versions render, as entries
// rendered/<template path> (sorted by path) to add to a Result's Files.
func CompareRendered(from, to map[string]string) []FileDiff {
	a, b := Files{}, Files{}
	for p, m := range from {
		a[RenderedPrefix+p] = []byte(m)
	}
	for p, m := range to {
		b[RenderedPrefix+p] = []byte(m)
	}
	return compareFiles(a, b)
}

// WithRendered returns a copy of r with the rendered entries added in
// path order; renderErr, when set, says why there are none.
func (r *Result) WithRendered(rendered []FileDiff, renderErr string) *Result {
	out := *r
	out.Files = append(append([]FileDiff(nil), r.Files...), rendered...)
	sort.SliceStable(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	out.RenderedError = renderErr
	return &out
}

// IsRendered reports whether a diff entry is a rendered manifest rather
// than a file of the chart.
func IsRendered(path string) bool { return strings.HasPrefix(path, RenderedPrefix) }
