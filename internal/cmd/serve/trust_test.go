package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestSigstoreTrustedRootSetting: --sigstore-trusted-root comes from the
// flag, CHARTCTL_SIGSTORE_TRUSTED_ROOT and the config file alike; the
// file is read with sigstore-go, and one that is missing or is not a
// trusted root stops the start with a message saying what to give.
func TestSigstoreTrustedRootSetting(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(file, testkit.NewSigstore(t).TrustedRootJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"flag":        {[]string{"--sigstore-trusted-root", file}, nil},
		"environment": {nil, map[string]string{"CHARTCTL_SIGSTORE_TRUSTED_ROOT": file}},
		"config file": {[]string{"--config", writeConfig(t, "sigstore-trusted-root: "+file+"\n")}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			o, _, err := runServeCmd(t, c.args, c.env)
			if err != nil {
				t.Fatal(err)
			}
			if o.Config.SigstoreTrustedRoot != file {
				t.Fatalf("SigstoreTrustedRoot = %q", o.Config.SigstoreTrustedRoot)
			}
			tr, err := LoadTrustedRoot(o.Config.SigstoreTrustedRoot)
			if err != nil || tr == nil || len(tr.FulcioCertificateAuthorities()) != 1 {
				t.Fatalf("LoadTrustedRoot: %v %v", tr, err)
			}
		})
	}

	if tr, err := LoadTrustedRoot(""); tr != nil || err != nil {
		t.Fatalf("no file: %v %v", tr, err)
	}
	notRoot := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(notRoot, []byte(`{"mediaType":"application/json"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		notRoot: "is not a Sigstore trusted root",
		filepath.Join(t.TempDir(), "missing.json"): "read --sigstore-trusted-root",
	} {
		if _, err := LoadTrustedRoot(file); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTrustedRoot(%s) = %v, want an error saying %q", filepath.Base(file), err, want)
		}
	}
}
