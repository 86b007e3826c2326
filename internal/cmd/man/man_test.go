package man_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/man"
)

func TestGenerate(t *testing.T) {
	root := &cobra.Command{Use: "chartctl", Short: "chart repositories"}
	serve := &cobra.Command{Use: "serve", Short: "Run the server", Run: func(*cobra.Command, []string) {}}
	serve.Flags().String("config", "", "YAML configuration file")
	root.AddCommand(serve, man.NewCmdMan())
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	root.SetArgs([]string{"man", dir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "chartctl-serve.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "CHARTCTL" "1" "Nov 2023"`, `\fB--config\fP`, "Run the server"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("chartctl-serve.1 lacks %q:\n%s", want, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "chartctl-man.1")); err == nil {
		t.Error("the hidden man command got a page")
	}
	if _, err := os.Stat(filepath.Join(dir, "chartctl.1")); err != nil {
		t.Error(err)
	}
}
