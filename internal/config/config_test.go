package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chartctl")
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.CurrentServer != "" {
		t.Fatalf("fresh config has server %q", c.CurrentServer)
	}
	c.CurrentServer = "https://charts.example.com"
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	c2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c2.CurrentServer != "https://charts.example.com" {
		t.Errorf("reloaded server %q", c2.CurrentServer)
	}
}

func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("corrupt config loaded without error")
	}
}

func TestDir(t *testing.T) {
	d, err := Dir(func(k string) string {
		if k == "CHARTCTL_CONFIG_DIR" {
			return "/tmp/x"
		}
		return ""
	})
	if err != nil || d != "/tmp/x" {
		t.Errorf("Dir = %q, %v", d, err)
	}
}
