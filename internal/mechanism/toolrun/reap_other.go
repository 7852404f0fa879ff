//go:build !linux

package toolrun

// Without PR_SET_CHILD_SUBREAPER and /proc, the process group's kill is
// all there is: children that escaped it are not found.

func becomeSubreaper() {}

func listChildren() []child { return nil }

func reaped(int) bool { return true }
