package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
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
