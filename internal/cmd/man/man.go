// Package man implements the hidden `chartctl man DIR`, which writes a man
// page per command (chartctl.1, chartctl-serve.1, …) with cobra's doc
// package. Release packaging runs it; the pages are installed under
// /usr/share/man/man1.
package man

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/chartctl/chartctl/internal/build"
)

// NewCmdMan returns the hidden `man` command.
func NewCmdMan() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the man pages of every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return Generate(cmd.Root(), args[0])
		},
	}
}

// Generate writes section-1 man pages of root and its commands into dir.
// The date is SOURCE_DATE_EPOCH when set, so packages are reproducible.
func Generate(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	date := time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid SOURCE_DATE_EPOCH %q", s)
		}
		date = time.Unix(secs, 0).UTC()
	}
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{
		Title:   "CHARTCTL",
		Section: "1",
		Source:  "chartctl " + build.Version,
		Manual:  "chartctl manual",
		Date:    &date,
	}
	return doc.GenManTree(root, header, dir)
}
