package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/chartctl/chartctl/internal/chart"
)

// Bounds of a lint run in a child process (decision 9).
const (
	// DefaultLintTimeout is how long a chart's lint may take.
	DefaultLintTimeout = 20 * time.Second
	// DefaultLintMemory caps the child's address space. Go reserves
	// address space generously, so this is well above the heap a lint
	// of an ordinary chart needs.
	DefaultLintMemory = 2 << 30
)

// LintChildEnv, set in a child's environment, carries its address-space
// limit in bytes.
const LintChildEnv = "CHARTCTL_LINT_MEMORY"

// LintArchive lints a chart archive with Helm's lint rules in this
// process: it unpacks the chart into a temporary directory (chart.Walk
// refuses paths escaping it) and runs lint.RunAll on it. It is unbounded:
// call it in a child process (Subprocess, RunLintChild).
func LintArchive(archive []byte, lim chart.Limits) ([]LintMessage, error) {
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
	var out []LintMessage
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
		out = append(out, LintMessage{Severity: sev, Path: m.Path, Message: msg})
	}
	return out, nil
}

// Subprocess returns a Linter that runs args (the chartctl binary and its
// hidden lint command, say) as a child process per chart, the archive on
// its standard input, killed past timeout and limited to memory bytes of
// address space (decision 9).
func Subprocess(args []string, timeout time.Duration, memory int64) Linter {
	return func(ctx context.Context, archive []byte) ([]LintMessage, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdin = bytes.NewReader(archive)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", LintChildEnv, memory), "GOMAXPROCS=1")
		err := cmd.Run()
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("linting took longer than %s", timeout)
		}
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("linting stopped: it passed the memory bound of %d MiB or failed (exit status %d)", memory>>20, ee.ExitCode())
			}
			return nil, fmt.Errorf("run the linter: %w", err)
		}
		var out struct {
			Messages []LintMessage `json:"messages"`
			Error    string        `json:"error"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			return nil, fmt.Errorf("read the linter's answer: %w", err)
		}
		if out.Error != "" {
			return nil, errors.New(out.Error)
		}
		return out.Messages, nil
	}
}

// RunLintChild is the child side of Subprocess: it limits its own address
// space as LintChildEnv says, lints the archive read from in and writes
// the answer to out.
func RunLintChild(in io.Reader, out io.Writer, lim chart.Limits) error {
	if v := os.Getenv(LintChildEnv); v != "" {
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
	_, err = out.Write(encodeLint(msgs, lerr))
	return err
}

// InProcess returns a Linter that lints in this process with only a time
// bound: for tests and tools, never for a server taking untrusted charts.
func InProcess(lim chart.Limits) Linter {
	return func(ctx context.Context, archive []byte) ([]LintMessage, error) {
		return LintArchive(archive, lim)
	}
}
