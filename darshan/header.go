package darshan

import (
	"encoding/binary"
	"strconv"
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

// readHeader reads and checks the header, and remaps old module ids.
func (l *Log) readHeader() error {
	h := &l.Header
	fail := func(err error) error { return &FormatError{Log: l.Name, Region: "header", Offset: -1, Err: err} }

	vb, err := l.readAt(0, min(8, l.size))
	if err != nil {
		return fail(err)
	}
	if len(vb) < 8 {
		return fail(causef(ErrTruncated, "file has %d bytes, too short for a version string", l.size))
	}
	h.Version = cString(vb)
	var ok bool
	if h.Major, h.Minor, ok = parseVersion(h.Version); !ok {
		if allZero(vb) {
			return fail(ErrIncomplete)
		}
		return fail(causef(ErrUnsupportedVersion, "cannot parse version string %q", h.Version))
	}
	if h.Major != 3 || (h.Minor != 0 && h.Minor != 10 && h.Minor != 20 && h.Minor != 21 && h.Minor != 41) {
		return fail(causef(ErrUnsupportedVersion, "version %q (this reader knows 3.00, 3.10, 3.20, 3.21, 3.41)", h.Version))
	}
	slots := MaxModules
	h.Size = headerSize341
	if h.Minor < 41 {
		slots, h.Size = oldModules, headerSize300
	}
	b, err := l.readAt(0, min(int64(h.Size), l.size))
	if err != nil || len(b) < h.Size {
		return fail(causef(ErrTruncated, "file has %d bytes, the %s header needs %d", l.size, h.Version, h.Size))
	}

	switch {
	case binary.LittleEndian.Uint64(b[8:]) == magicNumber:
	case binary.BigEndian.Uint64(b[8:]) == magicNumber:
		h.BigEndian = true
	default:
		if allZero(b) {
			return fail(ErrIncomplete)
		}
		return fail(ErrNotDarshan)
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

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
