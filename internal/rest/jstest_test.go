package rest

import (
	"encoding/json"
	"testing"

	"masthead/internal/nodetest"
)

// TestSupabaseJS runs jstest/rest.test.js, the REST scenarios through the real supabase-js
// client, against this package's handler on a fresh database.
func TestSupabaseJS(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fx, _ := json.Marshal(map[string]any{"url": f.srv.URL, "key": testKey, "users": f.users, "pubs": f.pubs})
	nodetest.Run(t, "jstest", "@supabase/supabase-js", "rest.test.js", "MASTHEAD_FIXTURE="+string(fx))
}
