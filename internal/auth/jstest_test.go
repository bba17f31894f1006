package auth_test

import (
	"testing"

	"masthead/internal/nodetest"
)

// TestSupabaseJS runs jstest/auth.test.mjs, which drives the service with the real supabase-js
// client, against a service on a real loopback port.
func TestSupabaseJS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	nodetest.Run(t, "jstest", "@supabase/supabase-js", "auth.test.mjs",
		"MASTHEAD_URL="+e.URL,
		"MASTHEAD_PUBLISHABLE_KEY="+e.Key,
		"MASTHEAD_TEST_EMAIL="+e.user.Email,
		"MASTHEAD_TEST_PASSWORD="+e.user.Password,
	)
}
