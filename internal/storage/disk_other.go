//go:build !linux

package storage

import (
	"errors"
	"os"
)

// openBeneath is Linux's openat2(2); elsewhere Open uses os.Root.
func openBeneath(int, string) (*os.File, error) { return nil, errors.ErrUnsupported }
