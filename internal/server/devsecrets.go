package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"masthead/internal/auth"
	"masthead/internal/config"
)

// Files under the dev data folder that keep the generated secrets across runs.
const (
	devKeyFile  = "publishable_key"
	devJWKSFile = "jwt_keys.json"
)

// DevMediaDir is where `masthead dev` keeps bucket media under its data folder; the seed
// writes the demo images there.
const DevMediaDir = "media"

// PrepareDev fills what `masthead dev` does not ask for: the publishable key and JWT keys,
// unless cfg already has them (MASTHEAD_PUBLISHABLE_KEY / MASTHEAD_JWT_KEYS), are read from
// dir, or generated and stored there (mode 0600) on the first run, so tokens and the key stay
// valid across restarts; media lives in <dir>/media unless storage is configured.
func PrepareDev(dir string, cfg *config.Config) error {
	if cfg.StorageDir == "" && cfg.S3.Endpoint == "" {
		cfg.StorageDir = filepath.Join(dir, DevMediaDir)
	}
	if cfg.PublishableKey == "" {
		key, err := loadOrCreate(filepath.Join(dir, devKeyFile), func() ([]byte, error) {
			return []byte(auth.GeneratePublishableKey() + "\n"), nil
		})
		if err != nil {
			return err
		}
		cfg.PublishableKey = strings.TrimSpace(string(key))
	}
	if cfg.JWTKeys == "" {
		keys, err := loadOrCreate(filepath.Join(dir, devJWKSFile), auth.GenerateKeySet)
		if err != nil {
			return err
		}
		cfg.JWTKeys = string(keys)
	}
	return nil
}

func loadOrCreate(path string, generate func() ([]byte, error)) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("server: read %s: %w", path, err)
	}
	if b, err = generate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("server: write %s: %w", path, err)
	}
	return b, nil
}
