package insights

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
)

// Config holds every threshold of the triggers. DefaultConfig gives
// Drishti's defaults (drishti/includes/config.py); the comment of each
// field names its key in the configuration file.
type Config struct {
	// ImbalanceOperations (imbalance.operations, 0.1): the share by which
	// reads and writes (counts for P01/P02, bytes for P03/P04) must differ
	// for the job to be called read or write intensive.
	ImbalanceOperations float64
	// SmallBytes (small.bytes, 1 MiB): a request below this size is small
	// (P05, P06, P15, P16). Darshan counts request sizes in bins, so it
	// must be one of the bins' edges: 100, 1024, 10240, 102400, 1048576,
	// 4194304, 10485760, 104857600 or 1073741824.
	SmallBytes int64
	// SmallRequests (small.requests, 0.1): the share of small requests
	// above which P05, P06, P15 and P16 fire.
	SmallRequests float64
	// SmallRequestsAbsolute (small.requests_absolute, 1000): … and the
	// number of small requests they must also exceed.
	SmallRequestsAbsolute float64
	// MisalignedRequests (misaligned.requests, 0.1): the share of
	// misaligned memory (P07) or file (P08) requests above which they fire.
	MisalignedRequests float64
	// MetadataTimeRank (metadata.time_rank, 30 s): the metadata time of a
	// record above which P17 counts it.
	MetadataTimeRank float64
	// RandomOperations (random.operations, 0.2): the share of random
	// requests above which P11 and P13 fire.
	RandomOperations float64
	// RandomOperationsAbsolute (random.operations_absolute, 1000): … and
	// the number of random requests they must also exceed.
	RandomOperationsAbsolute float64
	// ImbalanceStragglers (imbalance.stragglers, 0.15): the difference
	// between the slowest and the fastest rank of a shared file, as a share
	// of its bytes (P18) or time (P19), above which the file counts.
	ImbalanceStragglers float64
	// ImbalanceSize (imbalance.size, 0.3): the difference between the
	// ranks that moved most and least bytes of a file, as a share of the
	// most, above which the file counts (P21, P22).
	ImbalanceSize float64
	// InterfaceSTDIO (interface.stdio, 0.1): the share of the bytes moved
	// through STDIO above which S01 fires.
	InterfaceSTDIO float64
	// CollectiveOperations (collective.operations, 0.5): the share of
	// independent MPI-IO requests above which a file is listed under M02
	// and M03.
	CollectiveOperations float64
	// CollectiveOperationsAbsolute (collective.operations_absolute, 1000):
	// the number of MPI-IO reads (M02) or writes (M03) above which doing
	// none of them collectively fires.
	CollectiveOperationsAbsolute float64
}

// DefaultConfig returns Drishti's default thresholds.
func DefaultConfig() Config {
	return Config{
		ImbalanceOperations:          0.1,
		SmallBytes:                   1 << 20,
		SmallRequests:                0.1,
		SmallRequestsAbsolute:        1000,
		MisalignedRequests:           0.1,
		MetadataTimeRank:             30,
		RandomOperations:             0.2,
		RandomOperationsAbsolute:     1000,
		ImbalanceStragglers:          0.15,
		ImbalanceSize:                0.3,
		InterfaceSTDIO:               0.1,
		CollectiveOperations:         0.5,
		CollectiveOperationsAbsolute: 1000,
	}
}

// MaxConfigSize bounds the configuration file: it holds thirteen numbers.
const MaxConfigSize = 1 << 16

// sizeBinEdges are the upper edges of Darshan's access size bins
// (POSIX_SIZE_READ_0_100 … POSIX_SIZE_READ_1G_PLUS) but the last.
var sizeBinEdges = [...]int64{100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30}

// LoadConfig reads a JSON file of thresholds that override DefaultConfig:
// Drishti's --config format, e.g.
//
//	{"small": {"requests": 0.2, "requests_absolute": 500}, "metadata": {"time_rank": 10}}
//
// Keys are case-sensitive; an unknown key, a value that is not a number,
// a ratio outside [0, 1], a negative count or time, a small.bytes that is
// not a bin edge, or anything after the object is an error.
func LoadConfig(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return Config{}, err
	}
	if len(b) > MaxConfigSize {
		return Config{}, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigSize)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig is LoadConfig on the file's content: Drishti's --config
// JSON, one object per first word of a threshold's name, so that a file
// written for Drishti works here unchanged. Keys are matched exactly
// (encoding/json alone would also take "Small" for "small").
func ParseConfig(b []byte) (Config, error) {
	c := DefaultConfig()
	type key struct {
		dst   *float64
		ratio bool
	}
	var smallBytes float64 = -1
	keys := map[string]map[string]key{
		"imbalance":  {"operations": {&c.ImbalanceOperations, true}, "stragglers": {&c.ImbalanceStragglers, true}, "size": {&c.ImbalanceSize, true}},
		"small":      {"bytes": {&smallBytes, false}, "requests": {&c.SmallRequests, true}, "requests_absolute": {&c.SmallRequestsAbsolute, false}},
		"misaligned": {"requests": {&c.MisalignedRequests, true}},
		"metadata":   {"time_rank": {&c.MetadataTimeRank, false}},
		"random":     {"operations": {&c.RandomOperations, true}, "operations_absolute": {&c.RandomOperationsAbsolute, false}},
		"interface":  {"stdio": {&c.InterfaceSTDIO, true}},
		"collective": {"operations": {&c.CollectiveOperations, true}, "operations_absolute": {&c.CollectiveOperationsAbsolute, false}},
	}
	var top map[string]json.RawMessage
	if err := strictDecode(b, &top); err != nil {
		return Config{}, fmt.Errorf("thresholds: %w", err)
	}
	if top == nil {
		return Config{}, errors.New("thresholds: not a JSON object")
	}
	var errs []error
	for _, cat := range slices.Sorted(maps.Keys(top)) {
		names, ok := keys[cat]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown key %q (known: %s)", cat, strings.Join(slices.Sorted(maps.Keys(keys)), ", ")))
			continue
		}
		var vals map[string]*float64
		if err := strictDecode(top[cat], &vals); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cat, err))
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(vals)) {
			k, ok := names[name]
			full := cat + "." + name
			switch v := vals[name]; {
			case !ok:
				errs = append(errs, fmt.Errorf("unknown key %q", full))
			case v == nil: // null: the default stays
			case math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0:
				errs = append(errs, fmt.Errorf("%s: %v is not a non-negative number", full, *v))
			case k.ratio && *v > 1:
				errs = append(errs, fmt.Errorf("%s: %v is a ratio, not in [0, 1]", full, *v))
			default:
				*k.dst = *v
			}
		}
	}
	if smallBytes >= 0 {
		if slices.Contains(sizeBinEdges[:], int64(smallBytes)) && float64(int64(smallBytes)) == smallBytes {
			c.SmallBytes = int64(smallBytes)
		} else {
			errs = append(errs, fmt.Errorf("small.bytes: %v is not an edge of Darshan's size bins %v", smallBytes, sizeBinEdges))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("thresholds: %w", err)
	}
	return c, nil
}

// strictDecode decodes one JSON value and refuses anything after it.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
