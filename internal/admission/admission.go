// Package admission is the admission policy of CONTRACT §18 as a pure
// function: (chart archive, what is stored, signature verdict, policy) →
// findings. The application layer (internal/app) calls Evaluate on the
// one write path every protocol takes, before anything is stored.
//
// Linting untrusted charts runs Helm's template engine; it goes through an
// injected Linter so the caller can bound it in time and memory
// (decision 9, see Pooled).
package admission

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// RequiredFieldNames are the names required_fields accepts: Chart.yaml
// fields, plus "license" for the artifacthub.io/license annotation.
var RequiredFieldNames = []string{"description", "home", "icon", "keywords", "kubeVersion", "license", "maintainers", "sources", "appVersion"}

// LintMessage is one message of Helm's linter.
type LintMessage struct {
	// Severity is "error", "warning" or "info".
	Severity string `json:"severity"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
}

// Linter lints a chart archive with Helm's rules. An error means the chart
// could not be linted (too slow, too large): the chart is refused with
// its message.
type Linter func(ctx context.Context, archive []byte, opt LintOptions) ([]LintMessage, error)

// Input is what Evaluate checks.
type Input struct {
	// Archive is the chart archive (.tgz); Chart is what chart.Read made
	// of it.
	Archive []byte
	Chart   *chart.Chart
	// Limits are the archive limits the chart was read with.
	Limits chart.Limits
	// Stored are the versions of the chart already stored in the
	// repository (for monotonic_versions).
	Stored []string
	// Verification is the verdict on the signatures that came with the
	// chart.
	Verification chartctl.PolicyVerification
	// Lint lints the archive; nil with a lint rule set is an error.
	Lint Linter
}

// Result is Evaluate's verdict.
type Result struct {
	// Findings are every rule the chart broke, errors and warnings.
	Findings []chartctl.Finding
	// Violations are the findings that refuse the chart; the signature
	// rule is not among them (see Unsigned).
	Violations []chartctl.Violation
	// Unsigned says the policy requires a signature the chart lacks: the
	// caller refuses it, or holds it for the policy's hold window.
	Unsigned *chartctl.Violation
}

// Evaluate checks in against p and returns every finding; it stores
// nothing. An error is an internal failure, not a verdict.
func Evaluate(ctx context.Context, p chartctl.Policy, in Input) (*Result, error) {
	res := &Result{}
	refuse := func(rule, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Violations = append(res.Violations, chartctl.Violation{Rule: rule, Message: msg})
		res.Findings = append(res.Findings, chartctl.Finding{Rule: rule, Severity: "error", Message: msg})
	}
	md := in.Chart.Metadata
	if p.MaxSize > 0 && int64(len(in.Archive)) > p.MaxSize {
		refuse(chartctl.RuleMaxSize, "the archive is %d bytes, over the limit of %d", len(in.Archive), p.MaxSize)
	}
	if p.NamePattern != "" {
		re, err := regexp.Compile(p.NamePattern)
		if err != nil {
			return nil, fmt.Errorf("name_pattern: %w", err)
		}
		if !re.MatchString(in.Chart.Name) {
			refuse(chartctl.RuleNamePattern, "chart name %q does not match %q", in.Chart.Name, p.NamePattern)
		}
	}
	v, verr := semver.StrictNewVersion(strings.TrimPrefix(in.Chart.Version, "v"))
	if verr != nil {
		v, verr = semver.NewVersion(in.Chart.Version)
	}
	if !p.AllowPrerelease && verr == nil && v.Prerelease() != "" {
		refuse(chartctl.RuleAllowPrerelease, "version %s is a pre-release", in.Chart.Version)
	}
	if p.MonotonicVersions && verr == nil {
		for _, s := range in.Stored {
			sv, err := semver.NewVersion(s)
			if err == nil && !v.GreaterThan(sv) {
				refuse(chartctl.RuleMonotonicVersions, "version %s is not greater than stored version %s", in.Chart.Version, s)
				break
			}
		}
	}
	if missing := missingFields(md, p.RequiredFields); len(missing) > 0 {
		refuse(chartctl.RuleRequiredFields, "Chart.yaml lacks %s", strings.Join(missing, ", "))
	}
	if p.ImagesPinned {
		if unpinned := unpinnedImages(md); len(unpinned) > 0 {
			refuse(chartctl.RuleImagesPinned, "images not pinned by digest: %s", strings.Join(unpinned, ", "))
		}
	}
	needFiles := len(p.DenyFiles) > 0 || p.ValuesSchema
	if needFiles {
		files, err := readFiles(in.Archive, in.Limits)
		if err != nil {
			return nil, err
		}
		if denied := deniedFiles(files.paths, p.DenyFiles); len(denied) > 0 {
			refuse(chartctl.RuleDenyFiles, "the chart contains denied files: %s", strings.Join(denied, ", "))
		}
		if p.ValuesSchema && files.schema != nil {
			if msg := checkValuesSchema(files.schema, files.values); msg != "" {
				refuse(chartctl.RuleValuesSchema, "%s", msg)
			}
		}
	}
	if p.Lint == chartctl.LintWarning || p.Lint == chartctl.LintError {
		var msgs []LintMessage
		var err error
		if in.Lint == nil {
			err = fmt.Errorf("this server has no linter: install chartctl-lint next to the chartctl binary")
		} else {
			// With values_schema the schema was checked above, once; Helm's
			// lint would validate it twice more (its values and templates
			// rules) and report the same failure again.
			msgs, err = in.Lint(ctx, in.Archive, LintOptions{SkipSchema: p.ValuesSchema})
		}
		if err != nil {
			// A chart that cannot be linted within the bounds is refused
			// whatever the level: nothing vouches for it.
			refuse(chartctl.RuleLint, "the chart could not be linted: %v", err)
		}
		var errs []string
		for _, m := range msgs {
			text := m.Message
			if m.Path != "" {
				text = m.Path + ": " + text
			}
			switch m.Severity {
			case "error":
				if p.Lint == chartctl.LintError {
					errs = append(errs, text)
				} else {
					res.Findings = append(res.Findings, chartctl.Finding{Rule: chartctl.RuleLint, Severity: "warning", Message: text})
				}
			case "warning":
				res.Findings = append(res.Findings, chartctl.Finding{Rule: chartctl.RuleLint, Severity: "warning", Message: text})
			}
		}
		if len(errs) > 0 {
			refuse(chartctl.RuleLint, "%s", strings.Join(errs, "; "))
		}
	}
	if !chartctl.SatisfiesSignature(p.RequireSignature, in.Verification) {
		msg := "the chart has no verified signature"
		if p.RequireSignature != chartctl.SignatureAny {
			msg = fmt.Sprintf("the chart has no signature verified by trust entry %q", p.RequireSignature)
		}
		res.Unsigned = &chartctl.Violation{Rule: chartctl.RuleRequireSignature, Message: msg}
	}
	return res, nil
}

// Refusal returns the error refusing a chart of repo for res, nil if res
// refuses nothing. held says the unsigned chart is held instead of
// refused.
func (res *Result) Refusal(repo string, held bool) error {
	vs := append([]chartctl.Violation(nil), res.Violations...)
	if res.Unsigned != nil && !held {
		vs = append(vs, *res.Unsigned)
	}
	if len(vs) == 0 {
		return nil
	}
	return &chartctl.PolicyViolation{Repository: repo, Violations: vs}
}

func missingFields(md *chart.Metadata, fields []string) []string {
	var missing []string
	for _, f := range fields {
		set := true
		switch f {
		case "description":
			set = md.Description != ""
		case "home":
			set = md.Home != ""
		case "icon":
			set = md.Icon != ""
		case "keywords":
			set = len(md.Keywords) > 0
		case "kubeVersion":
			set = md.KubeVersion != ""
		case "license":
			set = md.Annotations["artifacthub.io/license"] != ""
		case "maintainers":
			set = len(md.Maintainers) > 0
		case "sources":
			set = len(md.Sources) > 0
		case "appVersion":
			set = md.AppVersion != ""
		}
		if !set {
			missing = append(missing, f)
		}
	}
	return missing
}

// unpinnedImages lists the images of the artifacthub.io/images annotation
// not referenced by digest.
func unpinnedImages(md *chart.Metadata) []string {
	raw := md.Annotations["artifacthub.io/images"]
	if raw == "" {
		return nil
	}
	var imgs []struct {
		Image string `json:"image"`
	}
	if err := yaml.Unmarshal([]byte(raw), &imgs); err != nil {
		return []string{"(the artifacthub.io/images annotation is not a YAML list)"}
	}
	var out []string
	for _, im := range imgs {
		if !strings.Contains(im.Image, "@sha256:") && !strings.Contains(im.Image, "@sha512:") {
			out = append(out, im.Image)
		}
	}
	return out
}

type chartFiles struct {
	paths          []string
	values, schema []byte
}

func readFiles(archive []byte, lim chart.Limits) (*chartFiles, error) {
	out := &chartFiles{}
	_, err := chart.Walk(bytes.NewReader(archive), lim, func(p string, size int64, content io.Reader) error {
		out.paths = append(out.paths, p)
		var err error
		switch p {
		case "values.yaml":
			out.values, err = io.ReadAll(content)
		case "values.schema.json":
			out.schema, err = io.ReadAll(content)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read chart files: %w", err)
	}
	return out, nil
}

// MatchDenied reports whether the chart file at rel (relative to the
// chart's root) matches glob: a glob without "/" matches a base name
// anywhere, one with "/" the whole relative path.
func MatchDenied(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(rel))
		return ok
	}
	ok, _ := path.Match(strings.TrimPrefix(glob, "/"), rel)
	return ok
}

func deniedFiles(paths, globs []string) []string {
	var out []string
	for _, p := range paths {
		for _, g := range globs {
			if MatchDenied(g, p) {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkValuesSchema returns why values.schema.json is not a valid JSON
// Schema or values.yaml does not satisfy it, "" when both hold.
func checkValuesSchema(schema, values []byte) string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return "values.schema.json is not valid JSON: " + firstLine(err.Error())
	}
	c := jsonschema.NewCompiler()
	// A chart's schema may not reach out: references resolve only inside
	// the document.
	c.UseLoader(noLoader{})
	if err := c.AddResource("values.schema.json", doc); err != nil {
		return "values.schema.json: " + firstLine(err.Error())
	}
	sch, err := c.Compile("values.schema.json")
	if err != nil {
		return "values.schema.json is not a valid JSON Schema: " + firstLine(err.Error())
	}
	var vals any = map[string]any{}
	if len(bytes.TrimSpace(values)) > 0 {
		js, err := yaml.YAMLToJSON(values)
		if err != nil {
			return "values.yaml is not valid YAML: " + firstLine(err.Error())
		}
		if vals, err = jsonschema.UnmarshalJSON(bytes.NewReader(js)); err != nil {
			return "values.yaml: " + firstLine(err.Error())
		}
		if vals == nil {
			vals = map[string]any{}
		}
	}
	if err := sch.Validate(vals); err != nil {
		return "the default values do not satisfy values.schema.json: " + strings.Join(strings.Fields(err.Error()), " ")
	}
	return ""
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not followed (%s)", url)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
