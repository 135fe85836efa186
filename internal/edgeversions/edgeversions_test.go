package edgeversions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/cellctl/cellctl/internal/awsapi"
)

const fn = "arn:aws:lambda:us-east-1:123456789012:function:router-edge-1a2b3c4"

func arn(v int) string { return fn + ":" + strconv.Itoa(v) }

func versions(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestDecideKeepsWhatTheDistributionsRunAndTheNewest(t *testing.T) {
	// A canary in flight: the staging distribution runs an old version
	// (a candidate published long ago), the primary another.
	refs := []Reference{{ARN: arn(9), By: "primary distribution"}, {ARN: arn(3), By: "staging distribution"}}
	d, err := Decide(versions(20), refs, 4)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int
	for _, k := range d.Keep {
		kept = append(kept, k.Version)
	}
	if want := []int{3, 9, 17, 18, 19, 20}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if want := []int{1, 2, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16}; !reflect.DeepEqual(d.Delete, want) {
		t.Errorf("deleted %v, want %v", d.Delete, want)
	}
	if d.Keep[0].Why != "staging distribution" {
		t.Errorf("version 3 kept because %q", d.Keep[0].Why)
	}
}

func TestDecideDeletesNothingWhenAReferenceNamesNoVersion(t *testing.T) {
	for _, ref := range []string{fn, fn + ":$LATEST", fn + ":live", ""} {
		d, err := Decide(versions(20), []Reference{{ARN: ref, By: "primary distribution"}}, 2)
		if err == nil || len(d.Delete) > 0 {
			t.Errorf("reference %q: decided %+v, %v; want an error and no delete", ref, d, err)
		}
	}
	if _, err := Decide(versions(3), nil, 0); err == nil {
		t.Error("keeping 0 versions must be refused")
	}
}

func TestDecideKeepsEverythingUnderTheCount(t *testing.T) {
	d, err := Decide(versions(5), []Reference{{ARN: arn(5), By: "primary distribution"}}, DefaultKeep)
	if err != nil || len(d.Delete) != 0 || len(d.Keep) != 5 {
		t.Errorf("5 versions, keep %d: %+v, %v", DefaultKeep, d, err)
	}
}

// fakeLambda is a function's versions; deletes of a version in replicated
// fail as Lambda does while CloudFront holds replicas of it.
type fakeLambda struct {
	versions   map[int]int64
	replicated map[int]bool
	flaky      map[int]int // transient failures left, per version
	deletes    []int
	listErr    error
}

func (f *fakeLambda) Versions(context.Context, string) ([]awsapi.FunctionVersion, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []awsapi.FunctionVersion
	for v, size := range f.versions {
		out = append(out, awsapi.FunctionVersion{Version: strconv.Itoa(v), ARN: arn(v), CodeSize: size})
	}
	return out, nil
}

func (f *fakeLambda) DeleteVersion(_ context.Context, _ string, version string) error {
	v, _ := strconv.Atoi(version)
	f.deletes = append(f.deletes, v)
	if f.flaky[v] > 0 {
		f.flaky[v]--
		return errors.New("Lambda DeleteFunction: ServiceException: internal error")
	}
	if f.replicated[v] {
		return fmt.Errorf("Lambda DeleteFunction %s:%d: %w", fn, v, &types.InvalidParameterValueException{
			Message: aws.String(fmt.Sprintf("Lambda was unable to delete %s because it is a replicated function. Please see our documentation for Deleting Lambda@Edge Functions and Replicas.", arn(v)))})
	}
	if _, ok := f.versions[v]; !ok {
		return &types.ResourceNotFoundException{Message: aws.String("Function not found")}
	}
	delete(f.versions, v)
	return nil
}

func newFake(n int) *fakeLambda {
	f := &fakeLambda{versions: map[int]int64{}, replicated: map[int]bool{}, flaky: map[int]int{}}
	for v := 1; v <= n; v++ {
		f.versions[v] = 19 << 20
	}
	return f
}

func TestAReplicatedVersionIsLeftForTheNextChangeAndDeletedThen(t *testing.T) {
	f := newFake(6)
	// Version 4 ran on the primary until this change: CloudFront still
	// has its replicas.
	f.replicated[4] = true
	o := Options{Function: fn, References: []Reference{{ARN: arn(6), By: "primary distribution"}}, Keep: 2, Backoff: 1}
	rep := Prune(context.Background(), f, o)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if !reflect.DeepEqual(rep.Deleted, []int{1, 2, 3}) || !reflect.DeepEqual(rep.Replicated, []int{4}) || len(rep.Failed) != 0 {
		t.Fatalf("deleted %v, replicated %v, failed %v", rep.Deleted, rep.Replicated, rep.Failed)
	}
	if n := strings.Count(fmt.Sprint(f.deletes), "4"); n != 1 {
		t.Errorf("a replica refusal lasts hours: version 4 was tried %d times in one run, want 1", n)
	}
	notes := strings.Join(rep.Notes(), "\n")
	if !strings.Contains(notes, "4 of "+fn+" still have CloudFront replicas") || !strings.Contains(notes, "tried again on the next router change") {
		t.Errorf("notes do not report the replicated version:\n%s", notes)
	}
	if rep.FreedBytes != 3*19<<20 {
		t.Errorf("freed %d bytes", rep.FreedBytes)
	}

	// Hours later CloudFront has removed the replicas: the next router
	// change (version 7 published) deletes it.
	f.replicated[4] = false
	f.versions[7] = 19 << 20
	o.References = []Reference{{ARN: arn(7), By: "primary distribution"}}
	rep = Prune(context.Background(), f, o)
	if !reflect.DeepEqual(rep.Deleted, []int{4, 5}) || len(rep.Replicated) != 0 {
		t.Fatalf("second change: deleted %v, replicated %v", rep.Deleted, rep.Replicated)
	}
}

func TestATransientDeleteFailureIsRetried(t *testing.T) {
	f := newFake(3)
	f.flaky[1] = 2
	rep := Prune(context.Background(), f, Options{Function: fn, References: []Reference{{ARN: arn(3), By: "primary distribution"}}, Keep: 1, Backoff: 1})
	if !reflect.DeepEqual(rep.Deleted, []int{1, 2}) || len(rep.Failed) != 0 {
		t.Fatalf("deleted %v, failed %v (tries %v)", rep.Deleted, rep.Failed, f.deletes)
	}
	f = newFake(3)
	f.flaky[1] = 5
	rep = Prune(context.Background(), f, Options{Function: fn, References: []Reference{{ARN: arn(3), By: "primary distribution"}}, Keep: 1, Backoff: 1, Tries: 3})
	if rep.Failed[1] == nil || !reflect.DeepEqual(rep.Deleted, []int{2}) {
		t.Fatalf("a delete failing every try must be reported, the others still deleted: %+v", rep)
	}
	if len(rep.Notes()) == 0 || !strings.Contains(strings.Join(rep.Notes(), " "), "could not delete") {
		t.Errorf("notes: %v", rep.Notes())
	}
}

func TestAVersionAlreadyGoneCountsAsDeleted(t *testing.T) {
	f := newFake(3)
	api := &goneFirst{fakeLambda: f}
	rep := Prune(context.Background(), api, Options{Function: fn, References: []Reference{{ARN: arn(3), By: "primary distribution"}}, Keep: 1, Backoff: 1})
	if !reflect.DeepEqual(rep.Deleted, []int{1, 2}) || len(rep.Failed) != 0 {
		t.Fatalf("%+v", rep)
	}
}

// goneFirst lists version 1 but someone else deleted it already.
type goneFirst struct{ *fakeLambda }

func (g *goneFirst) DeleteVersion(ctx context.Context, f, v string) error {
	if v == "1" {
		delete(g.versions, 1)
	}
	return g.fakeLambda.DeleteVersion(ctx, f, v)
}

func TestAnUnreadableListDeletesNothing(t *testing.T) {
	f := newFake(30)
	f.listErr = errors.New("AccessDeniedException: lambda:ListVersionsByFunction")
	rep := Prune(context.Background(), f, Options{Function: fn, Keep: 1, Backoff: 1})
	if rep.Err == nil || len(f.deletes) != 0 {
		t.Fatalf("%+v, deletes %v", rep, f.deletes)
	}
	if !strings.Contains(rep.Notes()[0], "not pruned") {
		t.Errorf("notes %v", rep.Notes())
	}
}
