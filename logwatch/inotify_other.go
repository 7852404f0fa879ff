//go:build !linux

package logwatch

import (
	"context"
	"errors"
	"log/slog"
)

// Without inotify the sidecar finds logs by rescans only.

type notifier struct{}

type notifyEvent struct{}

func newNotifier() (*notifier, error) { return nil, errors.New("inotify is Linux only") }

func (*notifier) add(string, *slog.Logger)               {}
func (*notifier) remove(string)                          {}
func (*notifier) watches() int                           { return 0 }
func (*notifier) close()                                 {}
func (*notifier) run(context.Context, func(notifyEvent)) {}
func (s *Sidecar) event(notifyEvent)                     {}
