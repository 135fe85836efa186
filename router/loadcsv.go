package router

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/diag"
)

// FoldLoad reads a load file — CSV with a header line "tenant,load" or
// "bucket,load", e.g. request counts exported from the edge's logs — and
// folds it onto t's buckets with the router's own hashing: a tenant's load
// goes to its bucket, or, when an override pins the tenant, to the
// tenant (so it counts in the override's cell). Buckets the file does not
// mention carry no load; several lines for one tenant or bucket add up.
// Loads are whole load units from 0 to MaxBucketLoad. Every problem is
// reported with its line.
func FoldLoad(t *Table, file string, data []byte) (*LoadFigures, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // spreadsheets write a BOM
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	l := &LoadFigures{Source: file, Buckets: make([]int64, t.Buckets())}
	var errs diag.List
	const maxErrors = 20
	var total int64
	byTenant := false
	header := true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				errs.Add(file, pe.Line, "", "malformed CSV: %v", pe.Err)
			} else {
				errs.Add(file, 0, "", "cannot read: %v", err)
			}
			break
		}
		line, _ := r.FieldPos(0)
		if header {
			header = false
			if len(rec) == 2 && strings.EqualFold(strings.TrimSpace(rec[1]), "load") {
				switch strings.ToLower(strings.TrimSpace(rec[0])) {
				case "tenant":
					byTenant = true
					continue
				case "bucket":
					continue
				}
			}
			errs.Add(file, line, "", "the first line must be the header \"tenant,load\" or \"bucket,load\"; got %q", strings.Join(rec, ","))
			break
		}
		if errs.Len() >= maxErrors {
			errs.Add(file, line, "", "too many problems; fix the ones above and check again")
			break
		}
		if len(rec) != 2 {
			errs.Add(file, line, "", "expected 2 fields (%s,load), got %d", keyName(byTenant), len(rec))
			continue
		}
		key, val := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < 0 || v > MaxBucketLoad {
			errs.Add(file, line, "load", "must be a whole number of load units from 0 to %d; got %q", int64(MaxBucketLoad), val)
			continue
		}
		if total += v; total > MaxBucketLoad*16 {
			errs.Add(file, line, "load", "the loads add up to more than %d; use a coarser unit", int64(MaxBucketLoad)*16)
			break
		}
		if byTenant {
			tenant := rec[0] // as exported: tenant ids are exact
			if err := ValidTenant(tenant); err != nil {
				errs.Add(file, line, "tenant", "%v", err)
				continue
			}
			if _, pinned := t.Override(tenant); pinned {
				if l.Pinned == nil {
					l.Pinned = map[string]int64{}
				}
				l.Pinned[tenant] += v
				continue
			}
			l.Buckets[t.Route(tenant).Bucket] += v
			continue
		}
		b, err := strconv.Atoi(key)
		if err != nil || b < 0 || b >= t.Buckets() {
			errs.Add(file, line, "bucket", "must be a bucket number from 0 to %d; got %q", t.Buckets()-1, key)
			continue
		}
		l.Buckets[b] += v
	}
	if header && errs.Len() == 0 {
		errs.Add(file, 1, "", "the file is empty; expected the header \"tenant,load\" or \"bucket,load\" and one line per tenant or bucket")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return l, nil
}

func keyName(byTenant bool) string {
	if byTenant {
		return "tenant"
	}
	return "bucket"
}
