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
	annotationChanges    = "artifacthub.io/changes"
	annotationLinks      = "artifacthub.io/links"
	annotationLicense    = "artifacthub.io/license"
	annotationPrerelease = "artifacthub.io/prerelease"
)

// changeKinds are the kinds Artifact Hub defines for a change.
var changeKinds = map[string]bool{"added": true, "changed": true, "deprecated": true, "removed": true, "fixed": true, "security": true}

// annotations fills the page fields that come from Artifact Hub's
// annotations. Malformed annotations are ignored.
func annotations(p *Page, a map[string]string) {
	p.License = clip(strings.TrimSpace(a[annotationLicense]), 100)
	p.Prerelease = strings.EqualFold(strings.TrimSpace(a[annotationPrerelease]), "true")
	p.Changes = parseChanges(a[annotationChanges])
	p.Links = parseLinks(a[annotationLinks])
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
