package darshan

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
)

// Compression is the compression method of a log's regions.
type Compression uint8

// The compression methods of the format. darshan-runtime writes zlib;
// darshan-convert can write bzip2; NONE is found in leftovers of crashed
// jobs that logged through mmap.
const (
	CompressZlib  Compression = 0
	CompressBzip2 Compression = 1
	CompressNone  Compression = 2
)

// String returns the name darshan-parser prints: ZLIB, BZIP2, NONE or UNKNOWN.
func (c Compression) String() string {
	switch c {
	case CompressZlib:
		return "ZLIB"
	case CompressBzip2:
		return "BZIP2"
	case CompressNone:
		return "NONE"
	}
	return "UNKNOWN"
}

const (
	magicNumber   = 6567223
	headerSize341 = 1328 // format 3.41: 64 module slots
	headerSize300 = 360  // formats 3.00 to 3.21: 16 module slots
	oldModules    = 16
)

// Header is the uncompressed header of a log, with the module ids of older
// formats remapped to those of format 3.41: logs before 3.20 had no H5D
// module (id 4) and logs before 3.41 no PNETCDF_VAR module (id 6), so the
// slots of the modules after them move up by one.
type Header struct {
	Version     string // the format version, e.g. "3.41"
	Major       int
	Minor       int
	BigEndian   bool // the log was written on a big-endian machine
	Compression Compression
	// Partial has bit 1<<id set for each module that ran out of memory: its
	// records are valid but some are missing.
	Partial        uint64
	JobRegion      Region // derived: from the end of the header to the next region
	NameRegion     Region
	ModuleRegions  [MaxModules]Region
	ModuleVersions [MaxModules]uint32
	// Size is the number of bytes the header occupies in the file.
	Size int
}

// PartialModule reports whether module m's data is incomplete.
func (h *Header) PartialModule(m ModuleID) bool {
	return m >= 0 && m < MaxModules && h.Partial&(1<<uint(m)) != 0
}

// parseVersion reads the version string as darshan-util does (sscanf
// "%d.%d"): leading blanks, optional sign, digits, '.', digits.
func parseVersion(s string) (major, minor int, ok bool) {
	i := 0
	num := func() (int, bool) {
		for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
			i++
		}
		start := i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		digits := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == digits {
			return 0, false
		}
		v, err := strconv.Atoi(s[start:i])
		return v, err == nil
	}
	if major, ok = num(); !ok {
		return 0, 0, false
	}
	if i >= len(s) || s[i] != '.' {
		return 0, 0, false
	}
	i++
	minor, ok = num()
	return major, minor, ok
}

// knownVersions are the format versions this reader reads, as the runtime
// writes them.
var knownVersions = []string{"3.00", "3.10", "3.20", "3.21", "3.41"}

