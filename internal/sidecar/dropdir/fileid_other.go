//go:build !unix

package dropdir

import "os"

// fileID is unknown off Unix: loops are bounded by MaxDepth alone.
type fileID struct{}

func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }
