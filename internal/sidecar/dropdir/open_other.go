//go:build !unix

package dropdir

import "os"

// Off Unix there are no FIFOs to block on nor owners to compare: links,
// whose owner is unknown, are never followed.
const (
	openFlags = os.O_RDONLY
	noFollow  = 0
)

func isLoop(error) bool                  { return false }
func ownerOf(os.FileInfo) (uint32, bool) { return 0, false }
func overflowUID() uint32                { return 65534 }
