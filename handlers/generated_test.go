package handlers_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplOutputCommitted: the committed Go of every template is what templ generates from it
// now (`make generate`), so a template changed without regenerating cannot pass for tested.
func TestTemplOutputCommitted(t *testing.T) {
	t.Parallel()
	// From the module's root, as make generate runs it: the generated Go names each template
	// by its path from there.
	const root = ".."
	sources, err := filepath.Glob(filepath.Join(root, "views", "*", "*.templ"))
	if err != nil || len(sources) < 10 {
		t.Fatalf("templates found: %v %v", sources, err)
	}
	for _, src := range sources {
		src, _ = filepath.Rel(root, src)
		cmd := exec.Command("go", "tool", "templ", "generate", "-f", src, "-stdout")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("templ generate %s: %v\n%s", src, err, stderr.Bytes())
		}
		committed, err := os.ReadFile(filepath.Join(root, strings.TrimSuffix(src, ".templ")+"_templ.go"))
		if err != nil {
			t.Fatalf("%s has no generated Go committed: %v", src, err)
		}
		if !bytes.Equal(committed, want) {
			t.Errorf("%s: the committed _templ.go is not what templ generates from it; run make generate", src)
		}
	}
}
