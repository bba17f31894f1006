package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestHTMXPinned keeps the vendored file and the checksum in README.md in step.
func TestHTMXPinned(t *testing.T) {
	b, err := files.ReadFile("htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), hex.EncodeToString(sum[:])) {
		t.Errorf("README.md does not record sha256 %x of htmx.min.js", sum)
	}
}

func TestHandler(t *testing.T) {
	h := Handler()
	for _, name := range []string{"htmx.min.js", "app.js", "app.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path(name), nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d %q", name, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Prefix+"app.css", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("unhashed name served: %d", rec.Code)
	}
}
