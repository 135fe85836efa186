package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The Lambda API's view of the stored function code (functions/<region>/
// <name>/latest.json and <N>.json, written by WriteFunctionCode): the
// published versions ListVersionsByFunction lists, the code storage
// GetAccountSettings sums, and DeleteFunction with a qualifier.
//
// A version's code size is the bytes of its files (Lambda reports the
// .zip's size; the simulator keeps the files unzipped, so its sizes are a
// little larger — the fail-closed side of a storage quota).

// FunctionVersion is one published version of a simulated function.
type FunctionVersion struct {
	Version     string
	ARN         string
	CodeSize    int64
	Description string
}

// ErrNoFunction is a function (or version) the region does not hold:
// Lambda's ResourceNotFoundException.
var ErrNoFunction = errors.New("function not found")

// ReplicatedError is Lambda refusing to delete a version CloudFront still
// runs replicas of (a distribution's Lambda@Edge association names it).
type ReplicatedError struct{ ARN string }

func (e *ReplicatedError) Error() string {
	return fmt.Sprintf("Lambda was unable to delete %s because it is a replicated function. Please see our documentation for Deleting Lambda@Edge Functions and Replicas.", e.ARN)
}

// function finds a function of region by name, id or ARN (qualified or
// not); callers hold the lock.
func function(st *State, region, ref string) *Record {
	for _, r := range st.Resources {
		if r.Type != TypeFunction || r.Region != region {
			continue
		}
		if r.ID == ref || r.Name == ref || Refers(r, ref) {
			return r
		}
	}
	return nil
}

func codeSize(fc LambdaCode) int64 {
	var n int64
	for _, f := range fc.Files {
		n += int64(len(f))
	}
	return n
}

// FunctionVersions lists the published versions of a function in region,
// oldest first, with its unqualified ARN.
func (c *Cloud) FunctionVersions(region, ref string) (string, []FunctionVersion, error) {
	var fn, arn string
	err := c.s.view(func(st *State, _ *Control) error {
		r := function(st, region, ref)
		if r == nil {
			return ErrNoFunction
		}
		fn, arn = r.ID, Str(r.Outputs["arn"])
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(c.s.dir, functionDir, region, fn)
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return "", nil, err
	}
	var out []FunctionVersion
	for _, e := range entries {
		v := strings.TrimSuffix(e.Name(), ".json")
		if _, err := strconv.Atoi(v); err != nil {
			continue
		}
		var fc LambdaCode
		if err := ReadJSON(filepath.Join(dir, e.Name()), &fc); err != nil {
			return "", nil, err
		}
		out = append(out, FunctionVersion{Version: v, ARN: arn + ":" + v, CodeSize: codeSize(fc), Description: fc.Description})
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i].Version)
		b, _ := strconv.Atoi(out[j].Version)
		return a < b
	})
	return arn, out, nil
}

// DeleteFunctionVersion deletes one published version's code, as
// DeleteFunction with a Qualifier does. A version a distribution's
// Lambda@Edge association names is refused (*ReplicatedError): CloudFront
// holds replicas of it.
func (c *Cloud) DeleteFunctionVersion(region, ref, version string) error {
	if _, err := strconv.Atoi(version); err != nil {
		return fmt.Errorf("%w: version %q", ErrNoFunction, version)
	}
	return c.s.update(func(st *State, _ *Control) error {
		r := function(st, region, ref)
		if r == nil {
			return ErrNoFunction
		}
		qualified := Str(r.Outputs["arn"]) + ":" + version
		v := newView(st, c.s.codec)
		for _, d := range st.Resources {
			if d.Type == "aws:cloudfront/distribution:Distribution" && distributionLambdaArn(v, d) == qualified {
				return &ReplicatedError{ARN: qualified}
			}
		}
		path := filepath.Join(c.s.dir, functionDir, region, r.ID, versionFile(version))
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return ErrNoFunction
		}
		return os.Remove(path)
	})
}

// CodeStorage sums the code every function of region stores, $LATEST and
// each published version (AWS Lambda Developer Guide, "Lambda quotas":
// "Each function version and layer version consumes storage").
func (c *Cloud) CodeStorage(region string) (bytes int64, functions int, err error) {
	var names []string
	err = c.s.view(func(st *State, _ *Control) error {
		for _, r := range st.Resources {
			if r.Type == TypeFunction && r.Region == region {
				names = append(names, r.ID)
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	for _, fn := range names {
		dir := filepath.Join(c.s.dir, functionDir, region, fn)
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		for _, e := range entries {
			var fc LambdaCode
			if err := ReadJSON(filepath.Join(dir, e.Name()), &fc); err != nil {
				return 0, 0, err
			}
			bytes += codeSize(fc)
		}
	}
	return bytes, len(names), nil
}
