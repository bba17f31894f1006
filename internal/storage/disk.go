package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"syscall"
	"time"
)

// Disk keeps objects as files under one folder (the data folder's media directory in dev),
// each at <root>/<storage path>. Every file operation goes through os.Root, or for a download
// through openat2(2) with RESOLVE_BENEATH where the kernel has it, so even a key that slipped
// past validation cannot reach outside the folder, through ".." or a symlink.
type Disk struct {
	root *os.Root
	dir  *os.File // the same folder, for openBeneath
	fd   int      // dir's descriptor
}

// NewDisk opens (creating if needed) the folder objects live in.
func NewDisk(dir string) (*Disk, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	f, err := os.Open(dir)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	return &Disk{root: root, dir: f, fd: int(f.Fd())}, nil
}

// Close releases the folder handles.
func (d *Disk) Close() error { return errors.Join(d.root.Close(), d.dir.Close()) }

// Open implements Backend. The ETag is nginx's: modification time and size in hex, which
// changes whenever the file is replaced and costs no read of the content.
func (d *Disk) Open(_ context.Context, key string) (*Object, error) {
	obj, err := openBeneath(d.fd, key)
	if errors.Is(err, errors.ErrUnsupported) {
		obj, err = d.openInRoot(key)
	}
	return opened(key, obj, err)
}

// opened is Open's answer from either way of opening key: a key that names nothing, or lies
// under an object ("a.png/b.png"), is ErrObjectNotFound; any other failure names the key.
func opened(key string, obj *Object, err error) (*Object, error) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w: %s", ErrObjectNotFound, key)
	}
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return nil, fmt.Errorf("storage: open %s: %w", key, err)
	}
	return obj, err
}

// openInRoot is openBeneath through os.Root, for kernels without openat2.
func (d *Disk) openInRoot(key string) (*Object, error) {
	f, err := d.root.Open(key)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notAFile(key)
	}
	return diskObject(f, st.Size(), st.ModTime()), nil
}

// diskObject is an open file of the Disk as an Object.
func diskObject(body io.ReadSeekCloser, size int64, mod time.Time) *Object {
	return &Object{Body: body, Size: size, ModTime: mod, ETag: diskETag(mod, size)}
}

// notAFile is Open's answer for a key that names a folder or anything else but a regular file.
func notAFile(key string) error {
	return fmt.Errorf("%w: %s is not a file", ErrObjectNotFound, key)
}

// diskETag is nginx's validator of a file modified at mod with size bytes, quoted, built in one
// allocation (it is made on every download).
func diskETag(mod time.Time, size int64) string {
	var buf [40]byte // two quotes, a dash and at most 16 hex digits for each number
	b := append(buf[:0], '"')
	b = strconv.AppendInt(b, mod.UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, size, 16)
	return string(append(b, '"'))
}

// Put implements Backend: it writes a hidden temporary file beside the target and renames it
// into place, so the object appears whole or not at all.
func (d *Disk) Put(_ context.Context, key string, r io.Reader, size int64, _ string) error {
	dir := path.Dir(key)
	if err := d.root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("storage: create folder for %s: %w", key, err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, ".upload-"+hex.EncodeToString(rnd[:]))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", key, err)
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("wrote %d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, key)
	}
	if err != nil {
		_ = d.root.Remove(tmp)
		return fmt.Errorf("storage: write %s: %w", key, err)
	}
	return nil
}

// Delete implements Backend. A key under a file (a.png/x, with a.png a file) holds nothing
// either: the file system says "not a directory" where it means that nothing is there.
func (d *Disk) Delete(_ context.Context, key string) error {
	if err := d.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("storage: delete %s: %w", key, err)
	}
	return nil
}
