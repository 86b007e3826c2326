// Package chartdiff compares two chart versions: every file of the two
// archives as a unified text diff, and values.yaml structurally (keys
// added, removed and changed, as dotted paths). It knows nothing of
// repositories or permissions; the application layer decides who may
// compare what and caches the answers (CONTRACT §18 "Discovery").
package chartdiff

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chart"
)

// File statuses of a FileDiff.
const (
	StatusAdded    = "added"
	StatusRemoved  = "removed"
	StatusModified = "modified"
)

// FileDiff is one file that differs between the two versions.
type FileDiff struct {
	// Path is relative to the chart's root (templates/deployment.yaml).
	Path string
	// Status is StatusAdded, StatusRemoved or StatusModified.
	Status string
	// Diff is the file's unified diff (headers a/PATH and b/PATH), or a
	// one-line note for a binary file.
	Diff string
}

// ValueChange is a key of values.yaml whose default changed.
type ValueChange struct {
	Key  string
	From any
	To   any
}

// Values is the structural diff of values.yaml.
type Values struct {
	Added   []string
	Removed []string
	Changed []ValueChange
}

// Empty reports whether no key was added, removed or changed.
func (v Values) Empty() bool { return len(v.Added)+len(v.Removed)+len(v.Changed) == 0 }

// Result is the difference between two chart versions.
type Result struct {
	// Files lists the files that differ, by path.
	Files []FileDiff
	// Values is the structural diff of values.yaml; ValuesError says why
	// it is empty when one side's values.yaml is not valid YAML.
	Values      Values
	ValuesError string
	// RenderedError says why the rendered manifests (rendered/…
	// entries) are missing: a version could not be rendered.
	RenderedError string
}

// Unified returns every file's diff, one after another, as `diff -ru`
// would print them: the text Accept: text/plain answers.
func (r *Result) Unified() string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}

// Files is a chart's files by path relative to the chart's root.
type Files map[string][]byte

