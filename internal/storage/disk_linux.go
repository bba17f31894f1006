package storage

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openBeneath opens key for reading beneath the folder dirfd in one openat2(2) call: with
// RESOLVE_BENEATH the kernel refuses any step that would leave the folder ("..", an absolute
// path or symlink) and with RESOLVE_NO_MAGICLINKS the /proc links, the guarantee os.Root gives
// by opening each folder on the way in turn (three system calls for "proj/photo.png" instead
// of one: 8 µs of a download's 160 in BenchmarkFloorDownload). Kernels before 5.6 lack
// openat2; there it returns errors.ErrUnsupported and Open uses os.Root.
func openBeneath(dirfd int, key string) (*os.File, error) {
	fd, err := unix.Openat2(dirfd, key, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		return nil, errors.ErrUnsupported
	}
	if err != nil {
		return nil, &fs.PathError{Op: "openat2", Path: key, Err: err}
	}
	return os.NewFile(uintptr(fd), key), nil
}