// readHeader reads and checks the header, and remaps old module ids.
//
// The magic number decides whether the file is a log at all, before the
// version string is looked at: random bytes or a gzip file are not a log
// of an unknown version. No error quotes the file's bytes (the version
// string included): a drop directory is written by its users, and what is
// refused gets logged.
func (l *Log) readHeader() error {
	h := &l.Header
	fail := func(err error) error { return &FormatError{Log: l.Name, Region: "header", Offset: -1, Err: err} }

	const idSize = 16 // version string and magic number
	vb, err := l.readAt(0, min(idSize, l.size))
	if err != nil {
		return fail(err)
	}
	if len(vb) < idSize {
		switch {
		case len(vb) == 0:
			return fail(causef(ErrTruncated, "the file is empty"))
		case allZero(vb):
			return fail(ErrIncomplete)
		case couldStartLog(vb):
			return fail(causef(ErrTruncated, "file has %d bytes, too short for a header", l.size))
		}
		return fail(causef(ErrNotDarshan, "file has %d bytes and does not start as a log", l.size))
	}
	switch {
	case binary.LittleEndian.Uint64(vb[8:]) == magicNumber:
	case binary.BigEndian.Uint64(vb[8:]) == magicNumber:
		h.BigEndian = true
	default:
		if allZero(vb) {
			return fail(ErrIncomplete)
		}
		return fail(ErrNotDarshan)
	}
	h.Version = cString(vb[:8])
	var ok bool
	h.Major, h.Minor, ok = parseVersion(h.Version)
	if !ok || h.Major != 3 || (h.Minor != 0 && h.Minor != 10 && h.Minor != 20 && h.Minor != 21 && h.Minor != 41) {
		return fail(causef(ErrUnsupportedVersion, "a version string of %d bytes that is not a known version (this reader knows %s)",
			len(h.Version), strings.Join(knownVersions, ", ")))
	}
	slots := MaxModules
	h.Size = headerSize341
	if h.Minor < 41 {
		slots, h.Size = oldModules, headerSize300
	}
	b, err := l.readAt(0, min(int64(h.Size), l.size))
	if err != nil || len(b) < h.Size {
		return fail(causef(ErrTruncated, "file has %d bytes, the %d.%02d header needs %d", l.size, h.Major, h.Minor, h.Size))
	}

	big := h.BigEndian
	h.Compression = Compression(b[16])
	// The old header has a 32-bit partial flag at offset 20 and its maps at
	// 24; the 3.41 header a 64-bit flag at 24 and its maps at 32.
	maps := 32
	if h.Minor < 41 {
		h.Partial = uint64(getUint32(b[20:], big))
		maps = 24
	} else {
		h.Partial = getUint64(b[24:], big)
	}
	h.NameRegion = Region{getUint64(b[maps:], big), getUint64(b[maps+8:], big)}
	versions := maps + 16 + 16*slots
	for i := range slots {
		h.ModuleRegions[i] = Region{getUint64(b[maps+16+16*i:], big), getUint64(b[maps+24+16*i:], big)}
		h.ModuleVersions[i] = getUint32(b[versions+4*i:], big)
	}
	if h.Minor < 20 {
		h.insertModuleSlot(H5D)
	}
	if h.Minor < 41 {
		h.insertModuleSlot(PnetCDFVar)
	}
	h.JobRegion = l.jobRegion()
	return nil
}

// insertModuleSlot opens an empty slot at id for a module the log's format
// did not have yet: the slots from id on move up by one, the last one falls
// off, and so do the partial flags.
func (h *Header) insertModuleSlot(id ModuleID) {
	copy(h.ModuleRegions[id+1:], h.ModuleRegions[id:MaxModules-1])
	copy(h.ModuleVersions[id+1:], h.ModuleVersions[id:MaxModules-1])
	h.ModuleRegions[id] = Region{}
	h.ModuleVersions[id] = 0
	low := h.Partial & (1<<uint(id) - 1)
	high := (h.Partial << 1) &^ (1<<uint(id+1) - 1)
	h.Partial = low | high
}

// jobRegion derives the job region, which the header has no map for: it
// runs from the end of the header to the name region, or when there is none
// to the first module region (in id order, as darshan-util does), or to the
// end of the file.
func (l *Log) jobRegion() Region {
	h := &l.Header
	start := uint64(h.Size)
	end := h.NameRegion.Offset
	if end == 0 {
		for _, r := range h.ModuleRegions {
			if r.Offset != 0 {
				end = r.Offset
				break
			}
		}
	}
	if end == 0 {
		end = uint64(l.size)
	}
	return Region{Offset: start, Length: end - start} // wraps when end < start; checked when read
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// couldStartLog reports whether b, shorter than a version string and a
// magic number, is how a log of a known version starts.
func couldStartLog(b []byte) bool {
	var start [16]byte
	for _, v := range knownVersions {
		copy(start[:], v)
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			o.PutUint64(start[8:], magicNumber)
			if bytes.HasPrefix(start[:], b) {
				return true
			}
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
