//go:build !linux

package dropdir

import (
	"context"
	"errors"
	"log/slog"
)

// Without inotify the watcher finds files by rescans only.

type notifier struct{}

type notifyEvent struct {
	path                                     string
	overflow, dir, created, written, removed bool
}

func newNotifier() (*notifier, error) { return nil, errors.New("inotify is Linux only") }

func (*notifier) add(string, *slog.Logger, string)       {}
func (*notifier) remove(string)                          {}
func (*notifier) watches() int                           { return 0 }
func (*notifier) close()                                 {}
func (*notifier) run(context.Context, func(notifyEvent)) {}
