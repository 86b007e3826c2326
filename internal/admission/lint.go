package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chartctl/chartctl/internal/sandbox"
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

// LintChildEnv, set in a one-shot child's environment, carries its
// address-space limit in bytes.
const LintChildEnv = "CHARTCTL_LINT_MEMORY"

// LintMode is the request mode of a lint in a sandbox worker
// (chartctl-lint serve), and SkipSchemaFlag its flag for LintOptions'
// SkipSchema.
const (
	LintMode       = "lint"
	SkipSchemaFlag = "skip-schema"
)

// LintOptions tune one lint.
type LintOptions struct {
	// SkipSchema leaves out Helm's validation of the values against
	// values.schema.json: the policy's values_schema rule has done it
	// (once, in the server) and would report it again.
	SkipSchema bool
}

// LintAnswer is what a lint child writes: the messages, or why the chart
// could not be linted.
type LintAnswer struct {
	Messages []LintMessage `json:"messages"`
	Error    string        `json:"error,omitempty"`
}

// Pooled returns a Linter that lints in pool's warm chartctl-lint workers
// (chartctl-lint serve), the archive sent over the worker's standard
// input: a lint past the pool's timeout or memory bound kills its worker
// and refuses the chart with the bound named (decision 9).
func Pooled(pool *sandbox.Pool) Linter {
	return func(ctx context.Context, archive []byte, opt LintOptions) ([]LintMessage, error) {
		req := sandbox.Request{Mode: LintMode}
		if opt.SkipSchema {
			req.Flags = append(req.Flags, SkipSchemaFlag)
		}
		b, err := pool.Do(ctx, req, archive)
		var ee *sandbox.ExitError
		switch {
		case errors.Is(err, sandbox.ErrTimeout):
			return nil, fmt.Errorf("linting took longer than %s", pool.Timeout())
		case errors.As(err, &ee):
			return nil, fmt.Errorf("linting stopped: it passed the memory bound of %d MiB or failed (exit status %d)", pool.Memory()>>20, ee.Code)
		case errors.Is(err, sandbox.ErrAnswerTooLarge):
			return nil, errors.New("the linter's answer is too large")
		case err != nil:
			return nil, fmt.Errorf("run the linter: %w", err)
		}
		var out LintAnswer
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("read the linter's answer: %w", err)
		}
		if out.Error != "" {
			return nil, errors.New(out.Error)
		}
		return out.Messages, nil
	}
}
