package handlers_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDashboardNeverTouchesTheDatabase holds DESIGN's line "the dashboard never touches the
// database" to the import graph: nothing the dashboard's packages build on (its handlers, its
// views, the service client it calls through) may import a database driver or the service's own
// database packages, so every read and write it makes goes over the service's HTTP surfaces, as
// the signed-in person, under row-level security.
func TestDashboardNeverTouchesTheDatabase(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "masthead/handlers", "masthead/views/...", "masthead/internal/client").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !slices.Contains(deps, "masthead/internal/client") {
		t.Fatalf("go list gave too little to judge: %q", deps)
	}
	for _, d := range deps {
		// A package and everything below it.
		for _, banned := range []string{"masthead/internal/pg", "github.com/jackc", "database/sql", "github.com/lib/pq"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("the dashboard depends on %s, a way into the database", d)
			}
		}
	}
}
