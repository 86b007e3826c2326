// Package apiref renders the API reference page (docs/api-reference.md)
// from the OpenAPI document, so the page cannot drift from the document
// the server is held to. `go generate ./server` runs it.
package apiref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

type document struct {
	Info struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"info"`
	Tags       []struct{ Name, Description string }  `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		SecuritySchemes map[string]struct {
			Type, Scheme, Description string
			Flows                     map[string]struct {
				Scopes map[string]string `json:"scopes"`
			} `json:"flows"`
		} `json:"securitySchemes"`
		Parameters map[string]parameter `json:"parameters"`
		Responses  map[string]struct {
			Description string `json:"description"`
		} `json:"responses"`
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
}

type parameter struct {
	Ref         string `json:"$ref"`
	Name        string `json:"name"`
	In          string `json:"in"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
	Schema      schema `json:"schema"`
}

type schema struct {
	Ref         string            `json:"$ref"`
	Type        any               `json:"type"`
	Format      string            `json:"format"`
	Enum        []any             `json:"enum"`
	Description string            `json:"description"`
	Required    []string          `json:"required"`
	Properties  map[string]schema `json:"properties"`
	Items       *schema           `json:"items"`
	Minimum     *float64          `json:"minimum"`
	Maximum     *float64          `json:"maximum"`
	Default     any               `json:"default"`
}

type operation struct {
	OperationID string                `json:"operationId"`
	Tags        []string              `json:"tags"`
	Summary     string                `json:"summary"`
	Description string                `json:"description"`
	Security    []map[string][]string `json:"security"`
	Parameters  []parameter           `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema schema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Ref         string `json:"$ref"`
		Description string `json:"description"`
	} `json:"responses"`
}

var methodOrder = []string{"get", "head", "post", "put", "patch", "delete"}

// Render returns the Markdown reference of the OpenAPI document doc (JSON).
func Render(doc []byte) ([]byte, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s reference\n\n", d.Info.Title)
	w("<!-- Generated from server/openapi.yaml by `go generate ./server`; do not edit. -->\n\n")
	w("%s\n", strings.TrimSpace(d.Info.Description))
	w("\nThe machine-readable document is served at `GET /v1/openapi.json` (no credential).\n\n")

	w("## Authentication\n\n")
	for _, name := range sortedKeys(d.Components.SecuritySchemes) {
		s := d.Components.SecuritySchemes[name]
		w("- **%s** (%s%s): %s\n", name, s.Type, prefixed(" ", s.Scheme), oneLine(s.Description))
		for _, f := range sortedKeys(s.Flows) {
			for _, sc := range sortedKeys(s.Flows[f].Scopes) {
				w("  - `%s`: %s\n", sc, s.Flows[f].Scopes[sc])
			}
		}
	}
	w("\n")

	byTag := map[string][]string{}
	ops := map[string]operation{}
	var shared []parameter
	for _, path := range sortedKeys(d.Paths) {
		item := d.Paths[path]
		shared = nil
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", path, err)
			}
		}
		for _, m := range methodOrder {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			op.Parameters = append(append([]parameter(nil), shared...), op.Parameters...)
			key := strings.ToUpper(m) + " " + path
			ops[key] = op
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			byTag[tag] = append(byTag[tag], key)
		}
	}
	w("## Endpoints\n\n| Method and path | Summary | Credential |\n|---|---|---|\n")
	for _, t := range tagOrder(d, byTag) {
		for _, key := range byTag[t] {
			op := ops[key]
			w("| [`%s`](#%s) | %s | %s |\n", key, anchor(op.OperationID), op.Summary, credential(op.Security))
		}
	}
	w("\n")
	for _, t := range tagOrder(d, byTag) {
		w("## %s\n\n", strings.ToUpper(t[:1])+t[1:])
		for _, key := range byTag[t] {
			op := ops[key]
			w("<a id=\"%s\"></a>\n### `%s`\n\n%s.", anchor(op.OperationID), key, op.Summary)
			if op.Description != "" {
				w(" %s", oneLine(op.Description))
			}
			w("\n\nCredential: %s.\n\n", credential(op.Security))
			if len(op.Parameters) > 0 {
				w("| Parameter | In | Required | Type | Description |\n|---|---|---|---|---|\n")
				for _, p := range op.Parameters {
					if p.Ref != "" {
						p = d.Components.Parameters[refName(p.Ref)]
					}
					w("| `%s` | %s | %s | %s | %s |\n", p.Name, p.In, yesNo(p.Required), typeOf(p.Schema), oneLine(p.Description))
				}
				w("\n")
			}
			if op.RequestBody != nil {
				for _, mt := range sortedKeys(op.RequestBody.Content) {
					w("Body (`%s`): %s\n\n", mt, typeOf(op.RequestBody.Content[mt].Schema))
					if s := op.RequestBody.Content[mt].Schema; len(s.Properties) > 0 {
						writeProps(&b, s)
					}
				}
			}
			w("| Status | Meaning |\n|---|---|\n")
			for _, code := range sortedKeys(op.Responses) {
				r := op.Responses[code]
				desc := r.Description
				if r.Ref != "" {
					desc = d.Components.Responses[refName(r.Ref)].Description
				}
				w("| %s | %s |\n", code, oneLine(desc))
			}
			w("\n")
		}
	}
	w("## Schemas\n\n")
	for _, name := range sortedKeys(d.Components.Schemas) {
		s := d.Components.Schemas[name]
		w("### %s\n\n", name)
		if s.Description != "" {
			w("%s\n\n", oneLine(s.Description))
		}
		if len(s.Properties) > 0 {
			writeProps(&b, s)
		} else {
			w("%s\n\n", typeOf(s))
		}
	}
	return b.Bytes(), nil
}

