// Package config reads and writes the command line's per-user settings:
// which server the user is signed in to. Credentials are not kept here but
// in the keyring (see package keyring).
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/chartctl/chartctl/internal/atomicfile"
)

// FileName is the name of the settings file in the config directory.
const FileName = "config.json"

// Dir returns the per-user configuration directory of chartctl:
// $CHARTCTL_CONFIG_DIR when set, else chartctl/ under the operating
// system's user config directory (on Linux $XDG_CONFIG_HOME or ~/.config).
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("CHARTCTL_CONFIG_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory: %w", err)
	}
	return filepath.Join(base, "chartctl"), nil
}

// Config is the content of the settings file.
type Config struct {
	// CurrentServer is the server the user last signed in to, used when
	// neither --server nor CHARTCTL_SERVER names one.
	CurrentServer string `json:"current_server,omitempty"`

	path string
}

// Load reads the settings file in dir; a missing file is an empty Config.
func Load(dir string) (*Config, error) {
	c := &Config{path: filepath.Join(dir, FileName)}
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("read config %s: %w", c.path, err)
	}
	return c, nil
}

// Path returns the settings file's path.
func (c *Config) Path() string { return c.path }

// Save writes the settings file, creating its directory (mode 0700).
func (c *Config) Save() error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	return atomicfile.Write(c.path, append(b, '\n'), 0o600)
}
