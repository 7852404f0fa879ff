package parsertext

import (
	"io"
	"math"
	"math/bits"
	"strconv"
)

// printer buffers output and keeps the first write error, so that the
// printing code reads like the printf calls it reproduces.
type printer struct {
	w   io.Writer
	buf []byte
	err error
}

// flushAt is the text a printer holds before it writes: few write calls
// (a dump of a big log is tens of megabytes), in a buffer that stays in
// the CPU caches.
const flushAt = 256 << 10

func newPrinter(w io.Writer) *printer { return &printer{w: w, buf: make([]byte, 0, 2*flushAt)} }

func (p *printer) maybeFlush() {
	if len(p.buf) >= flushAt {
		p.flush()
	}
}

func (p *printer) flush() {
	if p.err == nil && len(p.buf) > 0 {
		_, p.err = p.w.Write(p.buf)
	}
	p.buf = p.buf[:0]
}

func (p *printer) str(s string)  { p.buf = append(p.buf, s...) }
func (p *printer) byte(c byte)   { p.buf = append(p.buf, c) }
func (p *printer) int(v int64)   { p.buf = strconv.AppendInt(p.buf, v, 10) }
func (p *printer) uint(v uint64) { p.buf = strconv.AppendUint(p.buf, v, 10) }

// fixed appends v like C's "%.<prec>f".
func (p *printer) fixed(v float64, prec int) { p.buf = appendFixed(p.buf, v, prec) }

// padLeft appends s right-aligned in width columns, like "%<width>s".
func (p *printer) padLeft(s []byte, width int) {
	for i := len(s); i < width; i++ {
		p.buf = append(p.buf, ' ')
	}
	p.buf = append(p.buf, s...)
}

var pow10 = [...]uint64{1, 10, 100, 1000, 10000, 100000, 1000000}

// appendFixed formats v as C's printf("%.*f", prec, v) does with glibc: the
// exact binary value rounded half-to-even, "-" kept on negative zero and on
// negatives that round to zero, and inf/nan spelled the C way.
//
// The fast path computes the scaled value exactly with a 128-bit product;
// strconv handles the rest (its 'f' format is exact too, but slow).
func appendFixed(dst []byte, v float64, prec int) []byte {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	b := math.Float64bits(v)
	if b == 0 && prec == 6 { // +0: most floating point counters
		return append(dst, "0.000000"...)
	}
	neg := b>>63 != 0
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0 {
		exp = 1 // subnormal
	} else {
		mant |= 1 << 52
	}
	shift := 1075 - exp // v = mant / 2^shift
	scale := pow10[prec]
	var q uint64
	switch {
	case shift <= 0: // an integer: mant * 2^-shift
		if shift < -10 || mant > (math.MaxUint64/scale)>>uint(-shift) {
			return strconv.AppendFloat(dst, v, 'f', prec, 64)
		}
		q = (mant << uint(-shift)) * scale
	default:
		hi, lo := bits.Mul64(mant, scale)
		if shift >= 128 {
			q = 0 // far below half a unit of the last digit
		} else {
			var rem, half uint64
			var remHi bool
			if shift >= 64 {
				s := uint(shift - 64)
				q = hi >> s
				// remainder = (hi mod 2^s) * 2^64 + lo; compare with half = 2^(shift-1)
				remTop := hi & (1<<s - 1)
				switch {
				case s == 0:
					remHi = lo > 1<<63 || (lo == 1<<63 && q&1 == 1)
				default:
					halfTop := uint64(1) << (s - 1)
					remHi = remTop > halfTop || (remTop == halfTop && (lo != 0 || q&1 == 1))
				}
			} else {
				s := uint(shift)
				if hi>>s != 0 {
					return strconv.AppendFloat(dst, v, 'f', prec, 64)
				}
				q = hi<<(64-s) | lo>>s // s >= 1 here
				rem = lo & (1<<s - 1)
				half = 1 << (s - 1)
				remHi = rem > half || (rem == half && q&1 == 1)
			}
			if remHi {
				q++
			}
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, q/scale, 10)
	if prec > 0 {
		dst = append(dst, '.')
		frac := q % scale
		for d := scale / 10; d > 0; d /= 10 {
			dst = append(dst, byte('0'+frac/d%10))
		}
	}
	return dst
}

var (
	weekdays = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	months   = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// appendCtime appends what glibc's ctime() gives for t in UTC (the
// reference outputs were made with TZ=UTC): "Thu Nov  7 03:14:28 2019\n",
// or "(null)" — printf's rendering of the NULL that ctime returns — when the
// year does not fit a C int.
func appendCtime(dst []byte, t int64) []byte {
	days, secs := t/86400, t%86400
	if secs < 0 {
		secs += 86400
		days--
	}
	wday := (days + 4) % 7 // 1970-01-01 was a Thursday
	if wday < 0 {
		wday += 7
	}
	// civil date from days since the epoch (Howard Hinnant's algorithm)
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	year := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if month > 12 {
		month -= 12
	}
	if month <= 2 {
		year++
	}
	if year > math.MaxInt32 || year-1900 < math.MinInt32 {
		return append(dst, "(null)"...)
	}
	dst = append(dst, weekdays[wday]...)
	dst = append(dst, ' ')
	dst = append(dst, months[month-1]...)
	if day < 10 {
		dst = append(dst, ' ', ' ')
	} else {
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, day, 10)
	dst = append(dst, ' ')
	dst = append2(dst, secs/3600)
	dst = append(dst, ':')
	dst = append2(dst, secs/60%60)
	dst = append(dst, ':')
	dst = append2(dst, secs%60)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, year, 10)
	return append(dst, '\n')
}

func append2(dst []byte, v int64) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// appendCounter is appendInt for a counter's value: most are 0, a small
// count, or -1 (not monitored), written here without a call.
func appendCounter(dst []byte, v int64) []byte {
	switch {
	case uint64(v) < 10:
		return append(dst, byte('0'+v))
	case v == -1:
		return append(dst, '-', '1')
	}
	return strconv.AppendInt(dst, v, 10)
}
func appendUint(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }
