package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditOffOnlyInBenchmarks: the audit log is mandatory for users, so
// no code but tests and benchmarks may turn it off
// (DisableAuditForBenchmark): not a flag, a configuration field or the
// serve command.
func TestAuditOffOnlyInBenchmarks(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".tools" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), ".DisableAuditForBenchmark(") {
			t.Errorf("%s turns the audit log off; only benchmarks may", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
