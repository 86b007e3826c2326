// Package helmlint lints chart archives with Helm's own lint rules. It
// pulls Helm's template engine and Kubernetes client libraries, so only
// the separate chartctl-lint binary (and tests) import it: chartctl's own
// binary stays free of them, and runs chartctl-lint as a bounded child
// process (admission.Subprocess, decision 9).
package helmlint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
)

// LintArchive lints a chart archive with Helm's lint rules in this
// process: it unpacks the chart into a temporary directory (chart.Walk
// refuses paths escaping it) and runs lint.RunAll on it. It is unbounded:
// call it in a child process (Subprocess, RunLintChild).
func LintArchive(archive []byte, lim chart.Limits) ([]admission.LintMessage, error) {
	dir, err := os.MkdirTemp("", "chartctl-lint-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ch, err := chart.Walk(bytes.NewReader(archive), lim, func(p string, _ int64, content io.Reader) error {
		dst := filepath.Join(dir, "chart", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("unpack the chart: %w", err)
	}
	_ = ch
	res := lint.RunAll(filepath.Join(dir, "chart"), nil, "default")
	var out []admission.LintMessage
	for _, m := range res.Messages {
		sev := ""
		switch m.Severity {
		case support.ErrorSev:
			sev = "error"
		case support.WarningSev:
			sev = "warning"
		case support.InfoSev:
			sev = "info"
		default:
			continue
		}
		msg := ""
		if m.Err != nil {
			msg = m.Err.Error()
		}
		// Messages name the temporary directory; the chart's root is what
		// a person knows.
		msg = string(bytes.ReplaceAll([]byte(msg), []byte(filepath.Join(dir, "chart")+string(filepath.Separator)), nil))
		out = append(out, admission.LintMessage{Severity: sev, Path: m.Path, Message: msg})
	}
	return out, nil
}

// RunLintChild is the child side of Subprocess: it limits its own address
// space as LintChildEnv says, lints the archive read from in and writes
// the answer to out.
func RunLintChild(in io.Reader, out io.Writer, lim chart.Limits) error {
	if v := os.Getenv(admission.LintChildEnv); v != "" {
		var n uint64
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				return fmt.Errorf("limit memory: %w", err)
			}
		}
	}
	archive, err := io.ReadAll(io.LimitReader(in, 1<<30))
	if err != nil {
		return err
	}
	msgs, lerr := LintArchive(archive, lim)
	ans := struct {
		Messages []admission.LintMessage `json:"messages"`
		Error    string                  `json:"error,omitempty"`
	}{Messages: msgs}
	if lerr != nil {
		ans.Error = lerr.Error()
	}
	b, _ := json.Marshal(ans)
	_, err = out.Write(b)
	return err
}

// InProcess returns a Linter that lints in this process with only a time
// bound: for tests and tools, never for a server taking untrusted charts.
func InProcess(lim chart.Limits) admission.Linter {
	return func(ctx context.Context, archive []byte) ([]admission.LintMessage, error) {
		return LintArchive(archive, lim)
	}
}
