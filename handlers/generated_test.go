package handlers_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestTemplCallsRendered: no component call in a template is written out as text. templ reads
// "@pkg.Component(…)" as a call only where a node starts; after text on the same line it is
// text, and the page shows the source (the inbox once read "since @partials.Ago(e.Since)").
// Every literal the generated Go writes is searched for such a call.
func TestTemplCallsRendered(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "views", "*", "*_templ.go"))
	if err != nil || len(files) < 10 {
		t.Fatalf("generated templates found: %v %v", files, err)
	}
	call := regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\(`)
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if text, err := strconv.Unquote(lit.Value); err == nil && call.MatchString(text) {
				t.Errorf("%s: a component call written as text: %q", fset.Position(lit.Pos()), text)
			}
			return true
		})
	}
}