// ReadFiles reads every regular file of a chart archive, validated as
// chart.Walk does within lim.
func ReadFiles(r io.Reader, lim chart.Limits) (Files, error) {
	files := Files{}
	_, err := chart.Walk(r, lim, func(p string, size int64, rd io.Reader) error {
		b, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		files[p] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// textTimeout bounds the work on one file's diff: Myers' algorithm is
// quadratic on two unrelated files, and charts are untrusted input. Past
// it diffmatchpatch returns a valid but coarser diff (whole blocks
// replaced), never a wrong one.
const textTimeout = 250 * time.Millisecond

// Compare returns the difference between the files of two versions.
func Compare(from, to Files) *Result {
	res := &Result{Files: compareFiles(from, to)}
	res.Values, res.ValuesError = CompareValues(from["values.yaml"], to["values.yaml"])
	return res
}

// compareFiles diffs every file that differs, by path.
func compareFiles(from, to Files) []FileDiff {
	paths := make([]string, 0, len(from)+len(to))
	for p := range from {
		paths = append(paths, p)
	}
	for p := range to {
		if _, ok := from[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []FileDiff
	for _, p := range paths {
		a, inA := from[p]
		b, inB := to[p]
		var status string
		switch {
		case !inA:
			status = StatusAdded
		case !inB:
			status = StatusRemoved
		case bytes.Equal(a, b):
			continue
		default:
			status = StatusModified
		}
		out = append(out, FileDiff{Path: p, Status: status, Diff: fileDiff(p, a, b, inA, inB)})
	}
	return out
}

// fileDiff is the unified diff of one file; a file that is not UTF-8 text
// gets diff's one-line note instead of its bytes.
func fileDiff(p string, a, b []byte, inA, inB bool) string {
	fromName, toName := "a/"+p, "b/"+p
	if !inA {
		fromName = "/dev/null"
	}
	if !inB {
		toName = "/dev/null"
	}
	if !utf8.Valid(a) || !utf8.Valid(b) {
		return fmt.Sprintf("Binary files %s and %s differ\n", fromName, toName)
	}
	return Unified(fromName, toName, string(a), string(b), 3)
}

// line is one line of a diff: ' ', '-' or '+' and its text with its
// newline, if it had one.
type line struct {
	op   byte
	text string
}

// Unified returns the unified diff of a and b with ctx lines of context,
// "" when they are equal. Lines are compared whole (diffmatchpatch in
// line mode, bounded by textTimeout).
func Unified(fromName, toName, a, b string, ctx int) string {
	if a == b {
		return ""
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = textTimeout
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	var all []line
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, t := range splitLines(d.Text) {
			all = append(all, line{op, t})
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Hunks: runs of changes joined when fewer than 2*ctx equal lines
	// separate them, each with ctx lines of context around.
	for i := 0; i < len(all); {
		if all[i].op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(all); j++ {
			if all[j].op != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*ctx {
				break
			}
		}
		stop := min(end+ctx, len(all))
		writeHunk(&out, all, start, stop)
		i = stop
	}
	return out.String()
}

// writeHunk writes all[start:stop] as one hunk with its header.
func writeHunk(out *strings.Builder, all []line, start, stop int) {
	// Line numbers of the hunk's first line on each side.
	fromLine, toLine := 1, 1
	for _, l := range all[:start] {
		if l.op != '+' {
			fromLine++
		}
		if l.op != '-' {
			toLine++
		}
	}
	fromCount, toCount := 0, 0
	for _, l := range all[start:stop] {
		if l.op != '+' {
			fromCount++
		}
		if l.op != '-' {
			toCount++
		}
	}
	// As diff does, an empty side starts at the line before.
	if fromCount == 0 {
		fromLine--
	}
	if toCount == 0 {
		toLine--
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(fromLine, fromCount), hunkRange(toLine, toCount))
	for _, l := range all[start:stop] {
		out.WriteByte(l.op)
		out.WriteString(l.text)
		if !strings.HasSuffix(l.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, count int) string {
	if count == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// CompareValues compares two values.yaml files by key (nil for a file
// the version does not have). Keys are dotted paths (image.tag); list
// items are indexed (ingress.hosts[0].host) and a key holding a dot is
// quoted (podAnnotations["prometheus.io/scrape"]). A leaf is a scalar or
// an empty map or list; an empty map that gains keys is not reported as
// removed, only its new keys as added (and the other way round). The
// second result is non-empty when a side is not valid YAML.
func CompareValues(from, to []byte) (Values, string) {
	a, err := flatValues(from)
	if err != nil {
		return Values{}, "the old values.yaml is not valid YAML: " + err.Error()
	}
	b, err := flatValues(to)
	if err != nil {
		return Values{}, "the new values.yaml is not valid YAML: " + err.Error()
	}
	var v Values
	for k, av := range a {
		bv, ok := b[k]
		switch {
		case !ok:
			if !(isEmptyContainer(av) && hasChildren(b, k)) {
				v.Removed = append(v.Removed, k)
			}
		case !equalLeaf(av, bv):
			v.Changed = append(v.Changed, ValueChange{Key: k, From: av, To: bv})
		}
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok && !(isEmptyContainer(bv) && hasChildren(a, k)) {
			v.Added = append(v.Added, k)
		}
	}
	sort.Strings(v.Added)
	sort.Strings(v.Removed)
	sort.Slice(v.Changed, func(i, j int) bool { return v.Changed[i].Key < v.Changed[j].Key })
	return v, ""
}

// flatValues parses a values file into its leaves by path.
func flatValues(src []byte) (map[string]any, error) {
	out := map[string]any{}
	if len(bytes.TrimSpace(src)) == 0 {
		return out, nil
	}
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	m, ok := doc.(map[string]any)
	if !ok {
		if doc != nil {
			return nil, fmt.Errorf("the top level is not a map of keys")
		}
		return out, nil
	}
	flatten("", m, out)
	return out, nil
}

func flatten(prefix string, v any, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 && prefix != "" {
			out[prefix] = t
		}
		for k, c := range t {
			flatten(joinKey(prefix, k), c, out)
		}
	case []any:
		if len(t) == 0 {
			out[prefix] = t
		}
		for i, c := range t {
			flatten(prefix+"["+strconv.Itoa(i)+"]", c, out)
		}
	default:
		out[prefix] = v
	}
}

// joinKey appends key k to a dotted path, quoting keys that a plain dotted
// path could not spell.
func joinKey(prefix, k string) string {
	if k == "" || strings.ContainsAny(k, ".[]\"") {
		return prefix + "[" + strconv.Quote(k) + "]"
	}
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func isEmptyContainer(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// hasChildren reports whether m has a key under the path k.
func hasChildren(m map[string]any, k string) bool {
	for p := range m {
		if strings.HasPrefix(p, k+".") || strings.HasPrefix(p, k+"[") {
			return true
		}
	}
	return false
}

// equalLeaf compares two leaves; empty containers of the same kind are
// equal.
func equalLeaf(a, b any) bool {
	if isEmptyContainer(a) || isEmptyContainer(b) {
		return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) && isEmptyContainer(a) && isEmptyContainer(b)
	}
	return a == b
}
