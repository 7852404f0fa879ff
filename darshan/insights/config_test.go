package insights

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	// A file written for Drishti's --config.
	c, err := ParseConfig([]byte(`{"imbalance": {"operations": 0.2, "stragglers": 0.25},
		"small": {"bytes": 102400, "requests": 0.3, "requests_absolute": 50},
		"metadata": {"time_rank": 5}, "collective": {"operations_absolute": 10}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.ImbalanceOperations, want.ImbalanceStragglers = 0.2, 0.25
	want.SmallBytes, want.SmallRequests, want.SmallRequestsAbsolute = 102400, 0.3, 50
	want.MetadataTimeRank, want.CollectiveOperationsAbsolute = 5, 10
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if c, err := ParseConfig([]byte(`{}`)); err != nil || c != DefaultConfig() {
		t.Errorf("empty object: %+v, %v", c, err)
	}
	for _, bad := range []string{
		``, `[]`, `{"small": {"request": 0.1}}`, `{"smal": {}}`, `{"small": {"requests": 1.5}}`,
		`{"random": {"operations_absolute": -1}}`, `{"small": {"bytes": 1000000}}`, `{"small": {"requests": "0.1"}}`,
		`{} {}`, `{"metadata": {"time_rank": 1e400}}`, `{"Small": {}}`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "thresholds.json")
	if err := os.WriteFile(p, []byte(`{"interface": {"stdio": 0.5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(p)
	if err != nil || c.InterfaceSTDIO != 0.5 {
		t.Fatalf("%+v, %v", c, err)
	}
	os.WriteFile(p, []byte(`{"interface": {"stdio": 5}}`), 0o644)
	if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "interface.stdio") {
		t.Errorf("error %v does not name the file and the key", err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file gives no error")
	}
}

// validConfig reports what every parsed configuration must satisfy.
func validConfig(c Config) string {
	for name, r := range map[string]float64{"imbalance.operations": c.ImbalanceOperations, "small.requests": c.SmallRequests,
		"misaligned.requests": c.MisalignedRequests, "random.operations": c.RandomOperations,
		"imbalance.stragglers": c.ImbalanceStragglers, "imbalance.size": c.ImbalanceSize,
		"interface.stdio": c.InterfaceSTDIO, "collective.operations": c.CollectiveOperations} {
		if !(r >= 0 && r <= 1) {
			return name
		}
	}
	for name, v := range map[string]float64{"small.requests_absolute": c.SmallRequestsAbsolute, "metadata.time_rank": c.MetadataTimeRank,
		"random.operations_absolute": c.RandomOperationsAbsolute, "collective.operations_absolute": c.CollectiveOperationsAbsolute} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return name
		}
	}
	for _, e := range sizeBinEdges {
		if e == c.SmallBytes {
			return ""
		}
	}
	return "small.bytes"
}

// FuzzLoadConfig: any input is either refused or a valid configuration;
// never a panic. The seeds run under plain go test.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"small": {"bytes": 1048576, "requests": 0.1, "requests_absolute": 1000}}`,
		`{"imbalance": {"operations": 0.1, "stragglers": 0.15, "size": 0.3}, "misaligned": {"requests": 0.1},
		  "metadata": {"time_rank": 30}, "random": {"operations": 0.2, "operations_absolute": 1000},
		  "interface": {"stdio": 0.1}, "collective": {"operations": 0.5, "operations_absolute": 1000}}`,
		`{"small": null}`, `{"small": {"bytes": null}}`, `null`, `{"x": 1}`, `{"small": {"requests": -0}}`,
		`{"small": {"bytes": 100.5}}`, `{"metadata": {"time_rank": 1e308}}`, "\xff", `{"small": {"requests": 1}} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		if bad := validConfig(c); bad != "" {
			t.Errorf("%q parsed with an invalid %s: %+v", b, bad, c)
		}
	})
}

// TestCBNodes reads the cb_nodes hint where darshan-runtime writes it, and
// nothing else: absent, elsewhere than in the "h" line, or not a positive
// number, it is 0.
func TestCBNodes(t *testing.T) {
	for meta, want := range map[string]int64{
		"": 0,
		"lib_ver=3.4.0\nh=romio_no_indep_rw=true\n":           0,
		"h=romio_no_indep_rw=true;cb_nodes=4\n":               4,
		"lib_ver=3.4.0\nh= cb_nodes = 16 ;cb_buffer_size=1\n": 16,
		"cb_nodes=4\n":        0, // not a hint
		"x=cb_nodes=4\n":      0,
		"h=cb_nodes=-2\n":     0,
		"h=cb_nodes=four\n":   0,
		"h=cb_nodes_x=4\n":    0,
		"h=a=1\nh=cb_nodes=8": 8,
	} {
		if got := cbNodes(meta); got != want {
			t.Errorf("cbNodes(%q) = %d, want %d", meta, got, want)
		}
	}
}
