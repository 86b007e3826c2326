// Package helmlint lints chart archives with Helm's own lint rules. It
// pulls Helm's template engine and Kubernetes client libraries, so only
// the separate chartctl-lint binary (and tests) import it: chartctl's own
// binary stays free of them, and runs chartctl-lint as a bounded child
// process (admission.Pooled, decision 9).
package helmlint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/sandbox"
)

// LintArchive lints a chart archive with Helm's lint rules in this
// process: it unpacks the chart into a scratch directory (chart.Walk
// refuses paths escaping it) and runs lint.RunAll on it. Helm's lint
// rules read the chart from a directory (each rule loads it anew), so the
// archive cannot be linted from memory; the scratch directory is on a
// memory file system where there is one (sandbox.ScratchDir). It is unbounded:
// call it in a child process (admission.Pooled, RunLintChild).
func LintArchive(archive []byte, lim chart.Limits, opt admission.LintOptions) ([]admission.LintMessage, error) {
	return lintIn(sandbox.ScratchDir(), archive, lim, opt)
}

// lintIn lints archive unpacked into a new directory under root.
func lintIn(root string, archive []byte, lim chart.Limits, opt admission.LintOptions) ([]admission.LintMessage, error) {
	dir, err := mkScratch(root)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	_, err = chart.Walk(bytes.NewReader(archive), lim, func(p string, _ int64, content io.Reader) error {
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
	res := lint.RunAll(filepath.Join(dir, "chart"), nil, "default", lint.WithSkipSchemaValidation(opt.SkipSchema))
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
		root := filepath.Join(dir, "chart")
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, root+string(filepath.Separator), ""), root, ".")
		// Some rules (dependencies) give the chart's directory as the
		// path: it names no file of the chart, and the scratch directory
		// is the server's business.
		p := m.Path
		if rel, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) {
			p = filepath.ToSlash(rel)
			if p == "." {
				p = ""
			}
		}
		out = append(out, admission.LintMessage{Severity: sev, Path: p, Message: msg})
	}
	return out, nil
}

func mkScratch(root string) (string, error) {
	dir, err := os.MkdirTemp(root, "chartctl-lint-")
	if err != nil {
		// A memory file system that is full or refuses us: the disk
		// still works, only slower.
		if dir, err = os.MkdirTemp("", "chartctl-lint-"); err != nil {
			return "", fmt.Errorf("make a scratch directory: %w", err)
		}
	}
	return dir, nil
}

// RunLintChild is the one-shot child (chartctl-lint with no argument): it
// limits its own address space as admission.LintChildEnv says, lints the
// archive read from in with all of Helm's rules and writes the answer to
// out.
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
	b, err := json.Marshal(Lint(archive, lim, admission.LintOptions{}))
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// Lint lints archive and returns the answer a lint child gives.
func Lint(archive []byte, lim chart.Limits, opt admission.LintOptions) admission.LintAnswer {
	msgs, err := LintArchive(archive, lim, opt)
	ans := admission.LintAnswer{Messages: msgs}
	if err != nil {
		ans.Error = err.Error()
	}
	return ans
}

// Handle is the lint mode of a sandbox worker (chartctl-lint serve): it
// unpacks charts under a scratch directory of the worker's own, which
// the pool removes when the worker has ended (sandbox.WorkerScratch).
func Handle(lim chart.Limits) sandbox.Handler {
	root := sandbox.WorkerScratch()
	return func(req sandbox.Request, archive []byte) ([]byte, error) {
		msgs, err := lintIn(root, archive, lim, admission.LintOptions{SkipSchema: req.Has(admission.SkipSchemaFlag)})
		ans := admission.LintAnswer{Messages: msgs}
		if err != nil {
			ans.Error = err.Error()
		}
		return json.Marshal(ans)
	}
}

// InProcess returns a Linter that lints in this process with no bounds:
// for tests and tools, never for a server taking untrusted charts.
func InProcess(lim chart.Limits) admission.Linter {
	return func(ctx context.Context, archive []byte, opt admission.LintOptions) ([]admission.LintMessage, error) {
		return LintArchive(archive, lim, opt)
	}
}
