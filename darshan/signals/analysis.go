package signals

import (
	"errors"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// reportModules are the modules whose records have signals, in module id
// order: the data modules and HEATMAP.
var reportModules = func() []darshan.ModuleID {
	var out []darshan.ModuleID
	for m := range darshan.ModuleID(darshan.MaxModules) {
		if Reads(m) {
			out = append(out, m)
		}
	}
	return out
}()

// walk calls visit with every record of the data modules and HEATMAP, in
// module id order, and returns the damage met (a join of the readers'
// *darshan.FormatError): the records read before the damage of a region
// are visited, and so are the following modules. The record passed to
// visit is reused afterwards.
func walk(l *darshan.Log, visit func(r darshan.Record)) error {
	var errs []error
	for _, m := range reportModules {
		rd := l.Records(m)
		for rd.Next() {
			visit(rd.Record())
		}
		if err := rd.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Analysis holds the sums over a log's records that the job and module
// levels are computed from.
type Analysis struct {
	// Modules holds, in module id order, the sum of each data module that
	// has at least one record.
	Modules []Inputs
	// Err is the damage met while reading records (see walk); the sums
	// hold the records read before it.
	Err error
}

// Analyze reads the data module records of l and sums them per module.
func Analyze(l *darshan.Log) *Analysis {
	a := &Analysis{}
	sums := map[darshan.ModuleID]*Inputs{}
	var x extractor
	var in Inputs
	a.Err = walk(l, func(r darshan.Record) {
		if !x.inputs(r, &in) {
			return
		}
		s := sums[in.Module]
		if s == nil {
			s = &Inputs{Module: in.Module}
			sums[in.Module] = s
		}
		s.Add(&in)
	})
	for _, m := range DataModules {
		if s := sums[m]; s != nil {
			a.Modules = append(a.Modules, *s)
		}
	}
	return a
}

// Module returns the sum of module m's records, or nil when it has none.
func (a *Analysis) Module(m darshan.ModuleID) *Inputs {
	for i := range a.Modules {
		if a.Modules[i].Module == m {
			return &a.Modules[i]
		}
	}
	return nil
}

// JobInputs returns the sum of the POSIX and STDIO records: the inputs of
// level 1.
func (a *Analysis) JobInputs() Inputs {
	return jobInputs(a.Modules)
}

func jobInputs(modules []Inputs) Inputs {
	var in Inputs
	for i := range modules {
		if m := modules[i].Module; m == darshan.POSIX || m == darshan.STDIO {
			in.Add(&modules[i])
		}
	}
	return in
}
