package deploy

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/web/handler"
)

// unitSetting returns the value of key in a unit's text ("" if unset).
func unitSetting(text, key string) string {
	m := regexp.MustCompile(`(?m)^`+key+`=(.*)$`).FindAllStringSubmatch(text, -1)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[len(m)-1][1])
}

// The units give the exporter the open files its connections need (it
// caps them at the limit less what it keeps for itself: 1024, the usual
// default, leaves 896), and a stop that lets a scrape finish: systemd
// waits longer than a scrape without a timeout header may take, and
// (server mode) sends SIGTERM to the exporter alone, not to its lctl
// runs, which the exporter kills itself once its scrapes are answered.
func TestSystemdUnitsStop(t *testing.T) {
	t.Parallel()
	longest := handler.DefaultTimeout + handler.WriteGrace
	for _, u := range globFiles(t, "systemd/*.service") {
		text := readFile(t, u)
		if n, err := strconv.Atoi(unitSetting(text, "LimitNOFILE")); err != nil || n < 8192 {
			t.Errorf("%s: LimitNOFILE=%q, want a number of at least 8192", u, unitSetting(text, "LimitNOFILE"))
		}
		stop, err := time.ParseDuration(unitSetting(text, "TimeoutStopSec"))
		if err != nil || stop <= longest {
			t.Errorf("%s: TimeoutStopSec=%q, want more than the longest scrape without a timeout header (%v)", u, unitSetting(text, "TimeoutStopSec"), longest)
		}
		if sig := unitSetting(text, "KillSignal"); sig != "" && sig != "SIGTERM" {
			t.Errorf("%s: KillSignal=%s: the exporter stops gracefully on SIGTERM", u, sig)
		}
	}
	if mode := unitSetting(readFile(t, "systemd/hpcio-exporter.service"), "KillMode"); mode != "mixed" {
		t.Errorf("hpcio-exporter.service: KillMode=%q, want mixed (SIGTERM to the exporter alone, SIGKILL to what is left)", mode)
	}
}
