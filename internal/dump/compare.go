package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Diff compares two dumps record by record, in no particular order
// within a kind, and describes up to max differences ("" when none).
// It ignores what Load does not keep (audit entry IDs, blob link times),
// what is derived from other records (a team's member count) and what
// engines keep differently (times past the microsecond, empty
// lists against none, the formatting of chart metadata), so a dump and
// the dump of where it was loaded compare equal.
func Diff(want, got []chartctl.DumpRecord, max int) string {
	w, g := canonicalSet(want), canonicalSet(got)
	var out []string
	for _, kind := range chartctl.DumpKinds {
		missing, extra := subtract(w[kind], g[kind]), subtract(g[kind], w[kind])
		for _, m := range missing {
			out = append(out, fmt.Sprintf("%s missing: %s", kind, clip(m)))
		}
		for _, e := range extra {
			out = append(out, fmt.Sprintf("%s not expected: %s", kind, clip(e)))
		}
	}
	if len(out) == 0 {
		return ""
	}
	n := len(out)
	if n > max {
		out = append(out[:max], fmt.Sprintf("and %d more", n-max))
	}
	var b bytes.Buffer
	for i, s := range out {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s)
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// subtract returns the elements of a (sorted) that b (sorted) lacks,
// counting duplicates.
func subtract(a, b []string) []string {
	var out []string
	j := 0
	for _, s := range a {
		for j < len(b) && b[j] < s {
			j++
		}
		if j < len(b) && b[j] == s {
			j++
			continue
		}
		out = append(out, s)
	}
	return out
}

// canonicalSet returns each kind's records in canonical JSON, sorted.
func canonicalSet(records []chartctl.DumpRecord) map[string][]string {
	out := map[string][]string{}
	for _, r := range records {
		k := r.Kind()
		out[k] = append(out[k], canonical(r))
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// canonical renders r as JSON after taking out what Diff ignores.
func canonical(r chartctl.DumpRecord) string {
	// A deep copy, so the caller's records stay as they are.
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf("unencodable record: %v", err)
	}
	var c chartctl.DumpRecord
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Sprintf("undecodable record: %v", err)
	}
	normalize(reflect.ValueOf(&c).Elem())
	switch {
	case c.AuditEntry != nil:
		c.AuditEntry.ID = ""
	case c.OCIBlobLink != nil:
		c.OCIBlobLink.LinkedAt = time.Time{}
	case c.Team != nil:
		c.Team.MemberCount = 0 // derived from the members
	case c.ChartVersion != nil:
		c.ChartVersion.RepositoryID = ""
		var m bytes.Buffer
		if json.Compact(&m, c.ChartVersion.Metadata) == nil {
			c.ChartVersion.Metadata = m.Bytes()
		}
	}
	b, _ = json.Marshal(c)
	return string(b)
}

var timeType = reflect.TypeOf(time.Time{})

// normalize puts every time in UTC to the microsecond and turns empty
// slices and maps into nil, all through v.
func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC().Truncate(time.Microsecond)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				normalize(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				normalize(v.Index(i))
			}
		}
	}
}
