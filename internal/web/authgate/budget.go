package authgate

import (
	"container/list"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/web/peer"
)

// budgets are the addresses' budgets of wrong passwords: token buckets of
// Burst, refilled one every Refill, for at most MaxAddresses addresses (the
// one whose last failure is the oldest forgotten first: a full bucket is
// what a forgotten address starts with again). Guarded by the gate's mutex.
type budgets struct {
	burst  float64
	refill time.Duration
	max    int
	byAddr map[peer.Key]*list.Element // of *budget
	order  list.List                  // the oldest failure first
}

type budget struct {
	addr   peer.Key
	tokens float64
	at     time.Time // when tokens was right
}

func (b *budgets) init(cfg Config) {
	b.burst, b.refill, b.max = float64(cfg.Burst), cfg.Refill, cfg.MaxAddresses
	b.byAddr = map[peer.Key]*list.Element{}
}

// tokens returns addr's budget at now (nil: full).
func (b *budgets) tokens(addr peer.Key, now time.Time) *budget {
	e := b.byAddr[addr]
	if e == nil {
		return nil
	}
	bu := e.Value.(*budget)
	if elapsed := now.Sub(bu.at); elapsed > 0 {
		bu.tokens = min(b.burst, bu.tokens+float64(elapsed)/float64(b.refill))
		bu.at = now
	}
	return bu
}

// wait returns how long addr must wait before its password is checked: 0
// when it has a wrong password left.
func (b *budgets) wait(addr peer.Key, now time.Time) time.Duration {
	bu := b.tokens(addr, now)
	if bu == nil || bu.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - bu.tokens) * float64(b.refill))
}

// fail takes a wrong password out of addr's budget.
func (b *budgets) fail(addr peer.Key, now time.Time) {
	bu := b.tokens(addr, now)
	if bu == nil {
		if len(b.byAddr) >= b.max {
			oldest := b.order.Front()
			b.order.Remove(oldest)
			delete(b.byAddr, oldest.Value.(*budget).addr)
		}
		bu = &budget{addr: addr, tokens: b.burst, at: now}
		b.byAddr[addr] = b.order.PushBack(bu)
	} else {
		b.order.MoveToBack(b.byAddr[addr])
	}
	bu.tokens = max(bu.tokens-1, 0)
}
