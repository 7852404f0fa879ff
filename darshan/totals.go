package darshan

// The --total aggregation of darshan-parser: darshan-util's accumulator
// folds every record of a module into one with the module's
// log_agg_records function. Each counter has a rule; a module's Totals
// name them, and package parsertext applies them.

// IntRule is how an integer counter aggregates.
type IntRule uint8

const (
	IntIgnore      IntRule = iota // set with the float counters, or by a common-value block
	IntSum                        // sum
	IntSumClamp                   // sum, and a negative sum becomes exactly -1 (POSIX, DFS, DAOS)
	IntSet                        // the last record's value
	IntMax                        // maximum
	IntCommon                     // first counter of a block of 4 most common values and their 4 counts
	IntCommonSkip0                // the same, skipped when the record's first value is 0 (MPI-IO)
)

// FloatRule is how a floating point counter aggregates.
type FloatRule uint8

const (
	FloatIgnore     FloatRule = iota
	FloatSum                  // sum
	FloatMinNonZero           // smallest positive value (first timestamps)
	FloatMax                  // maximum (last timestamps)
	FloatMaxTime              // maximum, carrying its *_MAX_*_TIME_SIZE counter along
	FloatFastest              // fastest rank time, with its rank and bytes counters
	FloatSlowest              // slowest rank time, with its rank and bytes counters
	FloatZero                 // variance: darshan-util no longer computes it
)

// Totals are a module's aggregation rules, by counter name; a counter not
// named is ignored. Prefix is the counters' prefix ("POSIX"), which the
// rules that involve several counters (fastest rank, bytes) need.
type Totals struct {
	Prefix string
	Ints   map[string]IntRule
	Floats map[string]FloatRule
}

// rules gives one rule to many counters.
func rules[R IntRule | FloatRule](r R, names ...string) map[string]R {
	m := make(map[string]R, len(names))
	for _, n := range names {
		m[n] = r
	}
	return m
}

func merge[R IntRule | FloatRule](ms ...map[string]R) map[string]R {
	out := map[string]R{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// sizeHistogram names the ten access size bins of a module.
func sizeHistogram(prefix string) []string {
	var out []string
	for _, b := range []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"} {
		out = append(out, prefix+"_"+b)
	}
	return out
}

// timerRules are the float rules POSIX, MPI-IO, STDIO, DFS and DAOS
// share; variance tells whether the module has the (no longer computed)
// variances.
func timerRules(prefix string, variance bool) map[string]FloatRule {
	f := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = prefix + "_F_" + n
		}
		return out
	}
	m := merge(rules(FloatSum, f("READ_TIME", "WRITE_TIME", "META_TIME")...),
		rules(FloatMinNonZero, f("OPEN_START_TIMESTAMP", "READ_START_TIMESTAMP", "WRITE_START_TIMESTAMP", "CLOSE_START_TIMESTAMP")...),
		rules(FloatMax, f("OPEN_END_TIMESTAMP", "READ_END_TIMESTAMP", "WRITE_END_TIMESTAMP", "CLOSE_END_TIMESTAMP")...),
		rules(FloatMaxTime, f("MAX_READ_TIME", "MAX_WRITE_TIME")...),
		rules(FloatFastest, f("FASTEST_RANK_TIME")...),
		rules(FloatSlowest, f("SLOWEST_RANK_TIME")...))
	if variance {
		m = merge(m, rules(FloatZero, f("VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES")...))
	}
	return m
}
