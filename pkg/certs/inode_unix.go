//go:build unix

package certs

import (
	"os"
	"syscall"
)

// inodeOf returns the file's inode number, so that a file replaced by a
// rename is noticed even when its size and modification time (which has
// the kernel's coarse clock resolution) are unchanged.
func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
