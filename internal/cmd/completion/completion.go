// Package completion implements `chartctl completion SHELL`.
package completion

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmdutil"
)

// Shells lists the shells completion scripts exist for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// NewCmdCompletion returns the `completion` command.
func NewCmdCompletion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "completion {bash|zsh|fish|powershell}",
		Short: "Print a shell completion script",
		Long: `Print the completion script of a shell. Repository and team names are
completed from the server you are signed in to.

Bash: add to ~/.bashrc
    eval "$(chartctl completion bash)"
Zsh: put the script on your $fpath as _chartctl
    chartctl completion zsh > "${fpath[1]}/_chartctl"
Fish:
    chartctl completion fish > ~/.config/fish/completions/chartctl.fish
PowerShell: add to your profile
    chartctl completion powershell | Out-String | Invoke-Expression`,
		ValidArgs:             Shells,
		Args:                  cmdutil.ExactArgs(1, "name a shell: bash, zsh, fish or powershell"),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Generate(cmd.Root(), args[0], f.IOStreams.Out)
		},
	}
}

// Generate writes the completion script of shell for root to w.
func Generate(root *cobra.Command, shell string, w io.Writer) error {
	var err error
	switch shell {
	case "bash":
		err = root.GenBashCompletionV2(w, true)
	case "zsh":
		err = root.GenZshCompletion(w)
	case "fish":
		err = root.GenFishCompletion(w, true)
	case "powershell":
		err = root.GenPowerShellCompletionWithDesc(w)
	default:
		return cmdutil.FlagErrorf("unsupported shell %q: want bash, zsh, fish or powershell", shell)
	}
	if err != nil {
		return fmt.Errorf("generate %s completion: %w", shell, err)
	}
	return nil
}
