// Package chartrender turns a chart archive into the data of its web page:
// the README as sanitized HTML, values.yaml highlighted, a table of values
// from values.schema.json, the templates, dependencies, maintainers, links
// and the changes of the artifacthub.io/changes annotation.
//
// Rendering is done once, when a version is stored; the result, a Page, is
// plain data that encodes to JSON and is kept beside the archive, so a page
// view never parses Markdown or YAML.
//
// Everything in a chart is hostile input. Markdown is rendered with
// goldmark (GitHub-flavoured: tables, task lists, strikethrough, autolinks;
// raw HTML passes through to the sanitizer), then sanitized with
// bluemonday's user-generated-content policy, tightened: no scripts, event
// handlers, styles, forms, frames or embedded objects; links only to
// http, https and mailto URLs or within the page; class attributes only
// the highlighter's ("hl-" prefixed) on code. A last pass replaces every
// image with a link to it (or its alternative text when its address is
// not a web address), because loading third-party images would reveal
// visitors' addresses and is forbidden by the pages' Content-Security-
// Policy; it also prefixes every element id with "readme-" (and rewrites
// in-page links to match) so the README cannot shadow the page's own ids.
// Code is highlighted with chroma using CSS classes, never inline styles.
package chartrender

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/gzpool"
)

// FormatVersion is the version of the Page format and of the rendering
// rules. A stored page of an older version is rendered again.
//
// 2: README HTML is a balanced fragment, and its relative links and
// images refer to the chart's files (FileRef) or are left as text.
// 3: every Artifact Hub annotation is read (images, CRDs and their
// examples, operator and its capabilities, sign key, security updates,
// category, screenshots, recommendations).
const FormatVersion = 3

// Caps on what a page holds, so a page stays small whatever the chart.
const (
	// MaxReadmeSource is how much of a README is rendered; the rest is
	// left out and Page.ReadmeTruncated is set.
	MaxReadmeSource = 512 << 10
	// MaxValuesSource is how much of values.yaml is shown.
	MaxValuesSource = 512 << 10
	// MaxSchemaRows caps the rows of the values table.
	MaxSchemaRows = 2000
	// MaxTemplates caps the templates listed.
	MaxTemplates = 1000
	// maxSchemaSource is the largest values.schema.json parsed.
	maxSchemaSource = 2 << 20
	// maxIconDataURL is the largest data: icon kept.
	maxIconDataURL = 16 << 10
)

