// Package fleet loads a fleet repository — Pulumi.yaml (the fleet baseline),
// every stack file under stackConfigDir, and waves.yaml — into one validated
// model. It is the single entry point from configuration files to the rest
// of cellctl: programs, plans, audits and rollouts all start from a *Fleet.
package fleet

import (
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves"
)

// RouterStack is the name of the global stack.
const RouterStack = "router"

// File names inside the stack directory.
const (
	WavesFile   = "waves.yaml"
	RoutingFile = "routing.json"
)

// OriginVerifyKey is the stack config key (in the project namespace) of the
// fleet-wide secret CloudFront sends to every cell's ALB. It must be a
// Pulumi secret (`secure:`) in every stack file that has it.
const OriginVerifyKey = "originVerifySecret"

// OriginVerifyNextKey is a cell's second accepted origin-verify value,
// set only while `cellctl secret rotate` replaces the secret (a Pulumi
// secret too).
const OriginVerifyNextKey = "originVerifySecretNext"

// Fleet is a loaded, validated fleet repository.
type Fleet struct {
	// Dir is the repository root (the directory holding Pulumi.yaml).
	Dir string
	// Project is the Pulumi project name; config keys live in its namespace.
	Project string
	// StackDir is stackConfigDir relative to Dir ("." when unset).
	StackDir string
	// Baseline is the fleet default every cell starts from.
	Baseline spec.Cell
	// BaselineLines maps each baseline key set in Pulumi.yaml to its line.
	BaselineLines map[string]int
	// Cells sorted by id.
	Cells []*Cell
	// Router is the global stack, nil when the fleet has none yet.
	Router *Router
	// Waves is the rollout plan.
	Waves *waves.Plan
	// Settings are cellctl's own settings (Pulumi.yaml's cellctl:
	// section): the default cloud.
	Settings Settings
	// Routing is the tenant routing table (stacks/routing.json); nil when
	// the fleet has no router yet.
	Routing *router.Table
	// baseAccount is the baseline's account settings (Pulumi.yaml's
	// aws:assumeRole, aws:profile, account lists, cells:account).
	baseAccount accountSettings
	// baseEndpoints are Pulumi.yaml's aws:endpoints (Endpoints).
	baseEndpoints []Endpoint
}

// Cell is one cell of the fleet with where its settings came from.
type Cell struct {
	spec.Cell
	// File is the stack file, relative to the fleet dir.
	File string
	// Overrides lists the keys the stack file sets, deliberately diverging
	// from (or restating) the baseline; the drift audit reports them.
	Overrides []string
	// Lines maps a config key ("cells:index", "aws:region") to its line.
	Lines map[string]int
	// Endpoints are the stack file's own aws:endpoints (Fleet.Endpoints
	// resolves the baseline's).
	Endpoints []Endpoint
	// HasOriginVerifySecret says the stack file holds the fleet's
	// origin-verify secret (encrypted).
	HasOriginVerifySecret bool
	// HasOriginVerifyNext says it also holds a second accepted value (a
	// rotation in progress).
	HasOriginVerifyNext bool
	// access is where the cell lives (Access): its account and role.
	access Access
	// dnsRole is cells:dnsAssumeRole (zero: none).
	dnsRole AssumeRole
}

// StackName is the Pulumi stack of the cell.
func (c *Cell) StackName() string { return c.ID }

