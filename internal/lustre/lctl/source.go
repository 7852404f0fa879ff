package lctl

import (
	"context"
	"io"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// Source produces `lctl get_param` output for a list of patterns: the real
// command, or a simulated server.
type Source interface {
	// GetParam starts printing the parameters matching patterns. Read
	// returns io.EOF only when the output is complete; Close releases
	// the source and reports how it ended (an *toolrun.ExitError for a
	// non-zero exit after a whole output).
	GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error)
}

// Command runs the lctl binary.
type Command struct {
	// Path is the lctl binary, looked up in $PATH when it has no slash.
	Path string
	// Args go before "get_param" (e.g. a sudo wrapper's arguments go in
	// Path and Args: Path "sudo", Args ["-n", "/usr/sbin/lctl"]).
	Args []string
}

// GetParam implements Source: it runs `lctl get_param patterns...` in a
// process group killed when ctx expires (toolrun.Start).
func (c *Command) GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error) {
	args := append(append(append([]string(nil), c.Args...), "get_param"), patterns...)
	return toolrun.Start(ctx, c.Path, args...)
}
