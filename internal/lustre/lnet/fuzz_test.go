package lnet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// seeds adds the project's lnet fixtures, the corpus's lnetctl files when
// present, and a few fragments.
func seeds(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(corpus.Fixtures(f, "lustre"), "lnet-*.txt"))
	if root := corpus.Root(); root != "" {
		more, _ := filepath.Glob(filepath.Join(root, "corpus", "lustre", "*", "*", "*", "*", "*lnet*"))
		paths = append(paths, more...)
	}
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{"", "net:", "net:\n- \n-", "net:\n    - net type: x\n      local NI(s):\n        - nid: \"\\\n",
		"statistics:\n  send_count: 1e400", "show:\n - net:\n    errno: x\n"} {
		f.Add([]byte(s))
	}
}

// Whatever the input, the NetShow holds only what can become metrics:
// label-safe, unique networks, NIDs, interfaces and tunable names.
func FuzzLNetNetShow(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ns, err := ParseNetShow(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		nets, nids := map[string]bool{}, map[string]bool{}
		for _, n := range ns.Nets {
			if !labelSafe(n.Type) || nets[n.Type] {
				t.Fatalf("network %q unsafe or repeated", n.Type)
			}
			nets[n.Type] = true
			for _, ni := range n.NIs {
				if !labelSafe(ni.NID) || nids[ni.NID] {
					t.Fatalf("NID %q unsafe or repeated", ni.NID)
				}
				nids[ni.NID] = true
				unique(t, ni.Interfaces)
				for _, ts := range [][]Tunable{ni.Tunables, ni.LNDTunables} {
					var names []string
					for _, tu := range ts {
						names = append(names, tu.Name)
					}
					unique(t, names)
				}
			}
		}
		if !ns.Found && len(ns.Nets) > 0 {
			t.Fatal("networks without a net section")
		}
	})
}

func unique(t *testing.T, names []string) {
	seen := map[string]bool{}
	for _, s := range names {
		if !labelSafe(s) || seen[s] {
			t.Fatalf("name %q unsafe or repeated in %q", s, names)
		}
		seen[s] = true
	}
}

func FuzzLNetStats(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStats(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Found && s.SendCount.OK {
			t.Fatal("a counter without a statistics section")
		}
		if _, err := ParseProcStats(strings.NewReader(string(data))); err != nil {
			t.Fatal(err)
		}
	})
}
