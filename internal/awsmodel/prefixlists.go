package awsmodel

// ManagedPrefixList is an AWS-managed prefix list as
// DescribeManagedPrefixLists reports it.
type ManagedPrefixList struct {
	ID, Name   string
	MaxEntries int
}

// ManagedPrefixLists lists the AWS-managed prefix lists of env's region
// (the same lists getPrefixList and the rules-per-group quota use).
func ManagedPrefixLists(env Env) []ManagedPrefixList {
	var out []ManagedPrefixList
	for _, pl := range prefixLists(env.normalized()) {
		out = append(out, ManagedPrefixList{ID: pl.id, Name: pl.name, MaxEntries: pl.maxEntries})
	}
	return out
}
