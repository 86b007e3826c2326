package registry

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// A chart uploaded over /v1 or the ChartMuseum API has neither a stored
// tag nor a stored manifest: pulling it by tag asks the OCI store for both
// and finds nothing, then derives the manifest (which is kept). absentCache
// remembers those answers for absentTTL, so a pull does not ask again.
//
// A tag or a stored manifest appears only through PutManifest, and
// storeManifest drops everything remembered once it has committed: a push
// on this replica is seen by the very next pull. A push on another replica
// sharing the store is seen within absentTTL, the bound the application
// layer's records keep for the same reason.

// absentTTL bounds how long an answer "not there" is believed.
const absentTTL = time.Second

// maxAbsent bounds the answers remembered; past it they are forgotten.
const maxAbsent = 20000

// absentKey names one thing looked for: a tag of a name, or the stored
// manifest of a chart version.
type absentKey struct {
	kind    absentKind
	a, b, c string
}

type absentKind uint8

const (
	absentTag absentKind = iota + 1
	absentChartManifest
)

type absentCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[absentKey]time.Time
}

// check reports whether k was found absent less than absentTTL ago, and
// the generation to hand to put if it is read now.
func (c *absentCache) check(k absentKey) (gen uint64, absent bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.m[k]
	return c.gen, ok && time.Now().Before(until)
}

// put remembers that k was not found by a read that began at generation
// gen (unless something was stored since).
func (c *absentCache) put(k absentKey, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= maxAbsent {
		c.m = map[absentKey]time.Time{}
	}
	c.m[k] = time.Now().Add(absentTTL)
}

// forget drops every answer: something was stored.
func (c *absentCache) forget() {
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.mu.Unlock()
}

// errAbsent is the ENOTFOUND of a remembered absence.
var errAbsent = &chartctl.Error{Code: chartctl.ENOTFOUND, Message: "Not found."}

// taggedManifest is r.OCI.TaggedManifest, remembering a tag that is not
// there.
func (r *Registry) taggedManifest(ctx context.Context, name, tag string) (*chartctl.OCIManifest, error) {
	k := absentKey{kind: absentTag, a: name, b: tag}
	gen, absent := r.absent.check(k)
	if absent {
		return nil, errAbsent
	}
	m, err := r.OCI.TaggedManifest(ctx, name, tag)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		r.absent.put(k, gen)
	}
	return m, err
}

// storedChartManifest is r.OCI.ChartManifest, remembering a chart version
// that has no stored manifest.
func (r *Registry) storedChartManifest(ctx context.Context, repo, name, version string) (*chartctl.OCIManifest, error) {
	k := absentKey{kind: absentChartManifest, a: repo, b: name, c: version}
	gen, absent := r.absent.check(k)
	if absent {
		return nil, errAbsent
	}
	m, err := r.OCI.ChartManifest(ctx, repo, name, version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		r.absent.put(k, gen)
	}
	return m, err
}
