package plan

import (
	"fmt"
	"math"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/router/component"
)

// edgeRegion is where the edge function and its code live.
const edgeRegion = component.EdgeRegion

// EdgeVersionBytes is the size of one published version of the router's
// edge function as this render packages it: the bytes of the files of its
// code archive (Lambda stores the .zip, which is smaller, so this is the
// fail-closed side of the code storage it takes). An error when the stack
// publishes no function or its code cannot be sized offline.
func (s *Stack) EdgeVersionBytes() (int64, error) {
	for _, r := range s.recorded {
		if !r.Custom || r.Type != "aws:lambda/function:Function" {
			continue
		}
		if p := r.Inputs["publish"]; !p.IsBool() || !p.BoolValue() {
			continue
		}
		code := r.Inputs["code"]
		if code.IsSecret() {
			code = code.SecretValue().Element
		}
		if code.IsOutput() {
			code = code.OutputValue().Element
		}
		if !code.IsArchive() {
			return 0, fmt.Errorf("%s: the edge function's code is not known offline", s.Name)
		}
		return archiveBytes(code.ArchiveValue())
	}
	return 0, fmt.Errorf("%s publishes no Lambda function", s.Name)
}

func archiveBytes(a *resource.Archive) (int64, error) {
	var n int64
	for name, x := range a.Assets {
		switch t := x.(type) {
		case *resource.Asset:
			b, err := t.Bytes()
			if err != nil {
				return 0, fmt.Errorf("sizing %s: %w", name, err)
			}
			n += int64(len(b))
		case *resource.Archive:
			m, err := archiveBytes(t)
			if err != nil {
				return 0, err
			}
			n += m
		}
	}
	if len(a.Assets) == 0 && a.Path != "" {
		return 0, fmt.Errorf("sizing archive %s: only in-memory archives are sized", a.Path)
	}
	return n, nil
}

// EdgeStorageVersions is how many copies of the edge function's code the
// router holds at most once old versions are pruned: the kept newest, the
// versions the primary and the staging distribution run when those are
// older, and $LATEST (Lambda stores the unpublished code too).
func EdgeStorageVersions(kept int) int { return kept + 3 }

// edgeStorageDemand is what the router's edge function holds of Lambda's
// code storage in us-east-1 (in GiB, the quota's unit) at most: the
// package as rendered × EdgeStorageVersions. A fleet with no router, or
// whose package cannot be sized, adds nothing here (the audit's
// `cellctl quota` reads the real usage).
func (r *Report) edgeStorageDemand() (Demand, bool) {
	for _, s := range r.Stacks {
		if s.Kind != KindRouter {
			continue
		}
		n, err := s.EdgeVersionBytes()
		if err != nil {
			return Demand{}, false
		}
		gib := float64(n) * float64(EdgeStorageVersions(r.edgeKept)) / awsfacts.GiB
		return Demand{Code: awsfacts.LambdaCodeStorage.Code, Scope: edgeRegion, Region: edgeRegion, Account: s.Account,
			Amount: math.Ceil(gib*1000) / 1000, Stacks: []string{s.Name}}, true
	}
	return Demand{}, false
}