// Page is everything a chart version's page shows that comes from its
// archive. HTML fields are sanitized and safe to insert into a page as is;
// every other field is plain text to be escaped by the page template.
type Page struct {
	// Format is FormatVersion at the time of rendering.
	Format int `json:"format"`

	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"app_version,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "application" or "library" ("" means application).
	Type        string `json:"type,omitempty"`
	APIVersion  string `json:"api_version,omitempty"`
	KubeVersion string `json:"kube_version,omitempty"`
	Deprecated  bool   `json:"deprecated,omitempty"`
	// Prerelease is the artifacthub.io/prerelease annotation.
	Prerelease bool     `json:"prerelease,omitempty"`
	Keywords   []string `json:"keywords,omitempty"`
	// Home and Sources are web addresses (http or https only).
	Home    string   `json:"home,omitempty"`
	Sources []string `json:"sources,omitempty"`
	// Links are the artifacthub.io/links annotation's, web addresses only.
	Links []Link `json:"links,omitempty"`
	// License is the artifacthub.io/license annotation (an SPDX id).
	License     string       `json:"license,omitempty"`
	Maintainers []Maintainer `json:"maintainers,omitempty"`
	// Icon is the chart's icon when it is a small data: image (PNG, JPEG,
	// GIF, WebP or SVG), which the page can show without fetching anything;
	// "" otherwise (icons on other hosts are not loaded).
	Icon string `json:"icon,omitempty"`
	// IconURL is the icon's address when it is on the web, shown only as a
	// link.
	IconURL      string       `json:"icon_url,omitempty"`
	Dependencies []Dependency `json:"dependencies,omitempty"`
	Changes      []Change     `json:"changes,omitempty"`

	// The fields below come from Artifact Hub's other annotations
	// (https://artifacthub.io/docs/topics/annotations/helm/); pages
	// stored before format 3 decode with their zero values.

	// Images is artifacthub.io/images: the images the chart deploys.
	Images []Image `json:"images,omitempty"`
	// CRDs is artifacthub.io/crds: the custom resources the chart owns.
	CRDs []CRD `json:"crds,omitempty"`
	// CRDsExamples is artifacthub.io/crdsExamples: example objects of
	// those resources.
	CRDsExamples []CRDExample `json:"crds_examples,omitempty"`
	// Operator is artifacthub.io/operator: the chart installs an
	// operator.
	Operator bool `json:"operator,omitempty"`
	// OperatorCapabilities is artifacthub.io/operatorCapabilities, one of
	// the Operator Framework's capability levels ("Basic Install" …
	// "Auto Pilot"); "" when absent or not one of them.
	OperatorCapabilities string `json:"operator_capabilities,omitempty"`
	// SignKey is artifacthub.io/signKey: the key that signs the chart's
	// provenance files.
	SignKey *SignKey `json:"sign_key,omitempty"`
	// ContainsSecurityUpdates is artifacthub.io/containsSecurityUpdates.
	ContainsSecurityUpdates bool `json:"contains_security_updates,omitempty"`
	// Category is artifacthub.io/category, one of Artifact Hub's
	// categories ("database", "security" …); "" otherwise.
	Category string `json:"category,omitempty"`
	// Screenshots is artifacthub.io/screenshots: titled web addresses,
	// shown as links (never loaded by the page).
	Screenshots []Link `json:"screenshots,omitempty"`
	// Recommendations is artifacthub.io/recommendations: web addresses
	// of packages recommended with this one.
	Recommendations []string `json:"recommendations,omitempty"`

	// ReadmeHTML is the rendered, sanitized README; "" when there is none.
	ReadmeHTML string `json:"readme_html,omitempty"`
	// ReadmeFile is the README's path in the chart.
	ReadmeFile string `json:"readme_file,omitempty"`
	// ReadmeTruncated is set when the README was longer than
	// MaxReadmeSource and only its beginning was rendered.
	ReadmeTruncated bool `json:"readme_truncated,omitempty"`

	// ValuesHTML is values.yaml highlighted; "" when there is none.
	ValuesHTML      string `json:"values_html,omitempty"`
	ValuesSize      int64  `json:"values_size,omitempty"`
	ValuesTruncated bool   `json:"values_truncated,omitempty"`
	// Schema lists the values described by values.schema.json.
	Schema []SchemaValue `json:"schema,omitempty"`
	// HasSchema reports whether values.schema.json exists.
	HasSchema bool `json:"has_schema,omitempty"`
	// SchemaError says why values.schema.json could not be read as a
	// table, "" when it could.
	SchemaError string `json:"schema_error,omitempty"`
	// SchemaTruncated is set when the table stopped at MaxSchemaRows.
	SchemaTruncated bool `json:"schema_truncated,omitempty"`

	// Templates lists templates/ and crds/ of the chart itself (not of its
	// bundled subcharts), by path.
	Templates          []File `json:"templates,omitempty"`
	TemplatesTruncated bool   `json:"templates_truncated,omitempty"`
	// Subcharts are the charts bundled under charts/, by file name.
	Subcharts []string `json:"subcharts,omitempty"`
	// Files and Size count the archive's regular files and their
	// decompressed size.
	Files int   `json:"files"`
	Size  int64 `json:"size"`
}

// Link is a named web address.
type Link struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Maintainer is one of Chart.yaml's maintainers. URL is a web address or
// "", Email a plausible address or "".
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Dependency is one of Chart.yaml's dependencies.
type Dependency struct {
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Repository string `json:"repository,omitempty"`
	Alias      string `json:"alias,omitempty"`
	Condition  string `json:"condition,omitempty"`
}

// Change is one entry of the artifacthub.io/changes annotation.
type Change struct {
	// Kind is added, changed, deprecated, removed, fixed or security; ""
	// when the entry did not say.
	Kind        string `json:"kind,omitempty"`
	Description string `json:"description"`
	Links       []Link `json:"links,omitempty"`
}

// Image is one entry of artifacthub.io/images.
type Image struct {
	// Name is the entry's name ("" when it gave none).
	Name string `json:"name,omitempty"`
	// Image is the image reference as written.
	Image string `json:"image"`
	// Whitelisted is set when the publisher marked the image as one
	// whose vulnerabilities are not the chart's concern.
	Whitelisted bool `json:"whitelisted,omitempty"`
	// Platforms are the platforms the image is built for (linux/amd64).
	Platforms []string `json:"platforms,omitempty"`
}

