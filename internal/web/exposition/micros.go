package exposition

import "strconv"

// SampleMicros writes a sample whose value is micros microseconds, in
// seconds: the text of AppendFloat(float64(micros)/1e6), built from the
// integer's digits. Lustre counts service times in microseconds, and a
// 100,000-job scrape writes a few hundred thousand of them; the shortest
// float formatting was most of their cost.
func (w *Writer) SampleMicros(micros uint64, created float64) error {
	if w.proto {
		return w.protoSample(float64(micros)/1e6, created)
	}
	w.line = AppendMicros(w.line[:0], micros)
	return w.sample(created)
}

// AppendMicros appends micros/1e6 as AppendFloat(float64(micros)/1e6)
// does. Below 10^15 the integer has at most 15 significant digits, so
// those digits are the shortest decimal that reads back as the quotient
// (a double tells apart every decimal of 15 digits or fewer): only their
// placement is left, by strconv's rule for 'g' with the shortest
// precision — an exponent when it is below -4 or 6 and above.
func AppendMicros(b []byte, micros uint64) []byte {
	if micros == 0 {
		return append(b, '0')
	}
	if micros >= 1e15 {
		return AppendFloat(b, float64(micros)/1e6)
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], micros, 10)
	point := len(digits) - 6 // digits before the decimal point
	nd := len(digits)
	for digits[nd-1] == '0' {
		nd--
	}
	switch exp := point - 1; {
	case exp < -4 || exp >= 6:
		b = append(b, digits[0])
		if nd > 1 {
			b = append(b, '.')
			b = append(b, digits[1:nd]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b, exp = append(b, '-'), -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	case point <= 0:
		b = append(b, '0', '.')
		for range -point {
			b = append(b, '0')
		}
		return append(b, digits[:nd]...)
	case nd <= point:
		return append(b, digits[:point]...)
	default:
		b = append(b, digits[:point]...)
		b = append(b, '.')
		return append(b, digits[point:nd]...)
	}
}
