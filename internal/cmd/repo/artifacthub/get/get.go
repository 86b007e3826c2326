// Package get implements `chartctl repo artifacthub get`.
package get

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// GetOptions are the inputs of `repo artifacthub get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	// JSON is -o json: the metadata as JSON instead of the file.
	JSON bool
	Repo string
}

// NewCmdGet returns the `repo artifacthub get` command.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Client: f.Client}
	return &cobra.Command{
		Use:   "get REPOSITORY",
		Short: "Print a repository's artifacthub-repo.yml",
		Long: `Print the repository's artifacthub-repo.yml as Artifact Hub reads it, on a
terminal and in pipes alike (redirect it to a file to edit it); -o json
prints it as JSON. A repository without one prints {} and says so on
standard error.`,
		Example: `  chartctl repo artifacthub get public-charts
  chartctl repo artifacthub get public-charts > artifacthub-repo.yml`,
		Args: cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The file is the plain form on a terminal and in pipes:
			// JSON only when asked for.
			opts.Repo, opts.JSON = args[0], f.Flags.Output == cmdutil.OutputJSON
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			if opts.JSON {
				meta, _, err := c.Repositories.ArtifactHub(cmd.Context(), opts.Repo)
				if err != nil {
					return fmt.Errorf("get the artifacthub-repo.yml of %s: %w", opts.Repo, err)
				}
				return cmdutil.PrintJSON(opts.IO.Out, meta)
			}
			file, _, err := c.Repositories.ArtifactHubFile(cmd.Context(), opts.Repo)
			if err != nil {
				return fmt.Errorf("get the artifacthub-repo.yml of %s: %w", opts.Repo, err)
			}
			if string(file) == "{}\n" {
				fmt.Fprintf(opts.IO.ErrOut, "Repository %s has no artifacthub-repo.yml: set one with chartctl repo artifacthub set %s FILE.\n", opts.Repo, opts.Repo)
			}
			_, err = opts.IO.Out.Write(file)
			return err
		},
	}
}
