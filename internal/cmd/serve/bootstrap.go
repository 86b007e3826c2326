package serve

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"

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

// bootstrapAdmin creates the admin user and an all-scope API key on first
// start (an empty store) and writes them to DATA/initial-admin.json (0600).
// It logs the file's path, never the secrets.
func bootstrapAdmin(ctx context.Context, store chartctl.Store, cfg *Config, logger *slog.Logger) error {
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
	if err := store.CreateUser(ctx, u); err != nil {
		return err
	}
	k := &chartctl.APIKey{UserID: u.ID, Name: "initial admin key", Scopes: chartctl.AllScopes, Hash: keyHash}
	if err := store.CreateAPIKey(ctx, k); err != nil {
		return err
	}
	logger.Info("created the admin user; its password and API key are in "+path, "email", email, "file", path)
	return nil
}
