// Package get implements `chartctl repo policy get`.
package get

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// GetOptions are the inputs of `repo policy get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Repo   string
}

// NewCmdGet returns the `repo policy get` command.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:     "get REPOSITORY",
		Short:   "Show the admission policy a repository's charts meet",
		Long:    "Show the repository's effective admission policy: its own, tightened by its organization's floor.",
		Example: `  chartctl repo policy get prod-charts`,
		Args:    cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, opts.JSON = args[0], f.WantsJSON()
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			p, _, err := c.Repositories.Policy(cmd.Context(), opts.Repo)
			if err != nil {
				return fmt.Errorf("get the policy of %s: %w", opts.Repo, err)
			}
			if opts.JSON {
				return cmdutil.PrintJSON(opts.IO.Out, p)
			}
			Print(opts.IO, p.Effective)
			return nil
		},
	}
}

// Print writes a policy as "rule: value" lines.
func Print(io *iostreams.IOStreams, p client.Policy) {
	list := func(v []string) string {
		if len(v) == 0 {
			return "-"
		}
		return termtext.Line(strings.Join(v, ", "))
	}
	size := "no limit"
	if p.MaxSize > 0 {
		size = fmt.Sprintf("%d bytes", p.MaxSize)
	}
	pattern := p.NamePattern
	if pattern == "" {
		pattern = "-"
	}
	w := io.Out
	fmt.Fprintf(w, "require_signature:\t%s\n", termtext.Line(p.RequireSignature))
	fmt.Fprintf(w, "hold_window:\t%s\n", termtext.Line(p.HoldWindow))
	fmt.Fprintf(w, "lint:\t%s\n", termtext.Line(p.Lint))
	fmt.Fprintf(w, "values_schema:\t%t\n", p.ValuesSchema)
	fmt.Fprintf(w, "required_fields:\t%s\n", list(p.RequiredFields))
	fmt.Fprintf(w, "name_pattern:\t%s\n", termtext.Line(pattern))
	fmt.Fprintf(w, "allow_prerelease:\t%t\n", p.AllowPrerelease)
	fmt.Fprintf(w, "monotonic_versions:\t%t\n", p.MonotonicVersions)
	fmt.Fprintf(w, "images_pinned:\t%t\n", p.ImagesPinned)
	fmt.Fprintf(w, "max_size:\t%s\n", size)
	fmt.Fprintf(w, "deny_files:\t%s\n", list(p.DenyFiles))
}
