package executor

import "encoding/json"

// cloneRecord deep-copies a record through JSON, its stored form, so an
// Outcome cannot alias the run's working state.
func cloneRecord(r *Record) *Record {
	raw, err := json.Marshal(r)
	if err != nil {
		cp := *r
		return &cp
	}
	var out Record
	if json.Unmarshal(raw, &out) != nil {
		cp := *r
		return &cp
	}
	return &out
}
