package awsmodel

import (
	"fmt"
	"strings"
	"time"
)

// LambdaRuntime is one managed runtime of Lambda's runtime table with the
// three dates of its deprecation path. Lambda keeps running functions on a
// deprecated runtime; from BlockCreate it refuses CreateFunction with it,
// and from BlockUpdate it refuses updating a function on it (code or
// configuration) — for the router that is every routing-table change.
type LambdaRuntime struct {
	ID string
	// Deprecated, BlockCreate and BlockUpdate are the table's dates; a zero
	// date is "not scheduled".
	Deprecated, BlockCreate, BlockUpdate time.Time
	// Doc names the page of the Lambda Developer Guide the row is from.
	Doc string
}

// LambdaRuntimeDoc is the policy behind the table's dates.
const LambdaRuntimeDoc = "AWS Lambda Developer Guide, Lambda runtimes (supported runtimes: deprecation date, block function create, block function update) and Runtime deprecation"

const (
	docNode   = "AWS Lambda Developer Guide, Building Lambda functions with Node.js (supported runtimes)"
	docPython = "AWS Lambda Developer Guide, Building Lambda functions with Python (supported runtimes)"
	docJava   = "AWS Lambda Developer Guide, Building Lambda functions with Java (supported runtimes)"
	docDotnet = "AWS Lambda Developer Guide, Building Lambda functions with C# / PowerShell (runtimes for .NET languages)"
	docRuby   = "AWS Lambda Developer Guide, Building Lambda functions with Ruby (supported runtimes)"
	docOSOnly = "AWS Lambda Developer Guide, When to use Lambda's OS-only runtimes"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func runtimeRow(id, deprecated, blockCreate, blockUpdate, doc string) LambdaRuntime {
	r := LambdaRuntime{ID: id, Doc: doc}
	for _, d := range []struct {
		s string
		t *time.Time
	}{{deprecated, &r.Deprecated}, {blockCreate, &r.BlockCreate}, {blockUpdate, &r.BlockUpdate}} {
		if d.s != "" {
			*d.t = day(d.s)
		}
	}
	return r
}

// LambdaRuntimes are the runtimes Lambda accepts for .zip functions, each
// row as the Lambda Developer Guide's runtime tables give it (read
// 2026-12). A runtime missing here is one Lambda no longer lists:
// nodejs18.x and python3.9 were dropped because no AWS table read for this
// one still shows their dates (every schedule AWS published for them has
// passed both blocks). AWS has moved block dates later before (nodejs20.x
// first read Jun 1 / Jul 1, 2026); update a row from the guide, never
// from memory.
//
// Each date is judged from 00:00 UTC; AWS starts a phase at midnight
// Pacific time, so the model refuses a few hours early, never late.
var LambdaRuntimes = []LambdaRuntime{
	runtimeRow("nodejs24.x", "2028-04-30", "2028-06-01", "2028-07-01", docNode),
	runtimeRow("nodejs22.x", "2027-04-30", "2027-06-01", "2027-07-01", docNode),
	runtimeRow("nodejs20.x", "2026-04-30", "2026-08-31", "2026-09-30", docNode),
	runtimeRow("python3.14", "2029-06-30", "2029-07-31", "2029-08-31", docPython),
	runtimeRow("python3.13", "2029-06-30", "2029-07-31", "2029-08-31", docPython),
	runtimeRow("python3.12", "2028-10-31", "2028-11-30", "2029-01-10", docPython),
	runtimeRow("python3.11", "2027-06-30", "2027-07-31", "2027-08-31", docPython),
	runtimeRow("python3.10", "2026-10-31", "2026-11-30", "2027-01-15", docPython),
	runtimeRow("java25", "2029-06-30", "2029-07-31", "2029-08-31", docJava),
	runtimeRow("java21", "2029-06-30", "2029-07-31", "2029-08-31", docJava),
	runtimeRow("java17", "2027-06-30", "2027-07-31", "2027-08-31", docJava),
	runtimeRow("java11", "2027-06-30", "2027-07-31", "2027-08-31", docJava),
	runtimeRow("java8.al2", "2027-06-30", "2027-07-31", "2027-08-31", docJava),
	runtimeRow("dotnet10", "2028-11-14", "2028-12-14", "2029-01-15", docDotnet),
	runtimeRow("dotnet8", "2026-11-10", "2026-12-10", "2027-01-11", docDotnet),
	runtimeRow("ruby4.0", "2029-03-31", "2029-04-30", "2029-05-31", docRuby),
	runtimeRow("ruby3.4", "2028-03-31", "2028-04-30", "2028-05-31", docRuby),
	runtimeRow("ruby3.3", "2027-03-31", "2027-04-30", "2027-05-31", docRuby),
	runtimeRow("ruby3.2", "2026-03-31", "2026-08-31", "2026-09-30", docRuby),
	runtimeRow("provided.al2023", "2029-06-30", "2029-07-31", "2029-08-31", docOSOnly),
	runtimeRow("provided.al2", "2026-07-31", "2026-08-31", "2026-09-30", docOSOnly),
}

// LambdaRuntimeIDs lists the identifiers of LambdaRuntimes.
func LambdaRuntimeIDs() []string {
	out := make([]string, len(LambdaRuntimes))
	for i, r := range LambdaRuntimes {
		out[i] = r.ID
	}
	return out
}

// LookupLambdaRuntime finds a runtime of the table.
func LookupLambdaRuntime(id string) (LambdaRuntime, bool) {
	for _, r := range LambdaRuntimes {
		if r.ID == id {
			return r, true
		}
	}
	return LambdaRuntime{}, false
}

func reached(d, at time.Time) bool { return !d.IsZero() && !at.Before(d) }

// Blocked reports whether Lambda refuses op (OpCreate: a new function;
// OpUpdate: a change to an existing one) with this runtime at at.
func (r LambdaRuntime) Blocked(op int, at time.Time) bool {
	if op == OpUpdate {
		return reached(r.BlockUpdate, at)
	}
	return reached(r.BlockCreate, at)
}

// Notice describes the deprecation path of the runtime when one of its
// dates has passed by at or falls within horizon of it ("" otherwise):
// what a plan warns about before Lambda starts refusing.
func (r LambdaRuntime) Notice(at time.Time, horizon time.Duration) string {
	limit := at.Add(horizon)
	soon := false
	for _, d := range []time.Time{r.Deprecated, r.BlockCreate, r.BlockUpdate} {
		soon = soon || !d.IsZero() && !d.After(limit)
	}
	if !soon {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		what string
		d    time.Time
	}{{"deprecated", r.Deprecated}, {"new functions blocked", r.BlockCreate}, {"updates blocked", r.BlockUpdate}} {
		if p.d.IsZero() {
			continue
		}
		when := "from"
		if reached(p.d, at) {
			when = "since"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", p.what, when, p.d.Format("2006-01-02")))
	}
	return fmt.Sprintf("Lambda runtime %s: %s; move the function to a supported runtime before updates are blocked (%s)", r.ID, strings.Join(parts, ", "), r.Doc)
}

// runtimeBlockedMessage is Lambda's InvalidParameterValueException for a
// runtime past its block date, as CreateFunction and the Update* calls
// return it.
func runtimeBlockedMessage(id string) string {
	return fmt.Sprintf("The runtime parameter of %s is no longer supported for creating or updating AWS Lambda functions. We recommend you use a supported runtime while creating or updating functions.", id)
}

// FunctionType is the token of a Lambda function.
const FunctionType = tFunction
