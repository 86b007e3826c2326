package chart

// The types and validation in this file mirror helm.sh/helm/v4/pkg/chart/v2
// (metadata.go, dependency.go; Apache License 2.0, Copyright The Helm
// Authors) field for field and rule for rule. They are copied rather than
// imported because that package depends on pkg/chart/common, which imports
// k8s.io/client-go/kubernetes/scheme and so would link hundreds of
// Kubernetes packages into the binary. metadata_test.go keeps the copy
// honest: it checks, by reflection, that every JSON field name and type
// matches Helm's, and compares Validate and the JSON encoding against
// Helm's own on many inputs (including a fuzz target).

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
)

// The chart API versions Helm reads from Chart.yaml.
const (
	APIVersionV1 = "v1"
	APIVersionV2 = "v2"
)

// Maintainer describes a chart maintainer, as Helm's chart.Maintainer.
type Maintainer struct {
	// Name is a user name or organization name.
	Name string `json:"name,omitempty"`
	// Email is an optional email address to contact the named maintainer.
	Email string `json:"email,omitempty"`
	// URL is an optional URL to an address for the named maintainer.
	URL string `json:"url,omitempty"`
}

// Validate checks valid data and sanitizes string characters, as Helm does.
func (m *Maintainer) Validate() error {
	if m == nil {
		return validationError("maintainers must not contain empty or null nodes")
	}
	m.Name = sanitizeString(m.Name)
	m.Email = sanitizeString(m.Email)
	m.URL = sanitizeString(m.URL)
	return nil
}

// Dependency describes a chart upon which another chart depends, as Helm's
// chart.Dependency.
type Dependency struct {
	// Name is the name of the dependency.
	Name string `json:"name"`
	// Version is the version (range) of this chart.
	Version string `json:"version,omitempty"`
	// Repository is the URL of the dependency's repository.
	Repository string `json:"repository"`
	// Condition is a YAML path that resolves to a boolean enabling the chart.
	Condition string `json:"condition,omitempty"`
	// Tags group charts for enabling/disabling together.
	Tags []string `json:"tags,omitempty"`
	// Enabled determines whether the chart should be loaded.
	Enabled bool `json:"enabled,omitempty"`
	// ImportValues maps source values to parent keys; each item is a string
	// or a child/parent pair.
	ImportValues []any `json:"import-values,omitempty"`
	// Alias is an alternative name for the dependency.
	Alias string `json:"alias,omitempty"`
}

var aliasNameFormat = regexp.MustCompile("^[a-zA-Z0-9_-]+$")

// Validate checks for common problems with a dependency, as Helm does.
func (d *Dependency) Validate() error {
	if d == nil {
		return validationError("dependencies must not contain empty or null nodes")
	}
	d.Name = sanitizeString(d.Name)
	d.Version = sanitizeString(d.Version)
	d.Repository = sanitizeString(d.Repository)
	d.Condition = sanitizeString(d.Condition)
	for i := range d.Tags {
		d.Tags[i] = sanitizeString(d.Tags[i])
	}
	if d.Alias != "" && !aliasNameFormat.MatchString(d.Alias) {
		return validationError(fmt.Sprintf("dependency %q has disallowed characters in the alias", d.Name))
	}
	return nil
}

// Metadata models a Chart.yaml file exactly as Helm's chart.Metadata does,
// with the same JSON field names, so that marshalling it with encoding/json
// gives what Helm records in a repository index.
type Metadata struct {
	// Name of the chart. Required.
	Name string `json:"name,omitempty"`
	// Home is the URL of a relevant project page.
	Home string `json:"home,omitempty"`
	// Sources are URLs of the chart's source code.
	Sources []string `json:"sources,omitempty"`
	// Version of the chart, SemVer. Required.
	Version string `json:"version,omitempty"`
	// Description is a one-sentence description of the chart.
	Description string `json:"description,omitempty"`
	// Keywords describe the chart for searches.
	Keywords []string `json:"keywords,omitempty"`
	// Maintainers of the chart.
	Maintainers []*Maintainer `json:"maintainers,omitempty"`
	// Icon is the URL of an icon.
	Icon string `json:"icon,omitempty"`
	// APIVersion of the chart: v1 or v2. Required.
	APIVersion string `json:"apiVersion,omitempty"`
	// Condition to check to enable the chart.
	Condition string `json:"condition,omitempty"`
	// Tags to check to enable the chart.
	Tags string `json:"tags,omitempty"`
	// AppVersion is the version of the application the chart deploys.
	AppVersion string `json:"appVersion,omitempty"`
	// Deprecated marks the chart as deprecated.
	Deprecated bool `json:"deprecated,omitempty"`
	// Annotations are mappings uninterpreted by Helm.
	Annotations map[string]string `json:"annotations,omitempty"`
	// KubeVersion is a SemVer constraint on the Kubernetes version.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// Dependencies of the chart.
	Dependencies []*Dependency `json:"dependencies,omitempty"`
	// Type is "application" or "library".
	Type string `json:"type,omitempty"`
}

// Validate checks the metadata for the problems Helm's
// chart.Metadata.Validate checks, and sanitizes string characters the same
// way (so the result is what Helm would record).
func (md *Metadata) Validate() error {
	if md == nil {
		return validationError("chart.metadata is required")
	}

	md.Name = sanitizeString(md.Name)
	md.Description = sanitizeString(md.Description)
	md.Home = sanitizeString(md.Home)
	md.Icon = sanitizeString(md.Icon)
	md.Condition = sanitizeString(md.Condition)
	md.Tags = sanitizeString(md.Tags)
	md.AppVersion = sanitizeString(md.AppVersion)
	md.KubeVersion = sanitizeString(md.KubeVersion)
	for i := range md.Sources {
		md.Sources[i] = sanitizeString(md.Sources[i])
	}
	for i := range md.Keywords {
		md.Keywords[i] = sanitizeString(md.Keywords[i])
	}

	if md.APIVersion == "" {
		return validationError("chart.metadata.apiVersion is required")
	}
	if md.Name == "" {
		return validationError("chart.metadata.name is required")
	}
	if md.Name == "." || md.Name == ".." {
		return validationError(fmt.Sprintf("chart.metadata.name %q is not allowed", md.Name))
	}
	if md.Name != filepath.Base(md.Name) {
		return validationError(fmt.Sprintf("chart.metadata.name %q is invalid", md.Name))
	}
	if md.Version == "" {
		return validationError("chart.metadata.version is required")
	}
	if _, err := semver.NewVersion(md.Version); err != nil {
		return validationError(fmt.Sprintf("chart.metadata.version %q is invalid", md.Version))
	}
	switch md.Type {
	case "", "application", "library":
	default:
		return validationError("chart.metadata.type must be application or library")
	}
	for _, m := range md.Maintainers {
		if err := m.Validate(); err != nil {
			return err
		}
	}
	// Aliases are validated here so that an alias cannot carry illegal
	// characters; names and aliases must be unique.
	dependencies := map[string]*Dependency{}
	for _, dependency := range md.Dependencies {
		if err := dependency.Validate(); err != nil {
			return err
		}
		key := dependency.Name
		if dependency.Alias != "" {
			key = dependency.Alias
		}
		if dependencies[key] != nil {
			return validationError(fmt.Sprintf("more than one dependency with name or alias %q", key))
		}
		dependencies[key] = dependency
	}
	return nil
}

// validationError is a metadata problem; its text is Helm's (without
// Helm's "validation: " prefix), safe to show to the uploader.
type validationError string

func (v validationError) Error() string { return string(v) }

// sanitizeString normalizes spaces and removes non-printable characters.
func sanitizeString(str string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, str)
}