// CRD is one entry of artifacthub.io/crds.
type CRD struct {
	Kind        string `json:"kind"`
	Version     string `json:"version,omitempty"`
	Name        string `json:"name,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Description string `json:"description,omitempty"`
}

// CRDExample is one object of artifacthub.io/crdsExamples.
type CRDExample struct {
	APIVersion string `json:"api_version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// YAML is the object as YAML, plain text.
	YAML string `json:"yaml"`
}

// SignKey is artifacthub.io/signKey.
type SignKey struct {
	// Fingerprint is the key's fingerprint, upper-case hexadecimal.
	Fingerprint string `json:"fingerprint"`
	// URL is where the public key is published (a web address, or "").
	URL string `json:"url,omitempty"`
}

// SchemaValue is one row of the values table.
type SchemaValue struct {
	// Path is the value's dotted path ("image.tag"; "[]" marks array
	// items).
	Path string `json:"path"`
	// Type is the JSON Schema type, types joined by " | ", or "".
	Type string `json:"type,omitempty"`
	// Default is the default as compact JSON, "" when none.
	Default     string `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// Depth is the nesting level, 0 for top-level values.
	Depth int `json:"depth"`
}

// File is a file of the chart with its decompressed size.
type File struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// Render reads a chart archive from r (validated as chart.Walk validates
// it, within lim) and renders its page. It returns the archive's
// validation error (a *chartctl.Error, EINVALID) for an invalid archive.
// Render never fails because of a README, values or schema it cannot
// render: those parts are shown as plain text or left out.
func Render(r io.Reader, lim chart.Limits) (*Page, error) {
	var (
		readme, readmeName string
		readmeRank         = 99
		readmeSize         int64
		values             []byte
		valuesSize         int64
		schema             []byte
		hasSchema          bool
		templates          []File
		subcharts          []string
		// files are the archive's paths, which the README's relative
		// links and images are resolved against.
		files = map[string]bool{}
	)
	c, err := chart.Walk(r, lim, func(p string, size int64, content io.Reader) error {
		files[p] = true
		dir, base := path.Split(p)
		switch {
		case dir == "" && readmeRankOf(base) < readmeRank:
			b, err := io.ReadAll(io.LimitReader(content, MaxReadmeSource))
			if err != nil {
				return err
			}
			readme, readmeName, readmeRank, readmeSize = string(b), p, readmeRankOf(base), size
		case p == "values.yaml":
			b, err := io.ReadAll(io.LimitReader(content, MaxValuesSource))
			if err != nil {
				return err
			}
			values, valuesSize = b, size
		case p == "values.schema.json":
			hasSchema = true
			if size <= maxSchemaSource {
				b, err := io.ReadAll(content)
				if err != nil {
					return err
				}
				schema = b
			}
		case strings.HasPrefix(p, "templates/") || strings.HasPrefix(p, "crds/"):
			templates = append(templates, File{Path: p, Size: size})
		case dir == "charts/" && (strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz")):
			subcharts = append(subcharts, base)
		case strings.HasPrefix(p, "charts/") && strings.Count(p, "/") >= 2 && strings.HasSuffix(p, "/Chart.yaml") && strings.Count(p, "/") == 2:
			subcharts = append(subcharts, strings.Split(p, "/")[1])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	md := c.Metadata
	pg := &Page{
		Format:      FormatVersion,
		Name:        md.Name,
		Version:     md.Version,
		AppVersion:  md.AppVersion,
		Description: md.Description,
		Type:        md.Type,
		APIVersion:  md.APIVersion,
		KubeVersion: md.KubeVersion,
		Deprecated:  md.Deprecated,
		Keywords:    nonEmpty(md.Keywords),
		Home:        WebURL(md.Home),
		Files:       c.Files,
		Size:        c.Size,
	}
	for _, s := range md.Sources {
		if u := WebURL(s); u != "" {
			pg.Sources = append(pg.Sources, u)
		}
	}
	for _, m := range md.Maintainers {
		if m == nil || (m.Name == "" && m.Email == "" && m.URL == "") {
			continue
		}
		pg.Maintainers = append(pg.Maintainers, Maintainer{Name: m.Name, Email: plausibleEmail(m.Email), URL: WebURL(m.URL)})
	}
	for _, d := range md.Dependencies {
		if d == nil {
			continue
		}
		pg.Dependencies = append(pg.Dependencies, Dependency{Name: d.Name, Version: d.Version, Repository: d.Repository, Alias: d.Alias, Condition: d.Condition})
	}
	pg.Icon, pg.IconURL = iconURLs(md.Icon)
	annotations(pg, md.Annotations)

	if readmeName != "" {
		pg.ReadmeFile = readmeName
		pg.ReadmeTruncated = readmeSize > MaxReadmeSource
		if pg.ReadmeTruncated {
			readme = cutAtLine(readme)
		}
		if readmeRank <= 1 {
			pg.ReadmeHTML = MarkdownIn([]byte(readme), files)
		} else {
			pg.ReadmeHTML = PlainText(readme)
		}
	}
	if values != nil {
		pg.ValuesSize = valuesSize
		pg.ValuesTruncated = valuesSize > MaxValuesSource
		v := string(values)
		if pg.ValuesTruncated {
			v = cutAtLine(v)
		}
		pg.ValuesHTML = Highlight(v, "yaml")
	}
	pg.HasSchema = hasSchema
	if hasSchema {
		if schema == nil {
			pg.SchemaError = fmt.Sprintf("values.schema.json is larger than %d MiB; it is not shown as a table.", maxSchemaSource>>20)
		} else {
			pg.Schema, pg.SchemaTruncated, pg.SchemaError = SchemaTable(schema)
		}
	}
	sort.Slice(templates, func(i, j int) bool { return templates[i].Path < templates[j].Path })
	if len(templates) > MaxTemplates {
		templates, pg.TemplatesTruncated = templates[:MaxTemplates], true
	}
	pg.Templates = templates
	sort.Strings(subcharts)
	pg.Subcharts = subcharts
	return pg, nil
}

// readmeRankOf orders README candidates at the chart's top level: 0 and
// 1 are Markdown, 2 plain text; 99 is not a README.
func readmeRankOf(base string) int {
	switch strings.ToLower(base) {
	case "readme.md":
		return 0
	case "readme.markdown":
		return 1
	case "readme", "readme.txt":
		return 2
	}
	return 99
}

// cutAtLine drops a partial last line and invalid UTF-8 from a prefix.
func cutAtLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i+1]
	}
	return strings.ToValidUTF8(s, "")
}

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// plausibleEmail returns s when it looks like one address (one @, no
// spaces or angle brackets), so a mailto: link made of it is harmless.
func plausibleEmail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 254 || strings.Count(s, "@") != 1 || strings.ContainsAny(s, " <>\"'()[]\\,;:") || strings.HasPrefix(s, "@") || strings.HasSuffix(s, "@") {
		return ""
	}
	return s
}

// IconDataURL returns icon when it is a data: image the pages may show
// (small, base64, PNG, JPEG, GIF, WebP or SVG), "" otherwise.
func IconDataURL(icon string) string {
	d, _ := iconURLs(icon)
	return d
}

// iconURLs returns the icon as a data: URL the page may show, or as a web
// address it may link to.
func iconURLs(s string) (dataURL, webURL string) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "data:") {
		if len(s) > maxIconDataURL {
			return "", ""
		}
		for _, t := range []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"} {
			if strings.HasPrefix(s, "data:"+t+";base64,") && isBase64(s[len("data:"+t+";base64,"):]) {
				return s, ""
			}
		}
		return "", ""
	}
	return "", WebURL(s)
}

func isBase64(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// maxEncodedPage bounds what Decode inflates: a page holds a chart's
// README, values and file list, each bounded by the chart limits.
const maxEncodedPage = 256 << 20

// Encode returns p as gzip-compressed JSON. A page is mostly highlighted
// HTML, which compresses about twelvefold; stored uncompressed, a ~3 KiB
// chart's page took ~50 KiB of the metadata store, more than every other
// record of its version together (docs/performance.md, "100,000 versions").
func (p *Page) Encode() ([]byte, error) {
	b, err := gzpool.Bytes(func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(p)
	})
	if err != nil {
		return nil, fmt.Errorf("encode chart page: %w", err)
	}
	return b, nil
}

// Decode reads a page Encode wrote, or the plain JSON earlier releases
// wrote.
func Decode(b []byte) (*Page, error) {
	var r io.Reader = bytes.NewReader(b)
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("decode chart page: %w", err)
		}
		r = io.LimitReader(zr, maxEncodedPage)
	}
	p := new(Page)
	if err := json.NewDecoder(r).Decode(p); err != nil {
		return nil, fmt.Errorf("decode chart page: %w", err)
	}
	return p, nil
}
