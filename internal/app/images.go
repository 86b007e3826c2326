package app

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/debounce"
)

// The images each chart version deploys (issue #33) are found after the
// version is stored, never on the write path (CONTRACT §18 decision 9):
// from the artifacthub.io/images annotation when the chart has one, else
// by rendering the chart in the bounded child (Render). One replica at a
// time does it, under a lease; at start it also goes through every
// version stored without a record (the backfill of decision 11).

// imagesLease names the lease one replica at a time finds images under.
const imagesLease = "images"

// imagesLeaseTTL is the lease's time to live, renewed while a run lasts.
const imagesLeaseTTL = time.Minute

// imagesBatch is how many versions the job stores with one SaveImages:
// a backlog (a large import, a burst of pushes, the backfill) then costs
// a commit per batch rather than two per version, which after 100,000
// pushes was most of what the server did for minutes.
const imagesBatch = 64

// Once woken by a push, the job waits for the pushes to pause (imagesQuiet
// without another), at most imagesMax: a burst of pushes then shares a
// commit of their image records instead of one each, and the renders
// (CPU in the render workers) come after the burst instead of beside it
// (a burst on a freshly started server ran about a third slower beside
// them; docs/performance.md, "OCI side by side"); a steady stream still
// has its images found within imagesMax.
const (
	imagesQuiet = 50 * time.Millisecond
	imagesMax   = time.Second
)

// imagesRetry is how long a replica waits to try again when another one
// holds the lease (its queue keeps what it was asked for meanwhile).
const imagesRetry = 30 * time.Second

// imagesJob is the state of the background image extraction.
type imagesJob struct {
	// run is held by a run (runImages), so ProcessImages waits for one
	// under way in the background instead of doing its work twice.
	run sync.Mutex
	mu  sync.Mutex
	// queue holds versions stored by this replica and not done yet; the
	// batch under way stays at its head until it is stored.
	queue []versionKey
	// backfill asks the next run to go through every stored version.
	backfill bool
	wake     chan struct{}
	// running, done and total report a backfill's progress.
	running     bool
	done, total int
	// quiet and max replace imagesQuiet and imagesMax when set (tests).
	quiet, max time.Duration
}

func (j *imagesJob) init() {
	j.mu.Lock()
	if j.wake == nil {
		j.wake = make(chan struct{}, 1)
	}
	j.mu.Unlock()
}

