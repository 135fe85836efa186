// Package edgeversions keeps the router's Lambda@Edge function from
// filling Lambda's code storage. Every routing-table change publishes a
// new version of the function (up to ~19 MiB at a million overrides), and
// a published version stays until it is deleted; each one counts against
// the Region's "Function and layer storage" quota (75 GB by default; AWS
// Lambda Developer Guide, "Lambda quotas"). After a router change
// succeeds, Prune deletes the versions nothing can still use: it keeps
// every version a distribution's Lambda@Edge association names (primary
// and staging, read from the deployed state), every version the run
// itself pinned (a canary's primary, its rollback target), and the Keep
// newest, and deletes the older ones.
//
// CloudFront holds replicas of a version for hours after the last
// association to it was removed, and Lambda refuses to delete a version
// with replicas ("…because it is a replicated function"; Amazon CloudFront
// Developer Guide, "Delete Lambda@Edge functions and replicas": replicas
// are typically deleted within a few hours — delete the version then). Such
// a version is left for the next router change, which tries again, and
// the run reports it; a failed delete never fails the change.
package edgeversions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/cellctl/cellctl/internal/awsapi"
)

// DefaultKeep is how many of the newest versions the router keeps beside
// those referenced (cells:edgeVersionsKept): room to roll back through the
// last few table changes by pinning an old version.
const DefaultKeep = 10

// Reference is a version something can still run: a qualified function
// ARN (…:function:name:7) and what references it.
type Reference struct {
	ARN string
	By  string
}

// Kept is a version kept, and why.
type Kept struct {
	Version int
	Why     string
}

// Decision is what Decide chose: versions kept (with the reason) and
// versions to delete, both in ascending order.
type Decision struct {
	Keep   []Kept
	Delete []int
}

// VersionOf is the version number of a qualified function ARN; false for
// an unqualified ARN, $LATEST or an alias.
func VersionOf(arn string) (int, bool) {
	i := strings.LastIndex(arn, ":")
	if i < 0 || strings.Count(arn, ":") < 7 {
		return 0, false
	}
	n, err := strconv.Atoi(arn[i+1:])
	return n, err == nil && n > 0
}

