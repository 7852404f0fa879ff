package lnet

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// routerOutput is `lnetctl net show -v 4` of a large LNet router: n NIs
// over a few networks, each NI as in the cYAML fixture.
func routerOutput(b *testing.B, n int) string {
	data, err := os.ReadFile(fixture(b, "lnet-net-show-cyaml.txt"))
	if err != nil {
		b.Fatal(err)
	}
	// The fixture's second o2ib NI, repeated with new NIDs.
	text := string(data)
	start := strings.Index(text, "        - nid: 10.10.1.21@o2ib")
	end := strings.Index(text, "    - net type: tcp1")
	ni := text[start:end]
	var sb strings.Builder
	sb.WriteString("net:\n")
	for net := range 4 {
		fmt.Fprintf(&sb, "    - net type: o2ib%d\n      local NI(s):\n", net)
		for i := range n / 4 {
			sb.WriteString(strings.Replace(ni, "10.10.1.21@o2ib", fmt.Sprintf("10.%d.%d.%d@o2ib%d", net, i/250, i%250, net), 1))
		}
	}
	return sb.String()
}

func BenchmarkParseNetShow(b *testing.B) {
	for _, n := range []int{4, 64} {
		text := routerOutput(b, n)
		b.Run(fmt.Sprintf("nis=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				ns, err := ParseNetShow(strings.NewReader(text))
				if err != nil || len(ns.Nets) != 4 {
					b.Fatal(err, len(ns.Nets))
				}
			}
		})
	}
}

func BenchmarkParseStats(b *testing.B) {
	data, err := os.ReadFile(fixture(b, "lnet-stats-show-libyaml.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseStats(strings.NewReader(string(data))); err != nil {
			b.Fatal(err)
		}
	}
}
