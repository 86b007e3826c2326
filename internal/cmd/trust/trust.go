// Package trust groups the `chartctl trust` commands: the trust material
// signatures of chart versions are verified against (docs/trust.md).
package trust

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/trust/add"
	"github.com/chartctl/chartctl/internal/cmd/trust/list"
	"github.com/chartctl/chartctl/internal/cmd/trust/remove"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdTrust returns the `trust` command group.
func NewCmdTrust(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trust <command>",
		Short: "Manage the keys and identities chart signatures are verified against",
		Long: `Trust material belongs to a repository (--repo, its maintain role edits it)
or an organization (--org, its maintainers and owners edit it): OpenPGP
keyrings for Helm provenance files, cosign public keys, cosign keyless
identities and Notation root certificates. Every chart version's
verification (chartctl chart view) is computed against the material of its
repository, then its organization. See docs/trust.md.`,
		Example: `  chartctl trust add release --repo prod-charts --cosign-key cosign.pub
  chartctl trust add helm-signers --org acme --pgp-keyring pubring.gpg
  chartctl trust list --org acme
  chartctl trust remove release --repo prod-charts`,
	}
	cmd.AddCommand(add.NewCmdAdd(f, nil), list.NewCmdList(f, nil), remove.NewCmdRemove(f, nil))
	return cmd
}
