package helmindex

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// mapStore is a store of chart versions the tests change by hand, as
// commits would.
type mapStore struct {
	mu   sync.Mutex
	cvs  map[string]*chartctl.ChartVersion
	fail error
}

func newMapStore(cvs ...*chartctl.ChartVersion) *mapStore {
	s := &mapStore{cvs: map[string]*chartctl.ChartVersion{}}
	for _, cv := range cvs {
		s.put(cv)
	}
	return s
}

func (s *mapStore) put(cv *chartctl.ChartVersion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cvs[cv.Name+"/"+cv.Version] = cv
}

func (s *mapStore) delete(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cvs, name+"/"+version)
}

func (s *mapStore) load(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*chartctl.ChartVersion
	for _, cv := range s.cvs {
		out = append(out, cv)
	}
	return out, nil
}

func (s *mapStore) loadVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	cv := s.cvs[name+"/"+version]
	if cv == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "not found")
	}
	return cv, nil
}

// An upload and a delete of the same version commit in one order and
// reach the cache in the other: the index follows the store, not the
// order of arrival. (Applying the callers' records in arrival order would
// keep the deleted version's entry.)
func TestRefreshOrderOfArrivalDoesNotMatter(t *testing.T) {
	ctx := context.Background()
	a1 := mkCV(t, nil, "a", "1.0.0", t0)
	st := newMapStore()
	c := New(st.load, Options{LoadVersion: st.loadVersion})
	mustGet(t, c)

	st.put(a1)                        // the upload commits
	st.delete("a", "1.0.0")           // the delete commits
	c.Refresh(ctx, "r", "a", "1.0.0") // the delete's refresh arrives first
	c.Refresh(ctx, "r", "a", "1.0.0") // then the upload's
	if hi := loadWithHelm(t, mustGet(t, c).Body); len(hi.Entries) != 0 {
		t.Fatalf("entries = %v after the version was deleted", hi.Entries)
	}

	// Two overwrites of one version: the second commit wins whatever the
	// order the refreshes come in.
	first := mkCV(t, nil, "a", "1.0.0", t0)
	first.Digest = "sha256:" + strings.Repeat("11", 32)
	second := mkCV(t, nil, "a", "1.0.0", t0)
	second.Digest = "sha256:" + strings.Repeat("22", 32)
	st.put(first)
	st.put(second)
	c.Refresh(ctx, "r", "a", "1.0.0")
	c.Refresh(ctx, "r", "a", "1.0.0")
	hi := loadWithHelm(t, mustGet(t, c).Body)
	if len(hi.Entries["a"]) != 1 || hi.Entries["a"][0].Digest != strings.Repeat("22", 32) {
		t.Fatalf("entries = %+v, want the second overwrite", hi.Entries["a"])
	}
}

// A Refresh whose read fails makes the next Get reload the repository.
func TestRefreshReadErrorReloads(t *testing.T) {
	ctx := context.Background()
	st := newMapStore(mkCV(t, nil, "a", "1.0.0", t0))
	c := New(st.load, Options{LoadVersion: st.loadVersion})
	mustGet(t, c)
	st.put(mkCV(t, nil, "b", "1.0.0", t0))
	st.fail = errors.New("disk on fire")
	c.Refresh(ctx, "r", "b", "1.0.0")
	st.fail = nil
	if hi := loadWithHelm(t, mustGet(t, c).Body); hi.Entries["a"] == nil || hi.Entries["b"] == nil {
		t.Fatalf("entries = %v, want a and b after a failed refresh", hi.Entries)
	}
}

// An identical refresh keeps the index (and its ETag).
func TestRefreshUnchanged(t *testing.T) {
	st := newMapStore(mkCV(t, nil, "a", "1.0.0", t0))
	c := New(st.load, Options{LoadVersion: st.loadVersion})
	ix := mustGet(t, c)
	c.Refresh(context.Background(), "r", "a", "1.0.0")
	c.Refresh(context.Background(), "r", "zzz", "1.0.0")
	if again := mustGet(t, c); again != ix {
		t.Fatal("a refresh that changed nothing rendered a new index")
	}
}
