package chartctl_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestDumpCoverage holds DumpCoverage to the store interfaces: every
// method is classified, nothing stale is listed, every field it names is
// a DumpRecord field, and every DumpRecord field is named by some method
// and has a kind. A new store method (a new kind of stored data) fails
// here until someone decides whether dumps carry it.
func TestDumpCoverage(t *testing.T) {
	methods := map[string]bool{}
	for _, ty := range []reflect.Type{
		reflect.TypeOf((*chartctl.Store)(nil)).Elem(),
		reflect.TypeOf((*chartctl.OAuthStore)(nil)).Elem(),
		reflect.TypeOf((*chartctl.OCIStore)(nil)).Elem(),
	} {
		for i := range ty.NumMethod() {
			methods[ty.Method(i).Name] = true
		}
	}
	rec := reflect.TypeOf(chartctl.DumpRecord{})
	named := map[string]bool{}
	for m := range methods {
		c, ok := chartctl.DumpCoverage[m]
		switch {
		case !ok:
			t.Errorf("store method %s is not in chartctl.DumpCoverage: say which DumpRecord field carries what it writes, \"read\", or \"- why not\"", m)
		case c == "read" || strings.HasPrefix(c, "- "):
		default:
			if _, ok := rec.FieldByName(c); !ok {
				t.Errorf("DumpCoverage[%s] = %q, which is not a DumpRecord field", m, c)
			}
			named[c] = true
		}
	}
	for m := range chartctl.DumpCoverage {
		if !methods[m] {
			t.Errorf("DumpCoverage lists %s, which no store interface has", m)
		}
	}
	for i := range rec.NumField() {
		f := rec.Field(i)
		if !named[f.Name] {
			t.Errorf("DumpRecord.%s is named by no store method in DumpCoverage", f.Name)
		}
		// Each field alone gives a kind of DumpKinds.
		var r chartctl.DumpRecord
		reflect.ValueOf(&r).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		if k := r.Kind(); !slices.Contains(chartctl.DumpKinds, k) {
			t.Errorf("DumpRecord.%s has kind %q, not one of DumpKinds", f.Name, k)
		}
	}
	if len(chartctl.DumpKinds) != rec.NumField() {
		t.Errorf("%d DumpKinds for %d DumpRecord fields", len(chartctl.DumpKinds), rec.NumField())
	}
}
