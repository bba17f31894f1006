//go:build !linux

package storage

import (
	"errors"
	"io"
	"time"
)

// openBeneath is Linux's openat2(2); elsewhere Open uses os.Root.
func openBeneath(int, string) (io.ReadSeekCloser, int64, time.Time, bool, error) {
	return nil, 0, time.Time{}, false, errors.ErrUnsupported
}
