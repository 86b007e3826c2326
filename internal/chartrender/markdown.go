package chartrender

import (
	"bytes"
	"html"
	"io"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ClassPrefix starts every CSS class the highlighter emits, so that the
// sanitizer can allow exactly those and a README cannot borrow the page's
// own classes.
const ClassPrefix = "hl-"

// IDPrefix starts every element id inside rendered README HTML.
const IDPrefix = "readme-"

// maxHighlight is the largest code block highlighted; longer ones are
// shown as plain text, so the highlighter's work stays bounded.
const maxHighlight = 64 << 10

var (
	markdownOnce sync.Once
	markdown     goldmark.Markdown
	policy       *bluemonday.Policy
)

func setup() {
	markdown = goldmark.New(
		goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.Linkify,
			extension.TaskList,
		),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
		goldmark.WithRendererOptions(
			// Raw HTML passes to the sanitizer, which decides what stays:
			// READMEs use <details>, <br>, <sup> and aligned paragraphs.
			gmhtml.WithUnsafe(),
			renderer.WithNodeRenderers(util.Prioritized(codeRenderer{}, 100)),
		),
	)

	p := bluemonday.UGCPolicy()
	// Links within the page (a table of contents) and relative links stay;
	// javascript:, data: and every other scheme but http, https and
	// mailto go.
	p.AllowRelativeURLs(true)
	p.RequireNoReferrerOnLinks(true)
	p.RequireNoFollowOnLinks(true)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^hl-[a-z0-9]{1,20}( hl-[a-z0-9]{1,20}){0,3}$`)).OnElements("span", "pre", "code")
	// Task lists: a disabled checkbox (the last pass drops any other input).
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^(|checked|disabled)$`)).OnElements("input")
	// Code blocks scroll sideways; keyboard users reach them by Tab.
	p.AllowAttrs("tabindex").Matching(regexp.MustCompile(`^0$`)).OnElements("pre")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("td", "th", "p", "div", "h1", "h2", "h3")
	policy = p
}

// Markdown renders GitHub-flavoured Markdown to sanitized HTML (see the
// package documentation for the policy). Relative links and images lead
// nowhere: use MarkdownIn to resolve them against a chart's files.
func Markdown(src []byte) string {
	return MarkdownIn(src, nil)
}

// MarkdownIn renders Markdown as Markdown does, resolving its relative
// links and images against files, the paths of the chart's files (relative
// to the chart's root, where the README is): a link or raster image whose
// target is one of them refers to it as FileRef+path (the page resolves
// that to the route serving the file, ChartFileURL); any other relative
// link or image is left as its text, so there is never a dead link.
//
// The result is a balanced fragment: whatever end tags the README holds,
// it closes every element it opens and none it did not, so it stays
// inside the element the page puts it in.
func MarkdownIn(src []byte, files map[string]bool) string {
	markdownOnce.Do(setup)
	var raw bytes.Buffer
	if err := markdown.Convert(limitNesting(src), &raw); err != nil {
		// goldmark fails only when writing to the buffer fails, which
		// bytes.Buffer does not; show the text rather than nothing.
		return PlainText(string(src))
	}
	return Balance(finish(policy.SanitizeReader(&raw).String(), files))
}

// Balance re-serializes an HTML fragment as the body of a <div>: parsed by
// the HTML5 algorithm in that context (golang.org/x/net/html), stray end
// tags (</div></main>) are dropped and unclosed elements closed, so the
// fragment cannot close or reopen the page's own containers. The
// sanitizer works token by token and guarantees neither.
func Balance(s string) string {
	ctx := &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := xhtml.ParseFragment(strings.NewReader(s), ctx)
	if err != nil {
		// The parser reads from a string: it fails only on a reader
		// error. Never return half a fragment.
		return ""
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	for _, n := range nodes {
		if err := xhtml.Render(&b, n); err != nil {
			return ""
		}
	}
	return b.String()
}

// FileRef starts the address of a chart's own file in rendered HTML
// (MarkdownIn). It is not a URL scheme the sanitizer lets through, so only
// the renderer writes it; the page replaces it with the file route.
const FileRef = "chart-file:"

// ResolveFileRefs replaces every FileRef address in rendered HTML with
// base + "/" + the file's path (base is the route serving the version's
// files). Addresses are attribute values, always written in double
// quotes, and text never holds a double quote unescaped: only the
// renderer's own references match.
func ResolveFileRefs(html, base string) string {
	return strings.ReplaceAll(html, `="`+FileRef, `="`+base+"/")
}

// rasterImage reports whether p names an image the page may show inline
// from the chart (served with its own type, CSP and nosniff).
func rasterImage(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg":
		return true
	}
	return false
}

