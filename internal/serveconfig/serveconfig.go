// Package serveconfig loads the server's configuration from its three
// sources (CONTRACT §14): command-line flags, CHARTCTL_* environment
// variables and a YAML file, in that order of precedence, over the flags'
// defaults.
//
// The flag set is the only table: every flag registered on it is also an
// environment variable (--max-chart-size ← CHARTCTL_MAX_CHART_SIZE) and a
// key of the file (max-chart-size), so adding a server flag is one line
// where the flag is declared. Flags marked with MarkSecret are shown as
// <redacted> by --print-config.
package serveconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is read when --config is not given and the file exists.
const DefaultPath = "/etc/chartctl/config.yaml"

// Flag names this package adds; they are not keys of the file.
const (
	FlagConfig      = "config"
	FlagPrintConfig = "print-config"
)

// EnvPrefix prefixes the environment variable of every flag.
const EnvPrefix = "CHARTCTL_"

// Redacted replaces secret values in the printed configuration.
const Redacted = "<redacted>"

const secretAnnotation = "chartctl/secret"

// AddFlags adds --config and --print-config to flags.
func AddFlags(flags *pflag.FlagSet) {
	flags.String(FlagConfig, "", "YAML configuration file whose keys are the long flag names (default "+DefaultPath+" when it exists)")
	flags.Bool(FlagPrintConfig, false, "print the effective configuration as YAML, secrets redacted, and exit")
}

// MarkSecret marks the flag name as holding a secret: --print-config shows
// <redacted> instead of its value. Passwords inside URL values are redacted
// whether marked or not.
func MarkSecret(flags *pflag.FlagSet, name string) {
	_ = flags.SetAnnotation(name, secretAnnotation, []string{"true"})
}

// EnvName is the environment variable of a flag: CHARTCTL_ + upper case,
// dashes as underscores.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Source is where a setting's effective value came from.
type Source string

// The sources, strongest first.
const (
	SourceFlag    Source = "flag"
	SourceEnv     Source = "env"
	SourceFile    Source = "file"
	SourceDefault Source = "default"
)

// Result describes a load.
type Result struct {
	// File is the configuration file read, "" when none.
	File string
	// Sources maps each flag name to where its value came from.
	Sources map[string]Source
}

// Load completes flags (already parsed from the command line) from the
// environment and then from the configuration file. The file is the one
// named by --config (or CHARTCTL_CONFIG), else DefaultPath when it exists.
// getenv reads the environment; readFile reads files (os.ReadFile when
// nil); tests replace them.
func Load(flags *pflag.FlagSet, getenv func(string) string, readFile func(string) ([]byte, error)) (*Result, error) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	res := &Result{Sources: map[string]Source{}}
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			res.Sources[f.Name] = SourceFlag
		} else {
			res.Sources[f.Name] = SourceDefault
		}
	})
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || notSetting(f) {
			return
		}
		name := EnvName(f.Name)
		if v := getenv(name); v != "" {
			if e := flags.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid %s %q: %v", name, v, e)
				return
			}
			res.Sources[f.Name] = SourceEnv
		}
	})
	if err != nil {
		return nil, err
	}

	path, explicit := "", false
	if f := flags.Lookup(FlagConfig); f != nil && f.Value.String() != "" {
		path, explicit = f.Value.String(), true
	}
	if !explicit {
		path = DefaultPath
	}
	data, err := readFile(path)
	switch {
	case err == nil:
	case !explicit && errors.Is(err, fs.ErrNotExist):
		return res, nil
	default:
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	res.File = path
	if err := apply(flags, path, data, res); err != nil {
		return nil, err
	}
	return res, nil
}

// apply sets, from the YAML document data, every flag the command line and
// the environment left alone. Every key is checked, including those a
// stronger source overrides, so a typo never hides.
func apply(flags *pflag.FlagSet, path string, data []byte, res *Result) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file sets nothing
		}
		return fmt.Errorf("%s: %v", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: the configuration must be a mapping of flag names to values, e.g. \"addr: 0.0.0.0:8080\"", path, root.Line)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("%s:%d: key %q is already set on line %d", path, k.Line, key, prev)
		}
		seen[key] = k.Line
		f := flags.Lookup(key)
		if f == nil || key == FlagConfig || notSetting(f) {
			return fmt.Errorf("%s:%d: unknown key %q%s", path, k.Line, key, suggest(flags, key))
		}
		val, err := scalar(v)
		if err != nil {
			return fmt.Errorf("%s:%d: invalid value for key %q: %v", path, v.Line, key, err)
		}
		if res.Sources[key] == SourceFlag || res.Sources[key] == SourceEnv {
			// A stronger source wins; still check that the value parses.
			if err := checkValue(f, val); err != nil {
				return fmt.Errorf("%s:%d: invalid value for key %q: %v", path, v.Line, key, err)
			}
			continue
		}
		if err := flags.Set(key, val); err != nil {
			return fmt.Errorf("%s:%d: invalid value for key %q: %v", path, v.Line, key, err)
		}
		res.Sources[key] = SourceFile
	}
	return nil
}

