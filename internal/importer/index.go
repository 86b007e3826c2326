package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// An upstream index is read without ever holding the whole of it, nor a
// tree of it, in memory (CONTRACT §18 decision 15): a parsed tree of a
// YAML index takes 12 to 30 times the index's size, so a 32 MiB index
// took a mirror sync to 766 MB. Only the few fields a copy needs are
// kept of each version (indexEntry).
//
// A JSON index (Helm writes them too, and JSON is YAML) is streamed with
// encoding/json's tokenizer, one version's object decoded at a time. YAML
// has no streaming decoder in Go, so a YAML index is cut into one small
// document per version along its block structure (yamlEntries), each
// decoded into indexEntry by the YAML library: the index's text is split
// at lines, never parsed by hand.

// maxEntrySize bounds one version's entry in a YAML index (and the
// top-level keys read whole): decoding a document takes up to about 15
// times its size, so this bounds the memory of one step. Helm's own
// entries are a few KiB.
const maxEntrySize = 1 << 20

// errNotIndex says the document's shape is not an index's.
var errNotIndex = errors.New("not a Helm repository index")

// indexEntry is what a copy needs of one version in an index.
type indexEntry struct {
	Name    string   `json:"name" yaml:"name"`
	Version string   `json:"version" yaml:"version"`
	Created string   `json:"created" yaml:"created"`
	Digest  string   `json:"digest" yaml:"digest"`
	URLs    []string `json:"urls" yaml:"urls"`
}

// decodeIndex reads the index r and calls add with each version's entry
// and the name of the chart it is listed under. It returns the index's
// apiVersion and whether it had an entries key: a document with neither
// is not an index. A read error of r is returned as it is (wrapped).
func decodeIndex(r io.Reader, add func(chart string, e *indexEntry)) (apiVersion string, hasEntries bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, _ := br.Peek(3)
		if !bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
			break
		}
		_, _ = br.Discard(3)
	}
	// JSON when the first character after white space (and a byte order
	// mark) opens an object: Helm's JSON indexes, and the only flow style
	// YAML indexes take in practice. The white space is looked past, not
	// consumed: in YAML it is part of the first line, and an indented
	// first line means something else than the same line unindented.
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			switch {
			case err == io.EOF:
				// Empty, or white space only.
				return "", false, nil
			case errors.Is(err, bufio.ErrBufferFull):
				return decodeYAMLIndex(br, add)
			}
			return "", false, err
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			_, _ = br.Discard(n - 1)
			return decodeJSONIndex(br, add)
		}
		return decodeYAMLIndex(br, add)
	}
}

// decodeJSONIndex streams a JSON index: its top-level object is walked
// token by token, and each version's object is decoded on its own.
func decodeJSONIndex(r io.Reader, add func(string, *indexEntry)) (apiVersion string, hasEntries bool, err error) {
	dec := json.NewDecoder(r)
	if err := jsonDelim(dec, '{'); err != nil {
		return "", false, err
	}
	for dec.More() {
		key, err := jsonKey(dec)
		if err != nil {
			return "", false, err
		}
		switch key {
		case "apiVersion":
			if err := dec.Decode(&apiVersion); err != nil {
				return "", false, jsonError(dec, "apiVersion", err)
			}
		case "entries":
			hasEntries = true
			if err := decodeJSONEntries(dec, add); err != nil {
				return "", false, err
			}
		default:
			// generated, serverInfo, annotations: not needed. Skipping
			// decodes into nothing, holding only this value's text.
			if err := dec.Decode(&skip{}); err != nil {
				return "", false, jsonError(dec, key, err)
			}
		}
	}
	if err := jsonDelim(dec, '}'); err != nil {
		return "", false, err
	}
	return apiVersion, hasEntries, nil
}

// skip decodes any JSON value into nothing.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

func decodeJSONEntries(dec *json.Decoder, add func(string, *indexEntry)) error {
	t, err := dec.Token()
	if err != nil {
		return jsonError(dec, "entries", err)
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('{') {
		return fmt.Errorf("%w: entries is not an object", errNotIndex)
	}
	for dec.More() {
		chart, err := jsonKey(dec)
		if err != nil {
			return err
		}
		t, err := dec.Token()
		if err != nil {
			return jsonError(dec, chart, err)
		}
		if t == nil {
			continue
		}
		if t != json.Delim('[') {
			return fmt.Errorf("%w: the entries of %q are not a list", errNotIndex, chart)
		}
		for dec.More() {
			var e indexEntry
			if err := dec.Decode(&e); err != nil {
				return jsonError(dec, chart, err)
			}
			add(chart, &e)
		}
		if err := jsonDelim(dec, ']'); err != nil {
			return err
		}
	}
	return jsonDelim(dec, '}')
}

func jsonKey(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", jsonError(dec, "", err)
	}
	k, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("%w: unexpected %v at offset %d", errNotIndex, t, dec.InputOffset())
	}
	return k, nil
}

func jsonDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return jsonError(dec, "", err)
	}
	if t != d {
		return fmt.Errorf("%w: expected %v at offset %d, found %v", errNotIndex, d, dec.InputOffset(), t)
	}
	return nil
}

// jsonError words a decoding error, keeping a read error of the source
// (a cut connection, the size limit) as it is.
func jsonError(dec *json.Decoder, where string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at offset %d: %v", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = where
		}
		return fmt.Errorf("%w: %s is a JSON %s at offset %d", errNotIndex, field, te.Value, te.Offset)
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the JSON ends early (at offset %d)", dec.InputOffset())
	}
	return err
}

// decodeYAMLIndex reads a block-style YAML index one piece at a time (see
// yamlEntries).
func decodeYAMLIndex(r *bufio.Reader, add func(string, *indexEntry)) (apiVersion string, hasEntries bool, err error) {
	y := &yamlEntries{lines: lineReader{r: r}, add: add}
	if err := y.read(); err != nil {
		return "", false, err
	}
	return y.apiVersion, y.hasEntries, nil
}

// yamlEntries cuts a YAML index into one document per version. YAML's
// block structure is told by indentation: a line indented no more than a
// node's key starts that node's next sibling (block scalars and
// continuation lines are indented further), so
//
//	apiVersion: v1         a top-level key: read alone
//	entries:               the entries key; its children are charts
//	  nginx:               a chart's key, remembered
//	  - name: nginx        the start of one version's item
//	    version: 1.0.0     ...its further lines
//	  - name: nginx        the next version
//
// is decoded as the documents "nginx:\n- name: nginx\n  version: 1.0.0"
// and so on. Whatever does not fit this shape (flow style inside entries,
// anchors reaching across versions) fails to decode and is reported; an
// index in such a form can be served as JSON instead.
type yamlEntries struct {
	lines lineReader
	add   func(string, *indexEntry)

	apiVersion string
	hasEntries bool
}

func (y *yamlEntries) read() error {
	line, err := y.lines.next()
	keys := false // a top-level key was read
	for err == nil {
		switch {
		case blank(line):
			// Comments.
			line, err = y.lines.next()
		case indent(line) > 0:
			if !keys {
				// The top-level mapping is indented: Helm writes none, and
				// its keys would be told from their children by another
				// column than 0.
				return fmt.Errorf("%w: line %d: the top level is indented", errNotIndex, y.lines.n)
			}
			// Lines of a top-level key that is skipped.
			line, err = y.lines.next()
		case bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")):
			if y.lines.n > 1 && (y.apiVersion != "" || y.hasEntries) {
				return nil // another document: Helm reads the first only
			}
			line, err = y.lines.next()
		default:
			keys = true
			line, err = y.topLevel(line)
		}
	}
	if err == io.EOF {
		return nil
	}
	return err
}

// topLevel reads the top-level key starting at line and returns the line
// after it.
func (y *yamlEntries) topLevel(line []byte) ([]byte, error) {
	var key map[string]yaml.Node
	if yaml.Unmarshal(line, &key) != nil || len(key) != 1 {
		// Not a key read alone (a multi-line key or value, or not a
		// mapping at all): skipped; an index lacking its apiVersion and
		// entries is refused by the caller.
		return y.lines.next()
	}
	for k, v := range key {
		switch {
		case k == "entries" && isNull(v):
			y.hasEntries = true
			return y.entries()
		case k == "entries":
			// Written inline ("entries: {}", a flow mapping): read whole,
			// bounded as one entry.
			y.hasEntries = true
			doc, next, err := y.gather(line, 0)
			if err != nil && err != io.EOF {
				return nil, err
			}
			var idx struct {
				Entries map[string][]indexEntry `yaml:"entries"`
			}
			if derr := yaml.Unmarshal(doc, &idx); derr != nil {
				return nil, y.lines.yamlError(derr)
			}
			y.addAll("", idx.Entries)
			return next, err
		case k == "apiVersion":
			doc, next, err := y.gather(line, 0)
			if err != nil && err != io.EOF {
				return nil, err
			}
			var v struct {
				APIVersion string `yaml:"apiVersion"`
			}
			if derr := yaml.Unmarshal(doc, &v); derr != nil {
				return nil, y.lines.yamlError(derr)
			}
			y.apiVersion = v.APIVersion
			return next, err
		}
	}
	// Any other key (generated, serverInfo, annotations) is skipped by
	// read, line by line, without being held.
	return y.lines.next()
}

