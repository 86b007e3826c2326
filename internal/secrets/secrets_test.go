package secrets

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpenAndDerive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	a, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("generated key file: %v %v", fi, err)
	}
	b, err := Load(path, false) // another replica with the same key file
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := a.Seal([]byte("webhook secret"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(sealed); err != nil || string(got) != "webhook secret" {
		t.Fatalf("open with the same key: %q %v", got, err)
	}
	other, err := New([]byte("another deployment's key material, 32+ bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(sealed); err == nil {
		t.Fatal("opened with another key")
	}

	k := a.Derive("oci upload sessions")
	if len(k) != 32 || !bytes.Equal(k, b.Derive("oci upload sessions")) {
		t.Fatalf("the same key file derives different keys: %x %x", k, b.Derive("oci upload sessions"))
	}
	if bytes.Equal(k, a.Derive("another purpose")) || bytes.Equal(k, other.Derive("oci upload sessions")) || bytes.Equal(k, a.key[:]) {
		t.Fatal("derived keys are not distinct")
	}
	if _, err := New([]byte("short")); err == nil {
		t.Fatal("a short key was accepted")
	}
}
