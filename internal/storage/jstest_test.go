package storage

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"masthead/internal/nodetest"
)

// TestSupabaseJSStorage runs jstest/storage.test.js: every operation of supabase-js's storage
// client (supabase.storage.from('media')) against this package's handler on a fresh database,
// as members of both projects and as anon, refusals included.
func TestSupabaseJSStorage(t *testing.T) {
	t.Parallel()
	ev := newDiskEnv(t)
	fx, err := json.Marshal(map[string]any{
		"url": ev.srv.URL, "key": ev.key, "tokens": ev.tokens,
		"png":  base64.StdEncoding.EncodeToString(ev.png),
		"jpeg": base64.StdEncoding.EncodeToString(jpegBytes(t, 16, 12)),
	})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "jstest", "@supabase/supabase-js", "storage.test.js", "MASTHEAD_FIXTURE="+string(fx))
}