// chartFile resolves a link or image address of the README against the
// chart's files: the file's path when ref is relative (or rooted at the
// chart, "/docs/x.md") and names one of them, else "". Queries and
// fragments are dropped; escapes are decoded.
func chartFile(ref string, files map[string]bool) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || files == nil || strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "//") {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return ""
	}
	p := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	if p == "" || !files[p] {
		return ""
	}
	return p
}

// fileRef is the FileRef address of the chart file p, each segment
// escaped.
func fileRef(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return FileRef + strings.Join(segs, "/")
}

// isRelative reports whether a link address is relative to the document
// (or rooted at its server) rather than a web address, a mail address or
// a place in the page.
func isRelative(ref string) bool {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "#") {
		return false
	}
	u, err := url.Parse(ref)
	return err != nil || u.Scheme == ""
}

// PlainText renders text as a preformatted block.
func PlainText(s string) string {
	return `<pre tabindex="0" class="` + ClassPrefix + `plain">` + html.EscapeString(strings.ToValidUTF8(s, "")) + "</pre>"
}

// Highlight renders code in language lang (a chroma lexer name or alias;
// unknown or empty means plain text) as <pre> HTML with CSS classes.
func Highlight(code, lang string) string {
	code = strings.ToValidUTF8(code, "")
	var lexer chroma.Lexer
	if lang != "" && (len(code) <= maxHighlight || lang == "yaml" && len(code) <= MaxValuesSource) {
		lexer = lexers.Get(lang)
	}
	if lexer == nil {
		return plainCode(code)
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, code)
	if err != nil {
		return plainCode(code)
	}
	var b strings.Builder
	if err := formatter().Format(&b, styles.Fallback, it); err != nil {
		return plainCode(code)
	}
	// Code blocks scroll sideways; keyboard users reach them by Tab.
	return strings.Replace(b.String(), `<pre class="`, `<pre tabindex="0" class="`, 1)
}

func plainCode(code string) string {
	return `<pre tabindex="0" class="` + ClassPrefix + `chroma"><code>` + html.EscapeString(code) + "</code></pre>"
}

func formatter() *chromahtml.Formatter {
	return chromahtml.New(chromahtml.WithClasses(true), chromahtml.ClassPrefix(ClassPrefix))
}

// HighlightCSS returns the stylesheet for highlighted code: a light theme,
// and a dark one under prefers-color-scheme: dark.
func HighlightCSS() string {
	var b strings.Builder
	f := formatter()
	_ = f.WriteCSS(&b, styleOr("github"))
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	// Classes the dark theme leaves unstyled must not keep the light
	// theme's colours (dark punctuation on a dark background).
	b.WriteString(".hl-chroma [class^=\"hl-\"] { color: inherit; font-weight: inherit; font-style: inherit; background-color: transparent; }\n")
	_ = f.WriteCSS(&b, styleOr("github-dark"))
	b.WriteString("}\n")
	return b.String()
}

func styleOr(name string) *chroma.Style {
	if s := styles.Get(name); s != nil {
		return s
	}
	return styles.Fallback
}

// codeRenderer renders fenced and indented code blocks with Highlight.
type codeRenderer struct{}

func (codeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, renderCode)
	reg.Register(ast.KindCodeBlock, renderCode)
}

