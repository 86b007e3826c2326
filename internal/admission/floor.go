package admission

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Validate checks a policy as a person set it and fills its defaults
// ("" levels); it returns an EINVALID error naming the field.
func Validate(p *chartctl.Policy) error {
	if p.RequireSignature == "" {
		p.RequireSignature = chartctl.SignatureNone
	}
	if p.Lint == "" {
		p.Lint = chartctl.LintOff
	}
	switch p.Lint {
	case chartctl.LintOff, chartctl.LintWarning, chartctl.LintError:
	default:
		return chartctl.Invalid("lint", "lint must be off, warning or error, not %q.", p.Lint)
	}
	if p.HoldWindow < 0 {
		return chartctl.Invalid("hold_window", "hold_window must not be negative.")
	}
	if p.MaxSize < 0 {
		return chartctl.Invalid("max_size", "max_size must not be negative.")
	}
	if p.NamePattern != "" {
		if _, err := regexp.Compile(p.NamePattern); err != nil {
			return chartctl.Invalid("name_pattern", "name_pattern is not a valid regular expression: %v.", err)
		}
	}
	for _, f := range p.RequiredFields {
		if !slices.Contains(RequiredFieldNames, f) {
			return chartctl.Invalid("required_fields", "required_fields: unknown field %q; use any of %s.", f, strings.Join(RequiredFieldNames, ", "))
		}
	}
	for _, g := range p.DenyFiles {
		if g == "" || strings.Contains(g, "**") {
			return chartctl.Invalid("deny_files", "deny_files: %q is not a glob (use *, ? and [...]; a glob without / matches a base name anywhere).", g)
		}
		if _, err := matchErr(g); err != nil {
			return chartctl.Invalid("deny_files", "deny_files: %q is not a valid glob.", g)
		}
	}
	return nil
}

func matchErr(g string) (bool, error) {
	return path.Match(g, "x")
}

var lintRank = map[string]int{"": 0, chartctl.LintOff: 0, chartctl.LintWarning: 1, chartctl.LintError: 2}

// Looser lists, as violations, every rule in which repo is looser than
// the organization's floor (decision 19: a repository's policy can only
// tighten its organization's).
func Looser(floor, repo chartctl.Policy) []chartctl.Violation {
	var out []chartctl.Violation
	add := func(rule, format string, args ...any) {
		out = append(out, chartctl.Violation{Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	fs, rs := sigOrNone(floor.RequireSignature), sigOrNone(repo.RequireSignature)
	switch {
	case fs == chartctl.SignatureNone:
	case fs == chartctl.SignatureAny && rs == chartctl.SignatureNone:
		add(chartctl.RuleRequireSignature, "the organization requires a verified signature; use any or a trust entry's name")
	case fs != chartctl.SignatureAny && rs != fs:
		add(chartctl.RuleRequireSignature, "the organization requires a signature verified by %q", fs)
	}
	if fs != chartctl.SignatureNone && floor.HoldWindow >= 0 && repo.HoldWindow > floor.HoldWindow {
		add("hold_window", "the organization holds unsigned versions at most %s", floor.HoldWindow)
	}
	if lintRank[repo.Lint] < lintRank[floor.Lint] {
		add(chartctl.RuleLint, "the organization sets lint to %s", floor.Lint)
	}
	if floor.ValuesSchema && !repo.ValuesSchema {
		add(chartctl.RuleValuesSchema, "the organization requires values_schema")
	}
	var lacking []string
	for _, f := range floor.RequiredFields {
		if !slices.Contains(repo.RequiredFields, f) {
			lacking = append(lacking, f)
		}
	}
	if len(lacking) > 0 {
		add(chartctl.RuleRequiredFields, "the organization also requires %s", strings.Join(lacking, ", "))
	}
	if floor.NamePattern != "" && repo.NamePattern != floor.NamePattern {
		add(chartctl.RuleNamePattern, "the organization requires names to match %q; keep that pattern", floor.NamePattern)
	}
	if !floor.AllowPrerelease && repo.AllowPrerelease {
		add(chartctl.RuleAllowPrerelease, "the organization refuses pre-releases")
	}
	if floor.MonotonicVersions && !repo.MonotonicVersions {
		add(chartctl.RuleMonotonicVersions, "the organization requires monotonic_versions")
	}
	if floor.ImagesPinned && !repo.ImagesPinned {
		add(chartctl.RuleImagesPinned, "the organization requires images_pinned")
	}
	if floor.MaxSize > 0 && (repo.MaxSize == 0 || repo.MaxSize > floor.MaxSize) {
		add(chartctl.RuleMaxSize, "the organization limits archives to %d bytes", floor.MaxSize)
	}
	lacking = nil
	for _, g := range floor.DenyFiles {
		if !slices.Contains(repo.DenyFiles, g) {
			lacking = append(lacking, g)
		}
	}
	if len(lacking) > 0 {
		add(chartctl.RuleDenyFiles, "the organization also denies %s", strings.Join(lacking, ", "))
	}
	return out
}

// Effective is the policy a repository's charts meet: its own, tightened
// wherever its organization's floor is stricter (the floor may have
// tightened after the repository's policy was set).
func Effective(floor, repo chartctl.Policy) chartctl.Policy {
	e := repo
	fs := sigOrNone(floor.RequireSignature)
	if fs != chartctl.SignatureNone && (sigOrNone(e.RequireSignature) == chartctl.SignatureNone || fs != chartctl.SignatureAny) {
		e.RequireSignature = fs
	}
	if fs != chartctl.SignatureNone && (e.HoldWindow > floor.HoldWindow) {
		e.HoldWindow = floor.HoldWindow
	}
	if lintRank[floor.Lint] > lintRank[e.Lint] {
		e.Lint = floor.Lint
	}
	e.ValuesSchema = e.ValuesSchema || floor.ValuesSchema
	e.RequiredFields = union(e.RequiredFields, floor.RequiredFields)
	if floor.NamePattern != "" {
		// Looser keeps a repository from setting another pattern; one set
		// before the floor's yields to it.
		e.NamePattern = floor.NamePattern
	}
	e.AllowPrerelease = e.AllowPrerelease && floor.AllowPrerelease
	e.MonotonicVersions = e.MonotonicVersions || floor.MonotonicVersions
	e.ImagesPinned = e.ImagesPinned || floor.ImagesPinned
	if floor.MaxSize > 0 && (e.MaxSize == 0 || e.MaxSize > floor.MaxSize) {
		e.MaxSize = floor.MaxSize
	}
	e.DenyFiles = union(e.DenyFiles, floor.DenyFiles)
	return e
}

func sigOrNone(s string) string {
	if s == "" {
		return chartctl.SignatureNone
	}
	return s
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
