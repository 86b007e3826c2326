package serve

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/atomicfile"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// InitialAdminFile is the name, inside the data directory, of the file
// holding the first admin's credentials.
const InitialAdminFile = "initial-admin.json"

// InitialAdmin is the content of initial-admin.json.
type InitialAdmin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	APIKey   string `json:"api_key"`
}

// adminPassword returns the first admin's password from
// --admin-password-file or CHARTCTL_ADMIN_PASSWORD, "" when neither is set.
func adminPassword(cfg *Config, getenv func(string) string) (string, error) {
	pw := ""
	if cfg.AdminPasswordFile != "" {
		b, err := os.ReadFile(cfg.AdminPasswordFile)
		if err != nil {
			return "", fmt.Errorf("read --admin-password-file: %w", err)
		}
		pw = strings.TrimRight(string(b), "\r\n")
	} else if getenv != nil {
		pw = getenv("CHARTCTL_ADMIN_PASSWORD")
	}
	if pw != "" && (len(pw) < 8 || len(pw) > 72) {
		return "", fmt.Errorf("the admin password from --admin-password-file or CHARTCTL_ADMIN_PASSWORD must be 8 to 72 characters")
	}
	return pw, nil
}

// bootstrapAdmin creates the admin user on first start (an empty store).
// With a password given (adminPassword), the admin gets it and nothing
// else: no API key, no file, as read-only or replicated deployments need.
// Otherwise it creates an all-scope API key too and writes both to
// DATA/initial-admin.json (0600). It logs the file's path, never the
// secrets.
func bootstrapAdmin(ctx context.Context, store chartctl.Store, cfg *Config, getenv func(string) string, logger *slog.Logger) error {
	n, err := store.UserCount(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	email, err := app.ValidateEmail(cfg.AdminEmail)
	if err != nil {
		return fmt.Errorf("invalid --admin-email %q", cfg.AdminEmail)
	}
	given, err := adminPassword(cfg, getenv)
	if err != nil {
		return err
	}
	if given != "" {
		hash, err := app.HashPassword(given)
		if err != nil {
			return err
		}
		err = store.CreateUser(ctx, &chartctl.User{Email: email, PasswordHash: hash, Admin: true})
		if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
			// Another replica on the same database started at the same
			// time and created the admin, with the same password.
			logger.Info("the admin user was created by another replica starting at the same time", "email", email)
			return nil
		}
		if err != nil {
			return err
		}
		logger.Info("created the admin user with the given password", "email", email)
		return nil
	}
	var pw [18]byte
	if _, err := rand.Read(pw[:]); err != nil {
		return err
	}
	password := base64.RawURLEncoding.EncodeToString(pw[:])
	hash, err := app.HashPassword(password)
	if err != nil {
		return err
	}
	key, keyHash := token.New(token.APIKeyPrefix)
	// Write the file first: if it cannot be written, nothing is created and
	// the next start tries again.
	path := filepath.Join(cfg.Data, InitialAdminFile)
	b, _ := json.MarshalIndent(InitialAdmin{Email: email, Password: password, APIKey: key}, "", "  ")
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	u := &chartctl.User{Email: email, PasswordHash: hash, Admin: true}
	if err := store.CreateUser(ctx, u); chartctl.ErrorCode(err) == chartctl.ECONFLICT {
		// Another replica on the same database started at the same time
		// and created the admin: its credentials are in its data
		// directory, and this file's would not work.
		_ = os.Remove(path)
		logger.Info("the admin user was created by another replica starting at the same time; its credentials are in that replica's " + InitialAdminFile)
		return nil
	} else if err != nil {
		_ = os.Remove(path)
		return err
	}
	k := &chartctl.APIKey{UserID: u.ID, Name: "initial admin key", Scopes: chartctl.AllScopes, Hash: keyHash}
	if err := store.CreateAPIKey(ctx, k); err != nil {
		return err
	}
	logger.Info("created the admin user; its password and API key are in "+path, "email", email, "file", path)
	return nil
}
