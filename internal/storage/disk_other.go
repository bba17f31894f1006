//go:build !linux

package storage

import "errors"

// openBeneath is Linux's openat2(2); elsewhere Open uses os.Root.
func openBeneath(int, string) (*Object, error) {
	return nil, errors.ErrUnsupported
}
