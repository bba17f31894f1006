package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiskOpenStaysInside plants symlinks in the media folder and asks Disk.Open for paths
// that leave it: none may open a file outside, whichever of openat2 or os.Root serves it; a
// symlink that stays inside opens like the file it names.
func TestDiskOpenStaysInside(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.png")
	if err := os.WriteFile(secret, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDisk(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if err := d.Put(ctx, "proj/photo.png", strings.NewReader("inside"), 6, "image/png"); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"proj/abs.png":  secret,                                                          // absolute symlink out
		"proj/rel.png":  filepath.Join("..", "..", filepath.Base(outside), "secret.png"), // relative symlink out
		"proj/dir":      outside,                                                         // a folder outside
		"proj/ok.png":   "photo.png",                                                     // stays inside
		"proj/self.png": "/proc/self/root" + secret,                                      // magic link
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		key  string
		want string // the content read, "" for a refusal
	}{
		{"proj/photo.png", "inside"},
		{"proj/ok.png", "inside"},
		{"proj/abs.png", ""},
		{"proj/rel.png", ""},
		{"proj/dir/secret.png", ""},
		{"proj/self.png", ""},
		{"../" + filepath.Base(outside) + "/secret.png", ""},
		{secret, ""},
		{"proj/missing.png", ""},
	} {
		obj, err := d.Open(ctx, tc.key)
		if tc.want == "" {
			if err == nil {
				b, _ := io.ReadAll(obj.Body)
				obj.Body.Close()
				t.Errorf("Open(%q) = %q, want a refusal", tc.key, b)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tc.key, err)
			continue
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if string(b) != tc.want || obj.Size != int64(len(tc.want)) {
			t.Errorf("Open(%q) = %q (%d bytes), want %q", tc.key, b, obj.Size, tc.want)
		}
	}
	// A missing object is ErrObjectNotFound (a 404), not a failure.
	if _, err := d.Open(ctx, "proj/missing.png"); !errors.Is(err, ErrObjectNotFound) {
		t.Errorf("missing object: %v, want ErrObjectNotFound", err)
	}
}

// TestDiskETag: the validator is nginx's, the modification time in nanoseconds and the size in
// hex, quoted; it changes with either.
func TestDiskETag(t *testing.T) {
	t.Parallel()
	mod := time.Unix(1700000000, 123456789)
	for _, tc := range []struct {
		mod  time.Time
		size int64
		want string
	}{
		{mod, 100000, `"17979cfe3d85cd15-186a0"`},
		{mod, 0, `"17979cfe3d85cd15-0"`},
		{mod.Add(time.Nanosecond), 100000, `"17979cfe3d85cd16-186a0"`},
		{time.Unix(1<<33, 0), 1<<62 - 1, `"7735940000000000-3fffffffffffffff"`},
	} {
		if got := diskETag(tc.mod, tc.size); got != tc.want {
			t.Errorf("diskETag(%v, %d) = %s, want %s", tc.mod, tc.size, got, tc.want)
		}
	}
}