func (j *imagesJob) signal() {
	j.init()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// awaitPause returns once no push has woken the job for imagesQuiet, or
// imagesMax after it was called, or when stop closes.
func (j *imagesJob) awaitPause(stop <-chan struct{}) {
	j.init()
	quiet, max := imagesQuiet, imagesMax
	if j.quiet > 0 {
		quiet = j.quiet
	}
	if j.max > 0 {
		max = j.max
	}
	debounce.Gather(j.wake, quiet, max, stop, func(struct{}) bool { return true })
}

// ImagesLater asks the background job to find the images of one stored
// version (called after a push; the version is pending until then).
func (a *App) ImagesLater(repo, name, version string) {
	a.images.mu.Lock()
	a.images.queue = append(a.images.queue, versionKey{repo, name, version})
	a.images.mu.Unlock()
	a.images.signal()
}

// ImagesProgress reports the backfill: whether one is running, and how
// many versions it has gone through of how many.
func (a *App) ImagesProgress() (running bool, done, total int) {
	a.images.mu.Lock()
	defer a.images.mu.Unlock()
	return a.images.running, a.images.done, a.images.total
}

// ImagesPending returns how many versions this replica's images job has
// still to go through: those queued after a push, and the rest of a
// backfill under way. It is the chartctl_images_pending metric.
func (a *App) ImagesPending() int {
	a.images.mu.Lock()
	defer a.images.mu.Unlock()
	n := len(a.images.queue)
	if a.images.running {
		n += a.images.total - a.images.done
	}
	return n
}

// RunImages finds images in the background until stop is closed: first
// the backfill of every version without a record, then each version
// ImagesLater names. When another replica holds the lease it tries again
// after imagesRetry.
func (a *App) RunImages(stop <-chan struct{}) {
	a.images.init()
	startBackfill := func() {
		a.images.mu.Lock()
		a.images.backfill = true
		a.images.mu.Unlock()
		a.images.signal()
	}
	if d := a.Config.BackfillDelay; d > 0 {
		// Versions pushed meanwhile are done at once; the pass over
		// every stored version waits (Config.BackfillDelay).
		t := time.AfterFunc(d, startBackfill)
		defer t.Stop()
	} else {
		startBackfill()
	}
	ctx, cancel := untilStop(context.Background(), stop)
	defer cancel()
	for {
		again, err := a.runImages(ctx)
		if err != nil && ctx.Err() == nil {
			a.Logger.Error("find chart images", "err", err)
		}
		var retry <-chan time.Time
		var t *time.Timer
		if again {
			t = time.NewTimer(imagesRetry)
			retry = t.C
		}
		select {
		case <-stop:
		case <-a.images.wake:
			a.images.awaitPause(stop)
		case <-retry:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// ProcessImages runs the job once, now: the backfill of every version
// stored without a record, then the queue. A run under way on this
// replica finishes first. It returns when done, or at once when another
// replica holds the lease (the backfill is then its work). Tests call it.
func (a *App) ProcessImages(ctx context.Context) error {
	a.images.mu.Lock()
	a.images.backfill = true
	a.images.mu.Unlock()
	_, err := a.runImages(ctx)
	return err
}

// runImages does one run under the lease; again is true when the lease
// was held elsewhere or an error left work undone.
func (a *App) runImages(ctx context.Context) (again bool, err error) {
	a.images.run.Lock()
	defer a.images.run.Unlock()
	a.images.mu.Lock()
	idle := !a.images.backfill && len(a.images.queue) == 0
	a.images.mu.Unlock()
	if idle {
		return false, nil
	}
	ok, err := a.Store.AcquireLease(ctx, imagesLease, a.Replica, imagesLeaseTTL)
	if err != nil || !ok {
		return true, err
	}
	defer func() { _ = a.Store.ReleaseLease(context.WithoutCancel(ctx), imagesLease, a.Replica) }()
	renew := a.leaseRenewer(ctx, imagesLease, imagesLeaseTTL)
	a.images.mu.Lock()
	backfill := a.images.backfill
	a.images.backfill = false
	a.images.mu.Unlock()
	if backfill {
		if err := a.backfillImages(ctx, renew); err != nil {
			a.images.mu.Lock()
			a.images.backfill = true
			a.images.mu.Unlock()
			return true, err
		}
	}
	for {
		// The batch is taken off the queue once done (runImages is its
		// only consumer; ImagesLater only appends), so a lost lease
		// leaves it there for the next try.
		a.images.mu.Lock()
		keys := slices.Clone(a.images.queue[:min(len(a.images.queue), imagesBatch)])
		a.images.mu.Unlock()
		if len(keys) == 0 {
			return false, nil
		}
		leaseLost, err := a.findImages(ctx, keys, nil, renew)
		if leaseLost {
			return true, err
		}
		a.images.mu.Lock()
		a.images.queue = a.images.queue[len(keys):]
		a.images.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return false, nil
			}
			a.Logger.Warn("find chart images", "versions", len(keys), "err", err)
		}
	}
}

// backfillImages goes through every stored version without an image
// record, or without a kept rendering while a renderer is installed
// (versions stored before renderings were kept, or restored: renderings
// are not in backups), reporting its progress (ImagesProgress, the log).
// It first prunes the renderings of archives no version holds any more.
func (a *App) backfillImages(ctx context.Context, renew func() error) error {
	if n, err := a.Store.PruneRendered(ctx); err != nil {
		return err
	} else if n > 0 {
		a.Logger.Info("pruned the renderings of deleted chart archives", "archives", n)
	}
	kept := map[string]bool{}
	if a.Render != nil {
		digests, err := a.Store.RenderedDigests(ctx)
		if err != nil {
			return err
		}
		for _, d := range digests {
			kept[d] = true
		}
	}
	repos, err := a.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	var todo []*chartctl.ChartVersion
	for _, r := range repos {
		cvs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		for _, cv := range cvs {
			switch {
			case a.Render != nil && (cv.Images == nil || !kept[cv.Digest]):
				todo = append(todo, cv)
			case a.Render == nil && cv.Images == nil && chartdiff.ImagesOf(cv.Metadata).Source == chartdiff.ImagesAnnotation:
				// Without a renderer only the annotation can say; a
				// version without one stays pending, and going through
				// it again at every start read every record once more.
				todo = append(todo, cv)
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	a.images.mu.Lock()
	a.images.running, a.images.done, a.images.total = true, 0, len(todo)
	a.images.mu.Unlock()
	defer func() {
		a.images.mu.Lock()
		a.images.running = false
		a.images.mu.Unlock()
	}()
	a.Logger.Info("finding the images of stored chart versions", "versions", len(todo))
	for start := 0; start < len(todo); start += imagesBatch {
		var keys []versionKey
		for _, cv := range todo[start:min(len(todo), start+imagesBatch)] {
			keys = append(keys, versionKey{cv.Repository, cv.Name, cv.Version})
		}
		// The same archive in several repositories renders once.
		if _, err := a.findImages(ctx, keys, kept, renew); err != nil {
			return err
		}
		done := start + len(keys)
		a.images.mu.Lock()
		a.images.done = done
		a.images.mu.Unlock()
		if done/500 > start/500 {
			a.Logger.Info("finding the images of stored chart versions", "done", done, "of", len(todo))
		}
	}
	a.Logger.Info("found the images of stored chart versions", "versions", len(todo))
	return nil
}

// findImages finds the images of the versions keys names and stores
// them with one SaveImages. A version that is gone is skipped; one whose
// images cannot be found (the renderer could not run) is logged and stays
// pending. kept, when not nil, holds the digests of the archives with a
// kept rendering (the backfill's list), and gains those it renders. It
// renews the job's lease before each version (renew); when that fails it
// stores nothing and returns leaseLost with the error. Otherwise it
// returns the error of the store, or of ctx.
func (a *App) findImages(ctx context.Context, keys []versionKey, kept map[string]bool, renew func() error) (leaseLost bool, err error) {
	var found []chartctl.FoundImages
	for _, k := range keys {
		if err := renew(); err != nil {
			return true, err
		}
		f, err := a.examineImages(ctx, k, kept)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			a.Logger.Warn("find chart images", "repository", k.repo, "chart", k.name, "version", k.version, "err", err)
		}
		if f != nil {
			found = append(found, *f)
		}
	}
	if len(found) == 0 {
		return false, nil
	}
	if _, err := a.Store.SaveImages(ctx, found); err != nil {
		return false, err
	}
	repos := map[string]bool{}
	for _, f := range found {
		if f.Images != nil {
			a.versions.forget(versionKey{f.Repository, f.Name, f.Version})
			repos[f.Repository] = true
		}
	}
	// Search shows a chart's images.
	for repo := range repos {
		a.search.forget(repo)
	}
	return false, nil
}

// examineImages returns what findImages stores for one version, nil when
// nothing (it has its record and rendering; no renderer can say): its
// image record unless it has one, from its annotation, else by rendering
// it (Render). Without a renderer a version without the annotation stays
// pending. A chart that cannot be rendered is recorded unrenderable with
// the reason; an error (the renderer could not run) leaves it pending.
// With a renderer it also keeps what the archive renders, annotation or
// not, so a diff reads it instead of rendering (docs/performance.md
// "Diff"); the rendering and the record are stored together, so a version
// with a record and no rendering is one the backfill renders again.
// Returns ENOTFOUND if the version is gone.
func (a *App) examineImages(ctx context.Context, k versionKey, kept map[string]bool) (*chartctl.FoundImages, error) {
	cv, err := a.Store.ChartVersion(ctx, k.repo, k.name, k.version)
	if err != nil {
		return nil, err
	}
	needRendering := false
	if a.Render != nil {
		if kept != nil {
			needRendering = !kept[cv.Digest]
		} else if cv.Images == nil {
			// A new version: its archive is rarely stored elsewhere, and
			// rendering it is needed for its images anyway.
			needRendering = true
		} else {
			_, err := a.Store.Rendered(ctx, cv.Digest)
			if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return nil, err
			}
			needRendering = err != nil
		}
	}
	if cv.Images != nil && !needRendering {
		return nil, nil
	}
	f := &chartctl.FoundImages{Repository: cv.Repository, Name: cv.Name, Version: cv.Version, Digest: cv.Digest}
	ann := chartdiff.ImagesOf(cv.Metadata)
	var r *chartdiff.Rendering
	if needRendering || (cv.Images == nil && ann.Source != chartdiff.ImagesAnnotation && a.Render != nil) {
		if r, err = a.renderVersion(ctx, cv); err != nil {
			return nil, err
		}
		if f.Rendered, err = chartdiff.EncodeRendering(r); err != nil {
			return nil, err
		}
		if kept != nil {
			kept[cv.Digest] = true
		}
	}
	if cv.Images == nil {
		rec := &chartctl.Images{CheckedAt: a.Now().UTC()}
		switch {
		case ann.Source == chartdiff.ImagesAnnotation:
			rec.Source, rec.Images = chartctl.ImagesAnnotation, ann.Images
		case r == nil:
			// No renderer: pending until one is installed.
			return nil, nil
		case r.Unrenderable != "":
			rec.Source, rec.Error = chartctl.ImagesUnrenderable, r.Unrenderable
		default:
			rec.Source, rec.Images, rec.KubeVersion = chartctl.ImagesRendered, r.Images, r.KubeVersion
		}
		f.Images = rec
	}
	return f, nil
}

// keptRendering returns the rendering kept for a version's archive, or
// nil when there is none (not processed yet, or too large to keep). A
// record that does not read is logged and treated as none: the caller
// renders, which is slower but right.
func (a *App) keptRendering(ctx context.Context, cv *chartctl.ChartVersion) *chartdiff.Rendering {
	b, err := a.Store.Rendered(ctx, cv.Digest)
	if err != nil {
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			a.Logger.Warn("read a kept rendering", "repository", cv.Repository, "chart", cv.Name, "version", cv.Version, "err", err)
		}
		return nil
	}
	r, err := chartdiff.DecodeRendering(b)
	if err != nil {
		a.Logger.Warn("read a kept rendering", "repository", cv.Repository, "chart", cv.Name, "version", cv.Version, "err", err)
		return nil
	}
	return r
}

// renderVersion renders a stored version's archive with Render.
func (a *App) renderVersion(ctx context.Context, cv *chartctl.ChartVersion) (*chartdiff.Rendering, error) {
	b, err := a.ReadBlob(ctx, cv.Digest)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	archive, err := io.ReadAll(b)
	if err != nil {
		return nil, err
	}
	return a.Render(ctx, archive)
}