func renderCode(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	lang := ""
	if f, ok := n.(*ast.FencedCodeBlock); ok {
		lang = string(f.Language(source))
	}
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(source))
	}
	code := b.String()
	if len(code) > maxHighlight {
		lang = ""
	}
	_, err := w.WriteString(Highlight(code, lang))
	return ast.WalkSkipChildren, err
}

// finish is the last pass over sanitized HTML: images become links (or
// their alternative text), except the chart's own images, shown from it;
// relative links lead to the chart's files or become their text (see
// MarkdownIn); ids get IDPrefix, in-page links follow them, and inputs
// other than disabled checkboxes go.
func finish(s string, files map[string]bool) string {
	z := xhtml.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	inLink := 0
	// dropped records, for each open <a>, whether its start tag was left
	// out, so that its end tag is too.
	var dropped []bool
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			if z.Err() == io.EOF {
				return b.String()
			}
			// The tokenizer reads from a string: nothing but EOF can end
			// it, but never return half a document.
			return ""
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "img":
				if p := chartFile(attr(tok, "src"), files); p != "" && rasterImage(p) {
					b.WriteString(chartImage(tok, p))
					continue
				}
				b.WriteString(imageLink(tok, inLink > 0))
				continue
			case "input":
				if attr(tok, "type") != "checkbox" {
					continue
				}
				checked := hasAttr(tok, "checked")
				// A task list item's box; its text follows it, so the
				// box needs a name of its own for assistive technology.
				tok.Attr = []xhtml.Attribute{{Key: "type", Val: "checkbox"}, {Key: "disabled", Val: ""}, {Key: "aria-label", Val: "Task"}}
				if checked {
					tok.Attr = append(tok.Attr, xhtml.Attribute{Key: "checked", Val: ""})
				}
			case "a":
				drop := false
				if href := attr(tok, "href"); isRelative(href) {
					if p := chartFile(href, files); p != "" {
						setAttr(&tok, "href", fileRef(p))
					} else {
						// Not a file of the chart: the link would be
						// the 404 page. Its text stays.
						drop = true
					}
				}
				if tt == xhtml.StartTagToken {
					inLink++
					dropped = append(dropped, drop)
				}
				if drop {
					continue
				}
			}
			rewriteIDs(&tok)
			b.WriteString(tok.String())
		case xhtml.EndTagToken:
			tok := z.Token()
			if tok.Data == "a" && inLink > 0 {
				inLink--
				drop := dropped[len(dropped)-1]
				dropped = dropped[:len(dropped)-1]
				if drop {
					continue
				}
			}
			b.WriteString(tok.String())
		default:
			b.Write(z.Raw())
		}
	}
}

