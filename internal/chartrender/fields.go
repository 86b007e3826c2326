package chartrender

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Annotations read by annotations.
const (
	annotationChanges                 = "artifacthub.io/changes"
	annotationLinks                   = "artifacthub.io/links"
	annotationLicense                 = "artifacthub.io/license"
	annotationPrerelease              = "artifacthub.io/prerelease"
	annotationImages                  = "artifacthub.io/images"
	annotationCRDs                    = "artifacthub.io/crds"
	annotationCRDsExamples            = "artifacthub.io/crdsExamples"
	annotationOperator                = "artifacthub.io/operator"
	annotationOperatorCapabilities    = "artifacthub.io/operatorCapabilities"
	annotationSignKey                 = "artifacthub.io/signKey"
	annotationContainsSecurityUpdates = "artifacthub.io/containsSecurityUpdates"
	annotationCategory                = "artifacthub.io/category"
	annotationScreenshots             = "artifacthub.io/screenshots"
	annotationRecommendations         = "artifacthub.io/recommendations"
)

// Caps on the list annotations, so a page stays small whatever the chart.
const (
	maxAnnotationItems = 50
	// maxCRDExampleYAML bounds one example object shown on the page.
	maxCRDExampleYAML = 16 << 10
)

// operatorCapabilities are the Operator Framework's capability levels,
// the values Artifact Hub accepts, by lower-case spelling.
var operatorCapabilities = map[string]string{
	"basic install": "Basic Install", "seamless upgrades": "Seamless Upgrades", "full lifecycle": "Full Lifecycle",
	"deep insights": "Deep Insights", "auto pilot": "Auto Pilot",
}

// categories are Artifact Hub's package categories.
var categories = map[string]bool{
	"ai-machine-learning": true, "database": true, "integration-delivery": true, "monitoring-logging": true,
	"networking": true, "security": true, "storage": true, "streaming-messaging": true,
}

// changeKinds are the kinds Artifact Hub defines for a change.
var changeKinds = map[string]bool{"added": true, "changed": true, "deprecated": true, "removed": true, "fixed": true, "security": true}

// annotations fills the page fields that come from Artifact Hub's
// annotations. Malformed annotations are ignored.
func annotations(p *Page, a map[string]string) {
	p.License = clip(strings.TrimSpace(a[annotationLicense]), 100)
	p.Prerelease = strings.EqualFold(strings.TrimSpace(a[annotationPrerelease]), "true")
	p.Changes = parseChanges(a[annotationChanges])
	p.Links = parseLinks(a[annotationLinks])
	p.Images = parseImages(a[annotationImages])
	p.CRDs = parseCRDs(a[annotationCRDs])
	p.CRDsExamples = parseCRDExamples(a[annotationCRDsExamples])
	p.Operator = isTrue(a[annotationOperator])
	p.OperatorCapabilities = operatorCapabilities[strings.ToLower(strings.TrimSpace(a[annotationOperatorCapabilities]))]
	p.SignKey = parseSignKey(a[annotationSignKey])
	p.ContainsSecurityUpdates = isTrue(a[annotationContainsSecurityUpdates])
	if c := strings.ToLower(strings.TrimSpace(a[annotationCategory])); categories[c] {
		p.Category = c
	}
	p.Screenshots = parseScreenshots(a[annotationScreenshots])
	p.Recommendations = parseRecommendations(a[annotationRecommendations])
}

// isTrue reads a boolean annotation as Artifact Hub does: "true" in any
// case is true, anything else false.
func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

// yamlList reads an annotation holding a YAML list of objects; nil when it
// is absent or not such a list.
func yamlList(s string) []map[string]any {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var items []any
	if err := yaml.Unmarshal([]byte(s), &items); err != nil {
		return nil
	}
	var out []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
		if len(out) == maxAnnotationItems {
			break
		}
	}
	return out
}

// str returns m[k] as trimmed text clipped to n bytes, "" when it is not
// text.
func str(m map[string]any, k string, n int) string {
	v, _ := m[k].(string)
	return clip(strings.TrimSpace(v), n)
}

// parseImages reads artifacthub.io/images: a list of {name, image,
// whitelisted, platforms}.
func parseImages(s string) []Image {
	var out []Image
	for _, m := range yamlList(s) {
		img := Image{Name: str(m, "name", 200), Image: str(m, "image", 500)}
		if img.Image == "" {
			continue
		}
		img.Whitelisted, _ = m["whitelisted"].(bool)
		if ps, ok := m["platforms"].([]any); ok {
			for _, p := range ps {
				if p, ok := p.(string); ok && strings.TrimSpace(p) != "" && len(img.Platforms) < 20 {
					img.Platforms = append(img.Platforms, clip(strings.TrimSpace(p), 100))
				}
			}
		}
		out = append(out, img)
	}
	return out
}

// parseCRDs reads artifacthub.io/crds: a list of {kind, version, name,
// displayName, description}.
func parseCRDs(s string) []CRD {
	var out []CRD
	for _, m := range yamlList(s) {
		c := CRD{Kind: str(m, "kind", 200), Version: str(m, "version", 100), Name: str(m, "name", 300),
			DisplayName: str(m, "displayName", 200), Description: str(m, "description", 1000)}
		if c.Kind == "" {
			continue
		}
		out = append(out, c)
	}
	return out
}

// parseCRDExamples reads artifacthub.io/crdsExamples: a list of
// Kubernetes objects, each kept as YAML text.
func parseCRDExamples(s string) []CRDExample {
	var out []CRDExample
	for _, m := range yamlList(s) {
		b, err := yaml.Marshal(m)
		if err != nil || len(b) > maxCRDExampleYAML {
			continue
		}
		out = append(out, CRDExample{APIVersion: str(m, "apiVersion", 200), Kind: str(m, "kind", 200), YAML: strings.ToValidUTF8(string(b), "")})
	}
	return out
}