func writeProps(b *bytes.Buffer, s schema) {
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	fmt.Fprintf(b, "| Field | Type | Required | Description |\n|---|---|---|---|\n")
	for _, p := range sortedKeys(s.Properties) {
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p, typeOf(s.Properties[p]), yesNo(req[p]), oneLine(s.Properties[p].Description))
	}
	b.WriteString("\n")
}

func tagOrder(d document, byTag map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range d.Tags {
		if len(byTag[t.Name]) > 0 {
			out = append(out, t.Name)
			seen[t.Name] = true
		}
	}
	for _, t := range sortedKeys(byTag) {
		if !seen[t] {
			out = append(out, t)
		}
	}
	return out
}

// credential describes an operation's security requirements.
func credential(reqs []map[string][]string) string {
	if len(reqs) == 0 {
		return "any valid credential"
	}
	anonymous := false
	scopes := map[string]bool{}
	for _, r := range reqs {
		if len(r) == 0 {
			anonymous = true
		}
		for _, sc := range r {
			for _, s := range sc {
				scopes[s] = true
			}
		}
	}
	var out string
	switch {
	case scopes["admin"]:
		out = "a server admin's credential with every scope (`admin`)"
	case len(scopes) > 0:
		out = "scope " + "`" + strings.Join(sortedKeys(scopes), "`, `") + "`"
	case anonymous:
		return "none"
	default:
		out = "any valid credential"
	}
	if anonymous {
		out += "; none for a public repository"
	}
	return out
}

func typeOf(s schema) string {
	if s.Ref != "" {
		return "[" + refName(s.Ref) + "](#" + strings.ToLower(refName(s.Ref)) + ")"
	}
	var t string
	switch v := s.Type.(type) {
	case string:
		t = v
	case []any:
		var parts []string
		for _, p := range v {
			parts = append(parts, fmt.Sprint(p))
		}
		t = strings.Join(parts, " or ")
	}
	if t == "array" && s.Items != nil {
		t = "array of " + typeOf(*s.Items)
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, fmt.Sprintf("`%v`", e))
		}
		t += ": " + strings.Join(vals, ", ")
	}
	if s.Minimum != nil || s.Maximum != nil {
		lo, hi := "", ""
		if s.Minimum != nil {
			lo = fmt.Sprint(*s.Minimum)
		}
		if s.Maximum != nil {
			hi = fmt.Sprint(*s.Maximum)
		}
		t += " " + lo + ".." + hi
	}
	if s.Default != nil {
		t += fmt.Sprintf(", default `%v`", s.Default)
	}
	if t == "" {
		t = "any"
	}
	return t
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func anchor(id string) string { return strings.ToLower(id) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// oneLine makes text fit a table cell.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
