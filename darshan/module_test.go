package darshan

import "testing"

// The table holds every module of darshan 3.5.0's darshan-log-format.h
// (and APXC), under the ids and names darshan-util gives them, each entry
// consistent with itself.
func TestModuleTable(t *testing.T) {
	want := []struct {
		id      ModuleID
		name    string
		version uint32
	}{
		{0, "NULL", 1}, {1, "POSIX", 4}, {2, "MPI-IO", 3}, {3, "H5F", 3}, {4, "H5D", 2},
		{5, "PNETCDF_FILE", 3}, {6, "PNETCDF_VAR", 1}, {7, "BG/Q", 2}, {8, "LUSTRE", 2},
		{9, "STDIO", 2}, {10, "DXT_POSIX", 2}, {11, "DXT_MPIIO", 3}, {12, "MDHIM", 1},
		{13, "APXC", 1}, {14, "APMPI", 1}, {15, "HEATMAP", 1}, {16, "DFS", 1}, {17, "DAOS", 1},
	}
	for _, w := range want {
		m := w.id.Module()
		if m == nil || m.ID != w.id || m.Name != w.name || m.Version != w.version {
			t.Errorf("module %d: %+v, want %s version %d", w.id, m, w.name, w.version)
			continue
		}
		switch {
		case m.ID == NullModule:
			if m.decoder != nil || !m.NoParser {
				t.Error("NULL has a reader or a printer")
			}
		case m.decoder == nil:
			t.Errorf("%s has no decoder", m.Name)
		case m.plain && m.counters == nil:
			t.Errorf("%s has plain counter records but no counters", m.Name)
		case !m.NoParser && !m.Traces && m.Describe(m.Version) == "":
			t.Errorf("%s has no description for darshan-parser", m.Name)
		}
		if m.Totals != nil && LayoutOf(m.ID, m.Version) == nil {
			t.Errorf("%s has --total rules but no counters", m.Name)
		}
		if m.Totals != nil {
			l := LayoutOf(m.ID, m.Version)
			for name := range m.Totals().Ints {
				if l.IntIndex(name) < 0 {
					t.Errorf("%s --total rule for unknown counter %s", m.Name, name)
				}
			}
		}
	}
	if ModuleID(18).Known() || ModuleID(18).String() != "<UNKNOWN>(18)" {
		t.Error("an unregistered id is known")
	}
}
