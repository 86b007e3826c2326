// Package set implements `chartctl repo policy set`.
package set

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/repo/policy/get"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// SetOptions are the inputs of `repo policy set`.
type SetOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	Repo   string
	Policy client.PolicyUpdate
}

// NewCmdSet returns the `repo policy set` command.
func NewCmdSet(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IOStreams, Client: f.Client}
	var (
		sig, hold, lint, pattern, maxSize string
		schema, noPre, monotonic, pinned  bool
		fields, deny                      []string
	)
	cmd := &cobra.Command{
		Use:   "set REPOSITORY",
		Short: "Replace a repository's admission policy",
		Long: `Replace the whole policy: rules not given take the organization's floor
(refusing nothing when it has none). A policy looser than the floor is
refused, naming each rule. Versions already stored are kept.

--require-signature is none, any or a trust entry's name; --hold-window
keeps unsigned versions waiting for their signature (0s refuses them at
once); --lint is off, warning (findings only) or error; --deny-files
globs without / match a base name anywhere.`,
		Example: `  chartctl repo policy set prod-charts --require-signature any --lint error --values-schema \
    --required-fields maintainers,sources --no-prerelease --monotonic-versions --images-pinned \
    --max-size 5MiB --deny-files '*.pem' --deny-files .env`,
		Args: cmdutil.ExactArgs(1, "a repository name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo = args[0]
			fl := cmd.Flags()
			p := &opts.Policy
			str := func(name string, v string, dst **string) {
				if fl.Changed(name) {
					*dst = &v
				}
			}
			boolean := func(name string, v bool, dst **bool) {
				if fl.Changed(name) {
					*dst = &v
				}
			}
			str("require-signature", sig, &p.RequireSignature)
			str("hold-window", hold, &p.HoldWindow)
			str("lint", lint, &p.Lint)
			str("name-pattern", pattern, &p.NamePattern)
			boolean("values-schema", schema, &p.ValuesSchema)
			boolean("monotonic-versions", monotonic, &p.MonotonicVersions)
			boolean("images-pinned", pinned, &p.ImagesPinned)
			if fl.Changed("no-prerelease") {
				allow := !noPre
				p.AllowPrerelease = &allow
			}
			if fl.Changed("required-fields") {
				p.RequiredFields = &fields
			}
			if fl.Changed("deny-files") {
				p.DenyFiles = &deny
			}
			if fl.Changed("max-size") {
				n, err := text.ParseBytes(maxSize)
				if err != nil || n < 0 {
					return cmdutil.FlagErrorf("invalid value %q for --max-size: want a size such as 5MiB, or 0 for no limit", maxSize)
				}
				p.MaxSize = &n
			}
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.Client()
			if err != nil {
				return err
			}
			out, _, err := c.Repositories.SetPolicy(cmd.Context(), opts.Repo, p)
			if err != nil {
				return fmt.Errorf("set the policy of %s: %w", opts.Repo, err)
			}
			if f.WantsJSON() {
				return cmdutil.PrintJSON(opts.IO.Out, out)
			}
			fmt.Fprintf(opts.IO.Out, "%s Set the admission policy of %s; try a chart against it with: chartctl chart check PATH --repo %s\n",
				opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Repo), termtext.Line(opts.Repo))
			get.Print(opts.IO, out.Effective)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&sig, "require-signature", "", "none, any, or the name of the trust entry that must have verified a signature")
	fs.StringVar(&hold, "hold-window", "", "how long an unsigned version waits, held, for its signature (e.g. 10m; 0s refuses it)")
	fs.StringVar(&lint, "lint", "", "Helm's lint rules: off, warning (record findings) or error (refuse lint errors)")
	fs.BoolVar(&schema, "values-schema", false, "require values.schema.json, where present, to be valid and the default values to satisfy it")
	fs.StringSliceVar(&fields, "required-fields", nil, "Chart.yaml fields that must be set (maintainers, sources, kubeVersion, license, …)")
	fs.StringVar(&pattern, "name-pattern", "", "regular expression chart names must match")
	fs.BoolVar(&noPre, "no-prerelease", false, "refuse SemVer pre-release versions")
	fs.BoolVar(&monotonic, "monotonic-versions", false, "refuse a version not greater than every stored version of its chart")
	fs.BoolVar(&pinned, "images-pinned", false, "require the images of the artifacthub.io/images annotation to be pinned by digest")
	fs.StringVar(&maxSize, "max-size", "", "largest chart archive accepted (e.g. 5MiB; 0 for no limit)")
	fs.StringArrayVar(&deny, "deny-files", nil, "glob of files a chart may not contain (repeatable; e.g. '*.pem')")
	return cmd
}
