package cmdutil

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/waves/executor"
)

// Completion of the names a fleet defines — its cells, its waves and its
// recorded rollouts — for the shell completion cobra generates
// (`cellctl completion bash|zsh|fish|powershell`). Each reads only what it
// names (the fleet's files; the backend's records for rollouts) and
// completes nothing, quietly, when that cannot be read: a completion
// never prints an error into the operator's command line.

// CompleteCells completes the fleet's cell ids not already given.
func (f *Factory) CompleteCells(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	fl, err := f.Fleet()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(fl.CellIDs(), args, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// CompleteOneCell completes a cell id for a command that takes one.
func (f *Factory) CompleteOneCell(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.CompleteCells(cmd, args, toComplete)
}

// CompleteWaves completes the wave names of the fleet's waves.yaml.
func (f *Factory) CompleteWaves(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	fl, err := f.Fleet()
	if err != nil || fl.Waves == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, w := range fl.Waves.Waves {
		names = append(names, w.Name)
	}
	return matching(names, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// CompleteRecords completes the ids of the backend's records (rollouts,
// router canaries, rotations, cell adds), newest first.
func (f *Factory) CompleteRecords(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	recs, err := f.Records()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b *executor.Record) int { return b.Started.Compare(a.Started) })
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	return matching(ids, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// matching are the names that start with prefix, less those in given.
func matching(names, given []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !slices.Contains(given, n) {
			out = append(out, n)
		}
	}
	return out
}
