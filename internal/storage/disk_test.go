package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiskOpenStaysInside plants symlinks in the media folder and asks Disk.Open for paths
// that leave it: none may open a file outside, whichever of openat2 or os.Root serves it (each
// is asked: this kernel's Open uses openat2); a symlink that stays inside opens like the file it
// names, and a folder is no object.
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
	// Both ways, each with Open's answer (opened) to what it found.
	ways := map[string]func(string) (*Object, error){
		"Open": func(key string) (*Object, error) { return d.Open(ctx, key) },
		"os.Root": func(key string) (*Object, error) {
			obj, err := d.openInRoot(key)
			return opened(key, obj, err)
		},
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
		{"proj", ""},
	} {
		for way, open := range ways {
			obj, err := open(tc.key)
			if tc.want == "" {
				if err == nil {
					b, _ := io.ReadAll(obj.Body)
					obj.Body.Close()
					t.Errorf("%s(%q) = %q, want a refusal", way, tc.key, b)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s(%q): %v", way, tc.key, err)
				continue
			}
			b, _ := io.ReadAll(obj.Body)
			obj.Body.Close()
			if string(b) != tc.want || obj.Size != int64(len(tc.want)) || obj.ETag != diskETag(obj.ModTime, obj.Size) {
				t.Errorf("%s(%q) = %q (%d bytes, ETag %s), want %q", way, tc.key, b, obj.Size, obj.ETag, tc.want)
			}
		}
	}
	// A missing object and a folder are ErrObjectNotFound (a 404), not a failure.
	for _, key := range []string{"proj/missing.png", "proj", "proj/photo.png/x.png"} {
		for way, open := range ways {
			if _, err := open(key); !errors.Is(err, ErrObjectNotFound) {
				t.Errorf("%s(%q): %v, want ErrObjectNotFound", way, key, err)
			}
		}
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

// TestDiskFileActsAsFile: the body Disk.Open returns (the bare descriptor, fdFile) answers as
// the plain *os.File of the same file does to every sequence of seeks, reads, reads through
// sendfile's SyscallConn and Close; ServeContent's size probe (seek to the end and back) leaves
// the kernel's offset alone, that is, makes no lseek(2); and a Close while another goroutine
// reads (ServeContent's multipart writer) leaves that goroutine ErrClosed, never another file.
func TestDiskFileActsAsFile(t *testing.T) {
	t.Parallel()
	d, err := NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	const content = "0123456789abcdefghij"
	if err := d.Put(ctx, "proj/f.png", strings.NewReader(content), int64(len(content)), "image/png"); err != nil {
		t.Fatal(err)
	}
	type op struct {
		kind   string // seek, read, readAll, kernelOffset, close
		off    int64
		whence int
		n      int
	}
	seek := func(off int64, whence int) op { return op{kind: "seek", off: off, whence: whence} }
	read := func(n int) op { return op{kind: "read", n: n} }
	readAll, kernel, closeIt := op{kind: "readAll"}, op{kind: "kernelOffset"}, op{kind: "close"}
	for name, ops := range map[string][]op{
		"size probe then read all":  {seek(0, io.SeekEnd), seek(0, io.SeekStart), read(100), read(100)},
		"size probe then range":     {seek(0, io.SeekEnd), seek(0, io.SeekStart), seek(5, io.SeekStart), read(3), seek(0, io.SeekCurrent)},
		"read after seek to end":    {seek(0, io.SeekEnd), read(4), seek(0, io.SeekCurrent)},
		"current after end":         {seek(0, io.SeekEnd), seek(0, io.SeekCurrent), seek(-3, io.SeekEnd), read(10)},
		"read all after probe":      {seek(0, io.SeekEnd), seek(0, io.SeekStart), readAll},
		"sendfile offset after end": {seek(0, io.SeekEnd), kernel, read(5)},
		"sendfile after probe":      {seek(0, io.SeekEnd), seek(0, io.SeekStart), kernel, read(5)},
		"read first, then probe":    {read(4), seek(0, io.SeekEnd), seek(0, io.SeekStart), read(4)},
		"relative seek while fresh": {seek(7, io.SeekCurrent), read(2), seek(0, io.SeekEnd), read(1)},
		"empty read":                {read(0), seek(0, io.SeekCurrent)},
		"closed":                    {closeIt, read(4), seek(0, io.SeekEnd), seek(3, io.SeekStart), kernel, closeIt},
	} {
		obj, err := d.Open(ctx, "proj/f.png")
		if err != nil {
			t.Fatal(err)
		}
		plain, err := os.Open(filepath.Join(d.root.Name(), "proj", "f.png"))
		if err != nil {
			t.Fatal(err)
		}
		// outcome renders a result; errors only by kind, since the two word them differently.
		outcome := func(v any, err error) string {
			switch {
			case errors.Is(err, os.ErrClosed), err != nil && strings.Contains(err.Error(), "use of closed file"):
				return "closed" // the latter is internal/poll's, from *os.File's SyscallConn
			case err != nil:
				return err.Error()
			}
			return fmt.Sprint(v)
		}
		do := func(f io.ReadSeekCloser, o op) string {
			switch o.kind {
			case "seek":
				return outcome(f.Seek(o.off, o.whence))
			case "read":
				b := make([]byte, o.n)
				n, err := f.Read(b)
				return outcome(string(b[:n]), err)
			case "readAll":
				return outcome(io.ReadAll(struct{ io.Reader }{f}))
			case "close":
				return outcome("closed it", f.Close())
			default: // the offset sendfile would start from, read through the raw descriptor
				rc, err := f.(syscall.Conn).SyscallConn()
				if err != nil {
					return outcome(nil, err)
				}
				var off int64
				if err := rc.Control(func(fd uintptr) { off, err = syscall.Seek(int(fd), 0, io.SeekCurrent) }); err != nil {
					return outcome(nil, err)
				}
				return outcome(off, err)
			}
		}
		for i, o := range ops {
			if got, want := do(obj.Body, o), do(plain, o); got != want {
				t.Errorf("%s, step %d (%+v): %s, *os.File gives %s", name, i, o, got, want)
			}
		}
		obj.Body.Close()
		plain.Close()
	}

	// The size probe leaves the kernel's offset where it was: it made no lseek(2).
	obj, err := d.Open(ctx, "proj/f.png")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := obj.Body.Seek(0, io.SeekEnd); n != int64(len(content)) || err != nil {
		t.Fatalf("seek to end: %d, %v", n, err)
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", obj.Body.(*fdFile).fd))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(info), "pos:\t0\n") {
		t.Errorf("after the size probe the kernel's offset is not 0 (an lseek was made): %q", info)
	}
	obj.Body.Close()

	// Close under a reader: the reader's next call fails with ErrClosed.
	obj, err = d.Open(ctx, "proj/f.png")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	started := make(chan struct{})
	go func() {
		b := make([]byte, 1)
		for i := 0; ; i++ {
			if i == 1 {
				close(started)
			}
			_, err := obj.Body.Read(b)
			if err == io.EOF {
				_, err = obj.Body.Seek(0, io.SeekStart)
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	<-started
	if err := obj.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Errorf("a read after Close: %v, want ErrClosed", err)
	}
}
