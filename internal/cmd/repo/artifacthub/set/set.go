// Package set implements `chartctl repo artifacthub set`.
package set

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// maxFile bounds the file read, as the server bounds the body.
const maxFile = 1 << 20

// SetOptions are the inputs of `repo artifacthub set`.
type SetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Repo   string
	// File is the artifacthub-repo.yml to send as it is ("-" for
	// standard input), "" when the flags build the metadata.
	File string
	// Meta is what the flags build (Clear: the empty document).
	Meta  client.ArtifactHubRepo
	Clear bool
}

// NewCmdSet returns the `repo artifacthub set` command.
func NewCmdSet(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IOStreams, Client: f.Client}
	var owners, ignores []string
	cmd := &cobra.Command{
		Use:   "set REPOSITORY [FILE | -]",
		Short: "Replace a repository's artifacthub-repo.yml",
		Long: `Replace the repository's artifacthub-repo.yml with FILE as it is ("-"
reads standard input), or with the one the flags describe:
--repository-id is the ID of the Artifact Hub repository the charts are
published to (a UUID, shown in Artifact Hub's control panel);
--owner NAME=EMAIL (or NAME, or =EMAIL) may claim it; --ignore NAME or
NAME=VERSION_REGEXP leaves a chart (or some of its versions) out.
--clear removes the file. The server checks it against Artifact Hub's
schema and names what is wrong. Needs the repository's admin role.`,
		Example: `  chartctl repo artifacthub set public-charts artifacthub-repo.yml
  chartctl repo artifacthub set public-charts --repository-id 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab \
    --owner ada=ada@example.com --ignore internal-tool --ignore 'web=^0\.'
  chartctl repo artifacthub set public-charts --clear`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo = args[0]
			if len(args) == 2 {
				opts.File = args[1]
			}
			flagged := cmd.Flags().Changed("repository-id") || len(owners) > 0 || len(ignores) > 0
			switch {
			case opts.File != "" && (flagged || opts.Clear):
				return cmdutil.FlagErrorf("give a FILE or the flags, not both")
			case opts.Clear && flagged:
				return cmdutil.FlagErrorf("--clear removes the file: it takes no other flag")
			case opts.File == "" && !flagged && !opts.Clear:
				return cmdutil.FlagErrorf("give an artifacthub-repo.yml FILE, --repository-id, --owner or --ignore (or --clear to remove it)")
			}
			for _, o := range owners {
				name, email, _ := strings.Cut(o, "=")
				if name == "" && email == "" {
					return cmdutil.FlagErrorf("--owner %q: give NAME=EMAIL, NAME or =EMAIL", o)
				}
				opts.Meta.Owners = append(opts.Meta.Owners, client.ArtifactHubOwner{Name: name, Email: email})
			}
			for _, i := range ignores {
				name, version, _ := strings.Cut(i, "=")
				if name == "" {
					return cmdutil.FlagErrorf("--ignore %q: give a chart name, optionally =VERSION_REGEXP", i)
				}
				opts.Meta.Ignore = append(opts.Meta.Ignore, client.ArtifactHubIgnore{Name: name, Version: version})
			}
			if runF != nil {
				return runF(opts)
			}
			return setRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Meta.RepositoryID, "repository-id", "", "ID (a UUID) of the Artifact Hub repository the charts are published to")
	fl.StringArrayVar(&owners, "owner", nil, "owner who may claim the repository on Artifact Hub: NAME=EMAIL, NAME or =EMAIL (repeatable)")
	fl.StringArrayVar(&ignores, "ignore", nil, "chart Artifact Hub leaves out: NAME, or NAME=VERSION_REGEXP for some versions (repeatable)")
	fl.BoolVar(&opts.Clear, "clear", false, "remove the repository's artifacthub-repo.yml")
	return cmd
}

func setRun(cmd *cobra.Command, opts *SetOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	var meta *client.ArtifactHubRepo
	if opts.File != "" {
		var file []byte
		if file, err = readFile(opts.IO, opts.File); err != nil {
			return err
		}
		meta, _, err = c.Repositories.SetArtifactHubYAML(cmd.Context(), opts.Repo, file)
	} else {
		meta, _, err = c.Repositories.SetArtifactHub(cmd.Context(), opts.Repo, &opts.Meta)
	}
	if err != nil {
		return fmt.Errorf("set the artifacthub-repo.yml of %s: %w", opts.Repo, err)
	}
	if opts.Clear || (meta.RepositoryID == "" && len(meta.Owners) == 0 && len(meta.Ignore) == 0) {
		fmt.Fprintf(opts.IO.ErrOut, "Removed the artifacthub-repo.yml of %s.\n", opts.Repo)
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "Set the artifacthub-repo.yml of %s: Artifact Hub reads it at /helm/%s/artifacthub-repo.yml and as the artifacthub.io tag of each chart.\n", opts.Repo, opts.Repo)
	return nil
}

// readFile reads path ("-": standard input), at most 1 MiB.
func readFile(ios *iostreams.IOStreams, path string) ([]byte, error) {
	var r io.Reader = ios.In
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxFile {
		return nil, cmdutil.FlagErrorf("%s is larger than 1 MiB: an artifacthub-repo.yml is a few lines", path)
	}
	return b, nil
}
