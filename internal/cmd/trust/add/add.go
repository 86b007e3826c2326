// Package add implements `chartctl trust add`.
package add

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// AddOptions are the inputs of `trust add`.
type AddOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name    string
	Repo    string
	Org     string
	Request client.TrustRequest
}

// NewCmdAdd returns the `trust add` command.
func NewCmdAdd(f *cmdutil.Factory, runF func(*AddOptions) error) *cobra.Command {
	opts := &AddOptions{IO: f.IOStreams, Client: f.Client}
	var pgp, cosignKey, issuer, subject, notationCert, notationSubject string
	cmd := &cobra.Command{
		Use:   "add NAME (--repo R | --org O) (--pgp-keyring FILE | --cosign-key FILE | --cosign-issuer URL --cosign-subject REGEXP | --notation-cert FILE [--notation-subject DN])",
		Short: "Trust a key or identity for a repository's or organization's charts",
		Long: `Add trust material: chart versions whose signatures verify against it show
as verified (chartctl chart view), and their index.yaml entries name the
signer. Stored versions are re-verified in the background.

--pgp-keyring takes an armored or binary OpenPGP public keyring (gpg --export)
for Helm provenance files; --cosign-key a cosign public key (PEM);
--cosign-issuer with --cosign-subject a keyless signer (the subject is a
regular expression matched in full); --notation-cert PEM root certificates,
with --notation-subject the x509 subject its signers' certificates must
include (Notation's trusted identity; default: any signer they certify).`,
		Example: `  chartctl trust add release --repo prod-charts --cosign-key cosign.pub
  chartctl trust add helm-signers --org acme --pgp-keyring pubring.gpg
  chartctl trust add ci --org acme --cosign-issuer https://token.actions.githubusercontent.com \
    --cosign-subject 'https://github.com/acme/charts/\.github/workflows/release\.yml@refs/heads/main'`,
		Args: cmdutil.ExactArgs(1, "the trust entry's name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if (opts.Repo == "") == (opts.Org == "") {
				return cmdutil.FlagErrorf("give exactly one of --repo REPOSITORY and --org ORGANIZATION")
			}
			n := 0
			for _, v := range []string{pgp, cosignKey, issuer + subject, notationCert} {
				if v != "" {
					n++
				}
			}
			if n != 1 {
				return cmdutil.FlagErrorf("give exactly one of --pgp-keyring, --cosign-key, --cosign-issuer with --cosign-subject, --notation-cert")
			}
			if notationSubject != "" && notationCert == "" {
				return cmdutil.FlagErrorf("--notation-subject goes with --notation-cert")
			}
			r := client.TrustRequest{Name: opts.Name}
			file := ""
			switch {
			case pgp != "":
				r.Kind, file = "pgp", pgp
			case cosignKey != "":
				r.Kind, file = "cosign-key", cosignKey
			case notationCert != "":
				r.Kind, file, r.Subject = "notation", notationCert, notationSubject
			default:
				if issuer == "" || subject == "" {
					return cmdutil.FlagErrorf("--cosign-issuer and --cosign-subject go together")
				}
				r.Kind, r.Issuer, r.Subject = "cosign-keyless", issuer, subject
			}
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return cmdutil.FlagErrorf("read %s: %v", file, err)
				}
				if utf8.Valid(b) {
					r.Key = string(b)
				} else {
					// A binary keyring travels base64.
					r.KeyBase64 = base64.StdEncoding.EncodeToString(b)
				}
			}
			opts.Request = r
			if runF != nil {
				return runF(opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "repository the material belongs to")
	cmd.Flags().StringVar(&opts.Org, "org", "", "organization the material belongs to")
	cmd.Flags().StringVar(&pgp, "pgp-keyring", "", "OpenPGP public keyring file, armored or binary (Helm provenance)")
	cmd.Flags().StringVar(&cosignKey, "cosign-key", "", "cosign public key file (PEM)")
	cmd.Flags().StringVar(&issuer, "cosign-issuer", "", "OIDC issuer URL of keyless cosign signers")
	cmd.Flags().StringVar(&subject, "cosign-subject", "", "regular expression the keyless signer's identity must match in full")
	cmd.Flags().StringVar(&notationCert, "notation-cert", "", "PEM root certificate(s) of Notation signers")
	cmd.Flags().StringVar(&notationSubject, "notation-subject", "", "x509 subject the Notation signers' certificates must include, e.g. 'C=US, ST=WA, O=Acme'")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func addRun(ctx context.Context, opts *AddOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	scope := client.TrustScope{Repository: opts.Repo, Organization: opts.Org}
	e, _, err := c.Trust.Add(ctx, scope, &opts.Request)
	if err != nil {
		return fmt.Errorf("add trust entry %s: %w", opts.Name, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, e)
	}
	where := "repository " + opts.Repo
	if opts.Org != "" {
		where = "organization " + opts.Org
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Added %s trust entry %s to %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(e.Kind), termtext.Line(e.Name), termtext.Line(where))
	return err
}
