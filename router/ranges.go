package router

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Range is an inclusive range of buckets, written "First-Last" (or "N" when
// First == Last) in routing.json.
type Range struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// Len is the number of buckets in r.
func (r Range) Len() int { return r.Last - r.First + 1 }

func (r Range) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// ParseRange reads "N" or "N-M" (decimal, no sign, no spaces, N ≤ M).
func ParseRange(s string) (Range, error) {
	first, last, dash := strings.Cut(s, "-")
	a, errA := parseBucketNumber(first)
	if !dash {
		if errA != nil {
			return Range{}, fmt.Errorf("%q is not a bucket range; use \"N\" or \"N-M\"", s)
		}
		return Range{a, a}, nil
	}
	b, errB := parseBucketNumber(last)
	if errA != nil || errB != nil {
		return Range{}, fmt.Errorf("%q is not a bucket range; use \"N\" or \"N-M\"", s)
	}
	if a > b {
		return Range{}, fmt.Errorf("%q runs backwards; write the lower bucket first (\"%d-%d\")", s, b, a)
	}
	return Range{a, b}, nil
}

// parseBucketNumber accepts only plain decimal digits without leading zeros,
// so every range has exactly one spelling.
func parseBucketNumber(s string) (int, error) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("bad number")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("bad number")
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, nil
}

// Ranges is a set of buckets kept as sorted, merged, inclusive ranges.
type Ranges []Range

// Count is the number of buckets in rs.
func (rs Ranges) Count() int {
	n := 0
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// Strings renders rs the way routing.json spells it.
func (rs Ranges) Strings() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

// String renders rs compactly for messages: "0-255, 512, 700-710".
func (rs Ranges) String() string { return strings.Join(rs.Strings(), ", ") }

// Contains reports whether bucket b is in rs.
func (rs Ranges) Contains(b int) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Last >= b })
	return i < len(rs) && rs[i].First <= b
}

// Normalize sorts rs and merges overlapping and adjacent ranges.
func (rs Ranges) Normalize() Ranges {
	if len(rs) == 0 {
		return nil
	}
	s := append(Ranges(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].First < s[j].First })
	out := s[:1]
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last+1 {
			if r.Last > last.Last {
				last.Last = r.Last
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// RangesOf collects the sorted bucket numbers in buckets into ranges.
func RangesOf(buckets []int) Ranges {
	var rs Ranges
	for _, b := range buckets {
		if n := len(rs); n > 0 && rs[n-1].Last+1 == b {
			rs[n-1].Last = b
			continue
		}
		rs = append(rs, Range{b, b})
	}
	return rs.Normalize()
}