// parseSignKey reads artifacthub.io/signKey: {fingerprint, url}. A
// fingerprint must be hexadecimal (spaces allowed, as gpg prints it).
func parseSignKey(s string) *SignKey {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil
	}
	fp := strings.ToUpper(strings.ReplaceAll(str(m, "fingerprint", 200), " ", ""))
	if len(fp) < 16 || len(fp) > 64 || strings.Trim(fp, "0123456789ABCDEF") != "" {
		return nil
	}
	return &SignKey{Fingerprint: fp, URL: WebURL(str(m, "url", 2048))}
}

// parseScreenshots reads artifacthub.io/screenshots: a list of {title,
// url}, web addresses only.
func parseScreenshots(s string) []Link {
	var out []Link
	for _, m := range yamlList(s) {
		u := WebURL(str(m, "url", 2048))
		if u == "" {
			continue
		}
		t := str(m, "title", 200)
		if t == "" {
			t = u
		}
		out = append(out, Link{Name: t, URL: u})
	}
	return out
}

// parseRecommendations reads artifacthub.io/recommendations: a list of
// {url}, web addresses only.
func parseRecommendations(s string) []string {
	var out []string
	for _, m := range yamlList(s) {
		if u := WebURL(str(m, "url", 2048)); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// parseChanges reads artifacthub.io/changes: a YAML list of strings, or of
// {kind, description, links: [{name, url}]}.
func parseChanges(s string) []Change {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var items []any
	if err := yaml.Unmarshal([]byte(s), &items); err != nil {
		return nil
	}
	var out []Change
	for _, it := range items {
		switch v := it.(type) {
		case string:
			if d := strings.TrimSpace(v); d != "" {
				out = append(out, Change{Description: clip(d, 2000)})
			}
		case map[string]any:
			d, _ := v["description"].(string)
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			kind, _ := v["kind"].(string)
			kind = strings.ToLower(strings.TrimSpace(kind))
			if !changeKinds[kind] {
				kind = ""
			}
			c := Change{Kind: kind, Description: clip(d, 2000)}
			if links, ok := v["links"].([]any); ok {
				c.Links = linkList(links)
			}
			out = append(out, c)
		}
		if len(out) == 200 {
			break
		}
	}
	return out
}

// parseLinks reads artifacthub.io/links: a YAML list of {name, url}.
func parseLinks(s string) []Link {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var items []any
	if err := yaml.Unmarshal([]byte(s), &items); err != nil {
		return nil
	}
	return linkList(items)
}

func linkList(items []any) []Link {
	var out []Link
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		u, _ := m["url"].(string)
		if u = WebURL(u); u == "" {
			continue
		}
		name = strings.TrimSpace(name)
		if name == "" {
			name = u
		}
		out = append(out, Link{Name: clip(name, 200), URL: u})
		if len(out) == 50 {
			break
		}
	}
	return out
}

// clip shortens s to at most n bytes of valid UTF-8, marking the cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// maxSchemaDepth bounds how deep the values table follows nested objects.
const maxSchemaDepth = 10

// SchemaTable reads a values.schema.json and lists the values its
// properties describe, depth first, by name at each level. It returns the
// rows, whether the table stopped at MaxSchemaRows, and a message for a
// person when the document cannot be read ("" otherwise).
func SchemaTable(src []byte) (rows []SchemaValue, truncated bool, problem string) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, false, "values.schema.json is not valid JSON, so its values cannot be listed."
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, false, "values.schema.json is not a JSON Schema object, so its values cannot be listed."
	}
	w := &schemaWalker{}
	w.walk(obj, "", 0)
	if len(w.rows) == 0 {
		return nil, false, ""
	}
	return w.rows, w.truncated, ""
}

type schemaWalker struct {
	rows      []SchemaValue
	truncated bool
}

func (w *schemaWalker) walk(node map[string]any, prefix string, depth int) {
	props, _ := node["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := node["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if len(w.rows) >= MaxSchemaRows {
			w.truncated = true
			return
		}
		child, _ := props[name].(map[string]any)
		path := prefix + name
		row := SchemaValue{Path: clip(path, 500), Required: required[name], Depth: depth}
		if child != nil {
			row.Type = schemaType(child)
			row.Description = schemaDescription(child)
			if d, ok := child["default"]; ok {
				if b, err := json.Marshal(d); err == nil {
					row.Default = clip(string(b), 300)
				}
			}
		}
		w.rows = append(w.rows, row)
		if child == nil || depth+1 >= maxSchemaDepth {
			continue
		}
		if _, ok := child["properties"].(map[string]any); ok {
			w.walk(child, path+".", depth+1)
		}
		if items, ok := child["items"].(map[string]any); ok {
			if _, ok := items["properties"].(map[string]any); ok {
				w.walk(items, path+"[].", depth+1)
			}
		}
	}
}

func schemaType(n map[string]any) string {
	switch t := n["type"].(type) {
	case string:
		return clip(t, 100)
	case []any:
		var parts []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				parts = append(parts, s)
			}
		}
		return clip(strings.Join(parts, " | "), 100)
	}
	if ref, ok := n["$ref"].(string); ok {
		return clip("$ref "+ref, 100)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := n[k]; ok {
			return k
		}
	}
	return ""
}

func schemaDescription(n map[string]any) string {
	d, _ := n["description"].(string)
	if strings.TrimSpace(d) == "" {
		d, _ = n["title"].(string)
	}
	return clip(strings.TrimSpace(d), 1000)
}
