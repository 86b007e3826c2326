// Package edit implements `chartctl repo edit`.
package edit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/repo/create"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// EditOptions are the inputs of `repo edit`; nil fields stay as they are.
type EditOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name        string
	Description *string
	Visibility  *string
	IndexFormat *string
}

// NewCmdEdit returns the `repo edit` command; runF replaces the run
// function in tests.
func NewCmdEdit(f *cmdutil.Factory, runF func(*EditOptions) error) *cobra.Command {
	opts := &EditOptions{IO: f.IOStreams, Client: f.Client}
	var description, visibility, indexFormat string
	cmd := &cobra.Command{
		Use:   "edit NAME [--description D] [--visibility V] [--index-format F]",
		Short: "Change a repository's description, visibility or index format",
		Long: `Change the settings of a repository you maintain; what you do not give
stays as it is. --visibility private keeps the repository to its
organization and those granted a role, internal opens it to every signed-in
user of the server, public also to anonymous Helm clients. An empty
--description "" removes the description. --index-format json serves
index.yaml as JSON, which every Helm reads and Helm 3.13+ loads several
times faster; yaml serves it as Helm itself writes it.`,
		Example: `  chartctl repo edit stable --visibility internal
  chartctl repo edit stable --description "Stable charts, reviewed"
  chartctl repo edit stable --index-format json`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if cmd.Flags().Changed("description") {
				opts.Description = &description
			}
			if cmd.Flags().Changed("visibility") {
				if !slices.Contains(create.Visibilities, visibility) {
					return cmdutil.FlagErrorf("invalid --visibility %q: want %s", visibility, strings.Join(create.Visibilities, ", "))
				}
				opts.Visibility = &visibility
			}
			if cmd.Flags().Changed("index-format") {
				if !slices.Contains(create.IndexFormats, indexFormat) {
					return cmdutil.FlagErrorf("invalid --index-format %q: want %s", indexFormat, strings.Join(create.IndexFormats, ", "))
				}
				opts.IndexFormat = &indexFormat
			}
			if opts.Description == nil && opts.Visibility == nil && opts.IndexFormat == nil {
				return cmdutil.FlagErrorf("nothing to change: give --description, --visibility or --index-format")
			}
			if runF != nil {
				return runF(opts)
			}
			return editRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&description, "description", "d", "", "new description (\"\" removes it)")
	cmd.Flags().StringVar(&visibility, "visibility", "", "who reads the repository: "+strings.Join(create.Visibilities, ", "))
	_ = cmd.RegisterFlagCompletionFunc("visibility", cobra.FixedCompletions(create.Visibilities, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVar(&indexFormat, "index-format", "", "index.yaml format: "+strings.Join(create.IndexFormats, " or "))
	_ = cmd.RegisterFlagCompletionFunc("index-format", cobra.FixedCompletions(create.IndexFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func editRun(ctx context.Context, opts *EditOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	repo, _, err := c.Repositories.Update(ctx, opts.Name, &client.UpdateRepositoryRequest{Description: opts.Description, Visibility: opts.Visibility, IndexFormat: opts.IndexFormat})
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("edit repository %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, repo)
	}
	cs := opts.IO.ColorScheme()
	_, err = fmt.Fprintf(opts.IO.Out, "%s Updated %s repository %s\n", cs.SuccessIcon(),
		termtext.Line(repo.Visibility), cs.Bold(termtext.Line(repo.Name)))
	return err
}
