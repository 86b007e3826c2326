package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GPGSigner is a throwaway GnuPG home with one signing key, exported as
// the legacy keyrings `helm package --sign` and a pgp trust entry take.
type GPGSigner struct {
	// Name is the key's user ID.
	Name string
	// Secring and Pubring are the exported secret and public keyrings.
	Secring, Pubring string
}

// MustGPGSigner makes a signing key for uid with the real gpg
// (CHARTCTL_GPG, else gpg on PATH).
func MustGPGSigner(t *testing.T, uid string) *GPGSigner {
	t.Helper()
	gpg := Tool(t, "CHARTCTL_GPG", "gpg")
	home := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(gpg, append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	run("--quick-gen-key", uid, "rsa2048", "sign", "never")
	s := &GPGSigner{Name: uid, Secring: filepath.Join(home, "secring.gpg"), Pubring: filepath.Join(home, "pubring.gpg")}
	if err := os.WriteFile(s.Secring, run("--export-secret-keys"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Pubring, run("--export"), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// MustSignedChart packages a chart with `helm package --sign` (the real
// helm), checks with `helm verify` that the pair verifies, and returns the
// archive and its provenance file.
func MustSignedChart(t *testing.T, helm, name, version string, s *GPGSigner) (archive, prov []byte) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Join(src, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	chartYAML := "apiVersion: v2\nname: " + name + "\nversion: " + version + "\ndescription: A signed chart\n"
	if err := os.WriteFile(filepath.Join(src, "Chart.yaml"), []byte(chartYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	RunHelm(t, helm, dir, "package", "--sign", "--key", s.Name, "--keyring", s.Secring, "-d", dir, src)
	tgz := filepath.Join(dir, name+"-"+version+".tgz")
	archive, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	RunHelm(t, helm, dir, "verify", "--keyring", s.Pubring, tgz)
	if prov, err = os.ReadFile(tgz + ".prov"); err != nil {
		t.Fatal(err)
	}
	return archive, prov
}
