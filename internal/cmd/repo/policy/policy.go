// Package policy groups the `chartctl repo policy` commands.
package policy

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/repo/policy/get"
	"github.com/chartctl/chartctl/internal/cmd/repo/policy/set"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdPolicy returns the `repo policy` command group.
func NewCmdPolicy(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy <command>",
		Short: "Show and set a repository's admission policy",
		Long: `An admission policy decides which charts a repository takes, on every way
a chart enters (chartctl chart push, helm cm-push, helm push oci://,
mirror syncs): a refused chart is stored nowhere and the error names
every rule it broke. An organization's policy is a floor its
repositories can only tighten. Try a chart against it with
chartctl chart check PATH --repo REPOSITORY.`,
		Example: `  chartctl repo policy set prod-charts --require-signature any --lint error --values-schema --no-prerelease
  chartctl repo policy get prod-charts`,
	}
	cmd.AddCommand(get.NewCmdGet(f, nil), set.NewCmdSet(f, nil))
	return cmd
}