// Router is the global stack's configuration.
type Router struct {
	File   string
	Region string
	// TenantHeader is the request header that carries the tenant id.
	TenantHeader string
	// TenantFrom is where the edge reads the tenant id (cells:tenantFrom):
	// "" or "header" for TenantHeader, "jwt:<claim>" for a claim of the
	// bearer JWT in the Authorization header (edge.CheckTenantFrom).
	TenantFrom string
	// PriceClass is the CloudFront price class.
	PriceClass string
	// FleetBucket is the shared bucket the router stack owns.
	FleetBucket string
	// EdgeMemoryMB is the edge function's memory (cells:edgeMemoryMb);
	// the routing table must fit it (edge.CheckFits).
	EdgeMemoryMB int
	// EdgeVersionsKept is how many of the newest published versions of the
	// edge function the router keeps besides the versions a distribution
	// runs (cells:edgeVersionsKept, default DefaultEdgeVersionsKept); the
	// older ones are deleted after each router change
	// (internal/edgeversions), so the versions never fill Lambda's code
	// storage.
	EdgeVersionsKept int
	// ViewerDomains are the tenant-facing domain names of the distribution
	// (CloudFront aliases). Without any, viewers only reach the
	// distribution's own *.cloudfront.net name and the edge never reads
	// the tenant from the Host.
	ViewerDomains []string
	// ViewerHostedZoneID is the Route 53 zone the viewer domains' alias
	// records go in.
	ViewerHostedZoneID string
	// ViewerCertificateArn is an existing us-east-1 certificate covering
	// the viewer domains; empty: the router requests a DNS-validated one.
	ViewerCertificateArn string
	Lines                map[string]int
	// Endpoints are the router stack file's own aws:endpoints.
	Endpoints []Endpoint

	HasOriginVerifySecret bool
	// Traffic is a router canary step's split between the primary and
	// the staging distribution; set only on the per-run copy the engine
	// builds from stackrun.Inputs.Router, never by the loader.
	Traffic *canary.Traffic
	// AttachDeploymentPolicy attaches the continuous deployment policy to
	// the primary distribution. CloudFront refuses the policy on the
	// primary's create, so the engine sets it on the per-run copy only
	// when the router's state already holds the primary (and runs the
	// attach as a second pass right after a first create); the loader
	// never sets it, so an offline render shows what a first up creates.
	AttachDeploymentPolicy bool
	// HoldLinkedFields keeps the primary distribution's settings CloudFront
	// locks while the policy links it as they are deployed; like
	// AttachDeploymentPolicy, only the engine sets it, on the per-run copy
	// of a pass of the router's unlink sequence (internal/engine/routerseq.go).
	HoldLinkedFields bool
	// access is where the router stack lives (Access).
	access Access
}

// Router defaults.
const (
	DefaultTenantHeader = "X-Tenant-Id"
	DefaultPriceClass   = "PriceClass_100"
	// DefaultEdgeVersionsKept: the last ten routing-table changes can be
	// rolled back to by pinning their version; at ~19 MiB a version (a
	// million overrides) that is under 0.3 GB of the 75 GB code storage.
	DefaultEdgeVersionsKept = 10
	// MaxEdgeVersionsKept bounds the setting: 1,000 versions of the largest
	// table (~19 MiB) are ~19 GB, a quarter of the default storage.
	MaxEdgeVersionsKept = 1000
)

// Cell returns the cell with that id, or nil.
func (f *Fleet) Cell(id string) *Cell {
	i := sort.Search(len(f.Cells), func(i int) bool { return f.Cells[i].ID >= id })
	if i < len(f.Cells) && f.Cells[i].ID == id {
		return f.Cells[i]
	}
	return nil
}

// CellIDs lists the cell ids in order.
func (f *Fleet) CellIDs() []string {
	ids := make([]string, len(f.Cells))
	for i, c := range f.Cells {
		ids[i] = c.ID
	}
	return ids
}

// StackNames lists every stack of the fleet: cells first, then the router.
func (f *Fleet) StackNames() []string {
	names := f.CellIDs()
	if f.Router != nil {
		names = append(names, RouterStack)
	}
	return names
}

// ConfigKey qualifies a key with the project namespace ("cells:index").
func (f *Fleet) ConfigKey(key string) string { return f.Project + ":" + key }

// ValidStackName says why name cannot be one of the fleet's stacks, or nil:
// stacks are "router" and cell ids (the rule cell stack files follow). Commands
// that take a stack name check it before it reaches a backend path.
func ValidStackName(name string) error {
	if name == RouterStack || cellid.Valid(name) {
		return nil
	}
	return fmt.Errorf("%s is not a valid stack name: stacks are %q and cell ids (%s)", diag.Echo(name), RouterStack, cellid.Rule)
}

// AWSKeys lists the aws:<key> provider settings a fleet may set (the
// router passes each one it finds to its explicit us-east-1 provider).
func AWSKeys() []string { return append([]string(nil), awsKeys...) }