// Decide chooses which of the published versions to keep and which to
// delete: a version a reference names is kept, the keep newest are kept,
// the rest are deleted. A reference that names no version number (an
// unqualified ARN, $LATEST) cannot be decided: nothing is deleted then
// (the error says why) — a version is only ever deleted when the deployed
// state says what runs.
func Decide(versions []int, refs []Reference, keep int) (Decision, error) {
	if keep < 1 {
		return Decision{}, fmt.Errorf("keeping %d versions: at least the newest one is kept", keep)
	}
	why := map[int][]string{}
	for _, r := range refs {
		n, ok := VersionOf(r.ARN)
		if !ok {
			return Decision{}, fmt.Errorf("%s references %q, which names no published version: cannot tell which versions are unused, deleting none", r.By, r.ARN)
		}
		if !contains(why[n], r.By) {
			why[n] = append(why[n], r.By)
		}
	}
	sorted := append([]int(nil), versions...)
	sort.Ints(sorted)
	newest := map[int]bool{}
	for i := len(sorted) - 1; i >= 0 && len(sorted)-i <= keep; i-- {
		newest[sorted[i]] = true
	}
	var d Decision
	for _, v := range sorted {
		reasons := why[v]
		if newest[v] && keep == 1 {
			reasons = append(reasons, "the newest")
		} else if newest[v] {
			reasons = append(reasons, fmt.Sprintf("one of the %d newest", keep))
		}
		if len(reasons) > 0 {
			d.Keep = append(d.Keep, Kept{Version: v, Why: strings.Join(reasons, ", ")})
			continue
		}
		d.Delete = append(d.Delete, v)
	}
	return d, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// API is what pruning needs of Lambda (awsapi.Lambda; tests use fakes).
type API interface {
	Versions(ctx context.Context, function string) ([]awsapi.FunctionVersion, error)
	DeleteVersion(ctx context.Context, function, version string) error
}

// Options say what to prune.
type Options struct {
	// Function is the edge function's name or ARN.
	Function string
	// References are the versions something can still run.
	References []Reference
	// Keep is how many of the newest versions stay besides the referenced
	// ones (≤ 0: DefaultKeep).
	Keep int
	// Tries bounds the attempts of one delete that fails transiently
	// (throttling past the SDK's own retries, a 5xx); 0: 3. A replica
	// refusal is not retried within the run: it lasts hours.
	Tries uint
	// Backoff is the first wait between tries (0: 200ms; tests set 1ns).
	Backoff time.Duration
}

// Report is what a prune did.
type Report struct {
	Function string
	Kept     []Kept
	// Deleted versions, with the storage they freed.
	Deleted    []int
	FreedBytes int64
	// Replicated are versions Lambda refused to delete because CloudFront
	// still holds replicas of them: tried again on the next router change.
	Replicated []int
	// Failed are versions whose delete failed otherwise.
	Failed map[int]error
	// Err is why nothing was decided (the versions could not be listed, a
	// reference named no version).
	Err error
}

// Prune lists the function's versions, decides, and deletes the unused
// ones. It never returns an error: what it could not do is in the
// report, for the run's notes.
func Prune(ctx context.Context, api API, o Options) Report {
	rep := Report{Function: o.Function}
	keep := o.Keep
	if keep <= 0 {
		keep = DefaultKeep
	}
	tries := o.Tries
	if tries == 0 {
		tries = 3
	}
	wait := o.Backoff
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	listed, err := backoff.Retry(ctx, func() ([]awsapi.FunctionVersion, error) {
		return api.Versions(ctx, o.Function)
	}, backoff.WithMaxTries(tries), backoff.WithBackOff(expo(wait)))
	if err != nil {
		rep.Err = err
		return rep
	}
	size := map[int]int64{}
	var numbers []int
	for _, v := range listed {
		if n := v.Number(); n > 0 {
			numbers = append(numbers, n)
			size[n] = v.CodeSize
		}
	}
	d, err := Decide(numbers, o.References, keep)
	if err != nil {
		rep.Err = err
		return rep
	}
	rep.Kept = d.Keep
	for _, n := range d.Delete {
		_, err := backoff.Retry(ctx, func() (struct{}, error) {
			err := api.DeleteVersion(ctx, o.Function, strconv.Itoa(n))
			if err != nil && (awsapi.IsReplicated(err) || awsapi.IsNotFound(err)) {
				return struct{}{}, backoff.Permanent(err)
			}
			return struct{}{}, err
		}, backoff.WithMaxTries(tries), backoff.WithBackOff(expo(wait)))
		switch {
		case err == nil, awsapi.IsNotFound(err):
			// Gone: deleted now, or by an earlier run whose answer was lost.
			rep.Deleted = append(rep.Deleted, n)
			rep.FreedBytes += size[n]
		case awsapi.IsReplicated(err):
			rep.Replicated = append(rep.Replicated, n)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			if rep.Failed == nil {
				rep.Failed = map[int]error{}
			}
			rep.Failed[n] = err
			return rep
		default:
			if rep.Failed == nil {
				rep.Failed = map[int]error{}
			}
			rep.Failed[n] = err
		}
	}
	return rep
}

func expo(first time.Duration) *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = first
	b.MaxInterval = 5 * time.Second
	return b
}

// Notes are the report as lines for the router run's result: what was
// deleted and kept, and what is left for the next change.
func (r Report) Notes() []string {
	if r.Err != nil {
		return []string{fmt.Sprintf("old edge function versions were not pruned (tried again on the next router change): %v", r.Err)}
	}
	var out []string
	if len(r.Deleted) > 0 {
		out = append(out, fmt.Sprintf("deleted %d old edge function version(s) of %s (%s), freeing %s of Lambda code storage; kept %s",
			len(r.Deleted), r.Function, joinInts(r.Deleted), human(r.FreedBytes), r.keptLine()))
	}
	if len(r.Replicated) > 0 {
		out = append(out, fmt.Sprintf("edge function version(s) %s of %s still have CloudFront replicas (Lambda deletes a version only hours after its last distribution stopped using it): tried again on the next router change",
			joinInts(r.Replicated), r.Function))
	}
	if len(r.Failed) > 0 {
		var vs []int
		for v := range r.Failed {
			vs = append(vs, v)
		}
		sort.Ints(vs)
		var parts []string
		for _, v := range vs {
			parts = append(parts, fmt.Sprintf("%d: %v", v, r.Failed[v]))
		}
		out = append(out, fmt.Sprintf("could not delete old edge function version(s) of %s (tried again on the next router change): %s", r.Function, strings.Join(parts, "; ")))
	}
	return out
}

func (r Report) keptLine() string {
	var parts []string
	for _, k := range r.Kept {
		parts = append(parts, fmt.Sprintf("%d (%s)", k.Version, k.Why))
	}
	return strings.Join(parts, ", ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