// notSetting reports whether f is not a server setting: help, hidden
// flags and --print-config (an action) are neither variables nor keys.
func notSetting(f *pflag.Flag) bool {
	return f.Hidden || f.Name == "help" || f.Name == FlagPrintConfig
}

// scalar turns a YAML value into the flag's string form: scalars as
// written, sequences of scalars joined with commas (for list flags such as
// acme-domain or trusted-proxies).
func scalar(n *yaml.Node) (string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "", nil
		}
		return n.Value, nil
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return "", errors.New("a list may hold only plain values")
			}
			parts = append(parts, c.Value)
		}
		return strings.Join(parts, ","), nil
	case yaml.AliasNode:
		return scalar(n.Alias)
	default:
		return "", errors.New("expected a value or a list of values, not a mapping")
	}
}

// checkValue parses val into an independent copy of f's value, so a file
// value that a stronger source overrides is still checked.
func checkValue(f *pflag.Flag, val string) error {
	cp := cloneValue(f.Value)
	if cp == nil {
		return nil
	}
	return cp.Set(val)
}

// cloneValue makes an independent value of the same type as v. pflag's
// values and this project's custom ones are pointers to plain data, so a
// shallow copy is independent; list values hold a pointer to their slice
// and get a fresh one instead.
func cloneValue(v pflag.Value) pflag.Value {
	switch v.Type() {
	case "stringSlice":
		return fresh(func(fs *pflag.FlagSet) { fs.StringSlice("v", nil, "") })
	case "stringArray":
		return fresh(func(fs *pflag.FlagSet) { fs.StringArray("v", nil, "") })
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	elem := rv.Elem()
	if elem.Kind() == reflect.Struct {
		for i := 0; i < elem.NumField(); i++ {
			switch elem.Field(i).Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map:
				return nil // cannot copy safely
			}
		}
	}
	cp := reflect.New(elem.Type())
	cp.Elem().Set(elem)
	out, _ := cp.Interface().(pflag.Value)
	return out
}

func fresh(add func(*pflag.FlagSet)) pflag.Value {
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	add(fs)
	return fs.Lookup("v").Value
}

// suggest names the closest known key when one is near.
func suggest(flags *pflag.FlagSet, key string) string {
	best, bestD := "", 4
	flags.VisitAll(func(f *pflag.Flag) {
		if notSetting(f) || f.Name == FlagConfig {
			return
		}
		if d := distance(key, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best == "" {
		return " (keys are the long flag names of `chartctl serve`)"
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Print writes the effective configuration of fs as YAML: every flag but
// --config and --print-config, in name order, secrets as <redacted>.
func Print(w io.Writer, flags *pflag.FlagSet) error {
	var names []string
	flags.VisitAll(func(f *pflag.Flag) {
		if notSetting(f) || f.Name == FlagConfig {
			return
		}
		names = append(names, f.Name)
	})
	sort.Strings(names)
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range names {
		f := flags.Lookup(name)
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, valueNode(f))
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return enc.Close()
}

func valueNode(f *pflag.Flag) *yaml.Node {
	v := f.Value.String()
	if _, ok := f.Annotations[secretAnnotation]; ok && v != "" {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: Redacted}
	}
	v = redactURL(v)
	switch f.Value.Type() {
	case "bool":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v}
	case "int", "int64", "uint", "uint64":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v}
	case "stringSlice", "stringArray":
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range strings.Split(strings.Trim(v, "[]"), ",") {
			if s != "" {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
			}
		}
		return seq
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// redactURL hides the password of a URL value (postgres://user:pass@…) and
// secret-looking query parameters.
func redactURL(v string) string {
	if !strings.Contains(v, "://") {
		return v
	}
	u, err := url.Parse(v)
	if err != nil {
		return v
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			changed = true
		}
	}
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "password") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if !changed {
		return v
	}
	u.RawQuery = q.Encode()
	return strings.ReplaceAll(u.String(), "xxxxx", Redacted)
}
