//go:build !unix

package certs

import "os"

// inodeOf returns 0: the platform has no inode numbers.
func inodeOf(os.FileInfo) uint64 { return 0 }