// isNull reports a key written without a value ("entries:").
func isNull(n yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// entries reads the children of the entries key: charts, each a list of
// versions.
func (y *yamlEntries) entries() ([]byte, error) {
	line, err := y.lines.next()
	for err == nil && blank(line) {
		line, err = y.lines.next()
	}
	if err != nil || indent(line) == 0 {
		return line, err
	}
	charts := indent(line)
	for err == nil {
		if blank(line) {
			line, err = y.lines.next()
			continue
		}
		in := indent(line)
		if in < charts {
			return line, nil
		}
		if in > charts || isItem(line, in) {
			return nil, fmt.Errorf("%w: line %d: expected a chart's name under entries", errNotIndex, y.lines.n)
		}
		line, err = y.chart(line, charts)
	}
	return line, err
}

// chart reads one chart's key line and its list of versions, decoding
// each version alone under the chart's key; it returns the line after.
func (y *yamlEntries) chart(keyLine []byte, charts int) ([]byte, error) {
	head := append(bytes.Clone(keyLine), '\n')
	var key map[string]yaml.Node
	err := yaml.Unmarshal(head, &key)
	if err == nil && len(key) != 1 {
		return nil, fmt.Errorf("%w: line %d: expected a chart's name under entries", errNotIndex, y.lines.n)
	}
	var name string
	for k, v := range key {
		name = k
		if isNull(v) {
			break
		}
		err = errors.New("an inline value")
	}
	if err != nil {
		// An inline value ("nginx: []", a flow list, which may go on
		// over further lines): read whole, bounded as one entry.
		doc, next, err := y.gather(keyLine, charts)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if derr := y.decode("", doc); derr != nil {
			return nil, derr
		}
		return next, err
	}
	line, err := y.lines.next()
	for err == nil && blank(line) {
		line, err = y.lines.next()
	}
	if err != nil {
		return line, err
	}
	items := indent(line)
	if items < charts || !isItem(line, items) {
		// No list: a chart without versions, or not a list (refused by
		// the caller, which finds it indented too far).
		return line, nil
	}
	for err == nil {
		if blank(line) {
			line, err = y.lines.next()
			continue
		}
		if in := indent(line); in < items || in == items && !isItem(line, in) {
			return line, nil
		}
		var doc []byte
		doc, line, err = y.gather(head, items, line)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if derr := y.decode(name, doc); derr != nil {
			return nil, derr
		}
	}
	return line, err
}

// gather returns doc, prefix followed by the lines that follow (first,
// then those read) up to the next line indented no more than in, which
// it returns as next; at the end of the index, doc and io.EOF.
func (y *yamlEntries) gather(prefix []byte, in int, first ...[]byte) (doc, next []byte, err error) {
	doc = bytes.Clone(prefix)
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		doc = append(doc, '\n')
	}
	for _, l := range first {
		doc = append(append(doc, l...), '\n')
	}
	for {
		line, err := y.lines.next()
		if err != nil {
			return doc, nil, err
		}
		if !blank(line) && indent(line) <= in {
			return doc, line, nil
		}
		doc = append(append(doc, line...), '\n')
		if len(doc) > maxEntrySize {
			return nil, nil, fmt.Errorf("line %d: a part of the index read whole (one version's entry, or a part in flow style) is larger than %d MiB", y.lines.n, maxEntrySize>>20)
		}
	}
}

// decode decodes doc, one chart's key and some of its versions, and adds
// them under name ("": the key's own string).
func (y *yamlEntries) decode(name string, doc []byte) error {
	var m map[string][]indexEntry
	if err := yaml.Unmarshal(doc, &m); err != nil {
		return y.lines.yamlError(err)
	}
	y.addAll(name, m)
	return nil
}

// addAll adds the versions of m, each under name ("": its key in m).
func (y *yamlEntries) addAll(name string, m map[string][]indexEntry) {
	for k, es := range m {
		chart := name
		if chart == "" {
			chart = k
		}
		for i := range es {
			y.add(chart, &es[i])
		}
	}
}

// lineReader reads lines, counting them for messages.
type lineReader struct {
	r *bufio.Reader
	n int
}

// next returns the next line without its line ending; the slice is valid
// until the following call.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A long line: gather it whole (bounded by the size limit).
		long := bytes.Clone(line)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.r.ReadSlice('\n')
			long = append(long, line...)
			if len(long) > maxEntrySize {
				return nil, fmt.Errorf("line %d of the index is longer than %d MiB", l.n+1, maxEntrySize>>20)
			}
		}
		line = long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	l.n++
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// yamlError words a YAML error; the library's line numbers count from
// the piece decoded, so the message says where reading had got to.
func (l *lineReader) yamlError(err error) error {
	return fmt.Errorf("invalid YAML near line %d: %v", l.n, err)
}

// blank reports a line of white space or only a comment.
func blank(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) == 0 || t[0] == '#'
}

// indent is the number of spaces a line starts with (YAML indents with
// spaces only).
func indent(line []byte) int {
	return len(line) - len(bytes.TrimLeft(line, " "))
}

// isItem reports whether line holds a block sequence item at column in:
// a "-" followed by a blank or the line's end ("-:" is a key named "-").
func isItem(line []byte, in int) bool {
	if in >= len(line) || line[in] != '-' {
		return false
	}
	return in+1 == len(line) || line[in+1] == ' ' || line[in+1] == '\t' || line[in+1] == '\r' || line[in+1] == '\n'
}