func attr(t xhtml.Token, key string) string {
	for _, a := range t.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(t xhtml.Token, key string) bool {
	for _, a := range t.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// rewriteIDs prefixes ids and in-page link targets, and drops name
// attributes (which also name elements for scripts).
func rewriteIDs(t *xhtml.Token) {
	out := t.Attr[:0]
	for _, a := range t.Attr {
		switch {
		case a.Key == "name":
			continue
		case a.Key == "id":
			a.Val = IDPrefix + a.Val
		case a.Key == "href" && strings.HasPrefix(a.Val, "#") && len(a.Val) > 1:
			a.Val = "#" + IDPrefix + a.Val[1:]
		}
		out = append(out, a)
	}
	t.Attr = out
}

func setAttr(t *xhtml.Token, key, val string) {
	for i := range t.Attr {
		if t.Attr[i].Key == key {
			t.Attr[i].Val = val
			return
		}
	}
	t.Attr = append(t.Attr, xhtml.Attribute{Key: key, Val: val})
}

// chartImage shows an image of the chart itself (p): same-origin, so the
// pages' Content-Security-Policy allows it and no other host learns of the
// visit. Its size attributes stay when numeric; CSS bounds its width.
func chartImage(t xhtml.Token, p string) string {
	alt := strings.TrimSpace(attr(t, "alt"))
	if alt == "" {
		alt = strings.TrimSpace(attr(t, "title"))
	}
	out := xhtml.Token{Type: xhtml.SelfClosingTagToken, Data: "img", Attr: []xhtml.Attribute{
		{Key: "src", Val: fileRef(p)}, {Key: "alt", Val: alt}, {Key: "loading", Val: "lazy"}, {Key: "class", Val: ClassPrefix + "img"}}}
	for _, k := range []string{"width", "height"} {
		if v := attr(t, k); v != "" && len(v) <= 5 && strings.Trim(v, "0123456789") == "" {
			out.Attr = append(out.Attr, xhtml.Attribute{Key: k, Val: v})
		}
	}
	return out.String()
}

// imageLink replaces an image: a link to it when its address is on the
// web and it is not already inside a link, else its alternative text.
func imageLink(t xhtml.Token, insideLink bool) string {
	alt := strings.TrimSpace(attr(t, "alt"))
	if alt == "" {
		alt = strings.TrimSpace(attr(t, "title"))
	}
	label := "image"
	if alt != "" {
		label = "image: " + alt
	}
	src := WebURL(attr(t, "src"))
	text := `<span class="` + ClassPrefix + `img">[` + html.EscapeString(label) + `]</span>`
	if src == "" || insideLink {
		return text
	}
	return `<a href="` + html.EscapeString(src) + `" rel="nofollow noreferrer noopener">` + text + `</a>`
}

// WebURL returns s when it is an absolute http or https address with a
// host, and "" otherwise.
func WebURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 2048 || strings.ContainsAny(s, " \t\r\n\"'<>`\\") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

// Bounds on block nesting. goldmark's work grows faster than linearly
// with the depth of nested block quotes and lists, so a README of a few
// hundred KiB nesting thousands deep would keep it busy for minutes.
// Nothing a person writes comes near these.
const (
	maxNesting = 16
	maxIndent  = 64
)

// limitNesting rewrites the lines of src that nest block quotes or lists
// deeper than maxNesting (the markers past it are escaped, so they show
// as text) or that are indented more than maxIndent columns (the
// indentation is cut to it).
func limitNesting(src []byte) []byte {
	var out []byte // nil until a line changes
	start := 0
	for start < len(src) {
		end := start
		for end < len(src) && src[end] != '\n' {
			end++
		}
		if end < len(src) {
			end++
		}
		line := src[start:end]
		if fixed, changed := limitLine(line); changed {
			if out == nil {
				out = make([]byte, 0, len(src)+64)
				out = append(out, src[:start]...)
			}
			out = append(out, fixed...)
		} else if out != nil {
			out = append(out, line...)
		}
		start = end
	}
	if out == nil {
		return src
	}
	return out
}

func limitLine(line []byte) ([]byte, bool) {
	i, col := 0, 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		if line[i] == '\t' {
			col += 4 - col%4
		} else {
			col++
		}
		i++
	}
	changed := false
	if col > maxIndent {
		line = append([]byte(strings.Repeat(" ", maxIndent)), line[i:]...)
		i, changed = maxIndent, true
	}
	depth := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		n := markerLen(line[i:])
		if n == 0 {
			break
		}
		depth++
		if depth > maxNesting {
			fixed := make([]byte, 0, len(line)+1)
			fixed = append(fixed, line[:i]...)
			fixed = append(fixed, '\\')
			fixed = append(fixed, line[i:]...)
			return fixed, true
		}
		i += n
	}
	return line, changed
}

// markerLen returns the length of a block quote or list marker at the
// start of b, 0 if there is none.
func markerLen(b []byte) int {
	switch {
	case b[0] == '>':
		return 1
	case (b[0] == '-' || b[0] == '*' || b[0] == '+') && (len(b) == 1 || b[1] == ' ' || b[1] == '\t'):
		return 1
	}
	j := 0
	for j < len(b) && j < 9 && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j > 0 && j < len(b) && (b[j] == '.' || b[j] == ')') && (j+1 == len(b) || b[j+1] == ' ' || b[j+1] == '\t') {
		return j + 1
	}
	return 0
}
