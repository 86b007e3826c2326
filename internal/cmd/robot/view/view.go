// Package view implements `chartctl robot view`.
package view

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/robot/list"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// ViewOptions are the inputs of `robot view`.
type ViewOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool
	Now    func() time.Time

	Name         string
	Organization string
}

// NewCmdView returns the `robot view` command; runF replaces the run
// function in tests.
func NewCmdView(f *cmdutil.Factory, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{IO: f.IOStreams, Client: f.Client, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "view NAME --org ORG",
		Short: "Show a robot account: its patterns, permissions, last use and expiry",
		Example: `  chartctl robot view ci-push --org acme
  chartctl robot view ci-push --org acme -o json`,
		Args: cmdutil.ExactArgs(1, "a robot name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
			}
			if runF != nil {
				return runF(opts)
			}
			return viewRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization of the robot (required)")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func viewRun(ctx context.Context, opts *ViewOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	r, _, err := c.Robots.Get(ctx, opts.Organization, opts.Name)
	if err != nil {
		hint := "To see the robots of " + opts.Organization + ", run: chartctl robot list --org " + opts.Organization
		return cmdutil.HintNotFound(fmt.Errorf("view robot %s in %s: %w", opts.Name, opts.Organization, err), hint)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, r)
	}
	now := opts.Now()
	cs := opts.IO.ColorScheme()
	w := opts.IO.Out
	// Times are absolute here: a view is read closely, and "expires in 3
	// months" hides the day a pipeline stops.
	at := func(p *time.Time, none string) string {
		if p == nil {
			return none
		}
		s := p.UTC().Format("2006-01-02 15:04:05 MST")
		if opts.IO.IsStdoutTTY() {
			s += " (" + cmdutil.FuzzyAgo(now, *p) + ")"
		}
		return s
	}
	fmt.Fprintf(w, "%s\n", cs.Bold(termtext.Line(r.Name)))
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n", termtext.Sanitize(r.Description))
	}
	fmt.Fprintln(w)
	status := list.Status(r, now)
	if status == "active" {
		status = cs.Green(status)
	} else {
		status = cs.Red(status)
	}
	createdBy := r.CreatedBy
	if createdBy == "" {
		createdBy = "(account deleted)"
	}
	fmt.Fprintf(w, "organization: %s\n", termtext.Line(r.Organization))
	fmt.Fprintf(w, "user name:    %s\n", cmdutil.ShellQuote(termtext.Line(r.UserName)))
	fmt.Fprintf(w, "repositories: %s\n", termtext.Line(strings.Join(r.Repositories, " ")))
	fmt.Fprintf(w, "permissions:  %s\n", termtext.Line(strings.Join(r.Permissions, ",")))
	fmt.Fprintf(w, "status:       %s\n", status)
	fmt.Fprintf(w, "last used:    %s\n", at(r.LastUsedAt, "never"))
	fmt.Fprintf(w, "expires:      %s\n", at(r.ExpiresAt, "never"))
	fmt.Fprintf(w, "created:      %s by %s\n", at(&r.CreatedAt, ""), termtext.Line(createdBy))
	return nil
}
