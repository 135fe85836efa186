package component_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/asset"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/policy"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/stacks"
)

// The router stack is rendered offline through the real fleet program
// (stacks.Program), with the demo fleet and the cells' stack outputs fed
// through StackReferences, as `cellctl plan` and `cellctl up` see it.

const (
	// testSecret stands in for the fleet's origin-verify secret.
	testSecret = "origin-verify-test-value-7f3a9c"
	// cachingDisabled is AWS's Managed-CachingDisabled policy id, spelled
	// out so a changed constant in the component fails here.
	cachingDisabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"

	typeProvider       = "pulumi:providers:aws"
	typeBucket         = "aws:s3/bucketV2:BucketV2"
	typeVersioning     = "aws:s3/bucketVersioningV2:BucketVersioningV2"
	typeEncryption     = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
	typePublicAccess   = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
	typeOwnership      = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
	typeBucketPolicy   = "aws:s3/bucketPolicy:BucketPolicy"
	typeRole           = "aws:iam/role:Role"
	typeFunction       = "aws:lambda/function:Function"
	typeDistribution   = "aws:cloudfront/distribution:Distribution"
	typeStackReference = "pulumi:pulumi:StackReference"
)

func demoFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Load("../..")
	if err != nil {
		t.Fatalf("demo fleet: %v", err)
	}
	return f
}

// taskRoleArn is the task role a cell's stack exports, in its own account.
func taskRoleArn(c *fleet.Cell) string {
	account := c.Access().Account
	if account == "" {
		account = "123456789012"
	}
	return "arn:aws:iam::" + account + ":role/" + c.ID + "-task-role"
}

// albDNS is the DNS name (<id>.<fleetDomain>) a cell's stack exports as
// dnsName in these tests.
func albDNS(cell string) string { return cell + ".cells.example.com" }

type routerRun struct {
	rec     *offline.Recorder
	outputs map[string]offline.Value
}

// runRouterProgram renders the router stack of f. Every cell of the fleet
// has deployed (its stack exports dnsName) except those in undeployed.
func runRouterProgram(t *testing.T, f *fleet.Fleet, undeployed ...string) (*routerRun, error) {
	t.Helper()
	model := awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: f.Router.Region})
	for _, c := range f.Cells {
		outs := resource.PropertyMap{"cidr": resource.NewStringProperty(c.CIDR())}
		if !slices.Contains(undeployed, c.ID) {
			outs["taskRoleArn"] = resource.NewStringProperty(taskRoleArn(c))
			outs["dnsName"] = resource.NewStringProperty(albDNS(c.ID))
			outs["albArnSuffix"] = resource.NewStringProperty("app/" + c.ID + "-alb/0123456789abcdef")
			outs["targetGroupArnSuffix"] = resource.NewStringProperty("targetgroup/" + c.ID + "-tg/fedcba9876543210")
		}
		model.SetStackOutputs(c.ID, outs)
	}
	if f.Router.AttachDeploymentPolicy {
		// What the engine's second pass renders: the primary exists.
		model.Deployed(typeDistribution, component.PrimaryDistributionName(fleet.RouterStack))
	}
	key := f.ConfigKey(fleet.OriginVerifyKey)
	rec, exports, err := offline.Run(offline.Options{
		Project: f.Project, Stack: fleet.RouterStack,
		Config: map[string]string{key: testSecret}, SecretKeys: []string{key},
	}, model, stacks.Program(f))
	if err != nil {
		return nil, err
	}
	outputs, err := offline.AwaitAll(exports)
	if err != nil {
		return nil, err
	}
	return &routerRun{rec: rec, outputs: outputs}, nil
}

func mustRunRouter(t *testing.T, f *fleet.Fleet) *routerRun {
	t.Helper()
	r, err := runRouterProgram(t, f)
	if err != nil {
		t.Fatalf("router program: %v", err)
	}
	return r
}

// one returns the only resource of typ.
func (r *routerRun) one(t *testing.T, typ string) *offline.Resource {
	t.Helper()
	rs := r.rec.ByType(typ)
	if len(rs) != 1 {
		t.Fatalf("the router stack declares %d %s, want exactly 1", len(rs), typ)
	}
	return rs[0]
}

// drainedFleet is the demo fleet routed by a table in which cell-d is
// drained (its buckets spread over the others) and cell-c is draining:
// cell-c still serves its buckets, cell-d serves nothing.
func drainedFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	f := demoFleet(t)
	drained, err := router.Drain(f.Routing, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	s := drained.Spec()
	for i := range s.Cells {
		if s.Cells[i].ID == "cell-c" {
			s.Cells[i].State = router.CellDraining
		}
	}
	s.Version++
	table, err := router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := table.Cell("cell-d"); c.State != router.CellDrained {
		t.Fatalf("test setup: cell-d is %s after Drain, want drained", c.State)
	}
	f.Routing = table
	return f
}

// --- property helpers ------------------------------------------------------

// plain unwraps secrets and known outputs; a test that cares whether a
// value is secret checks the raw property.
func plain(v resource.PropertyValue) resource.PropertyValue {
	for {
		switch {
		case v.IsSecret():
			v = v.SecretValue().Element
		case v.IsOutput() && v.OutputValue().Known:
			v = v.OutputValue().Element
		default:
			return v
		}
	}
}

// get walks objects by key ("customOriginConfig", "originProtocolPolicy").
func get(v resource.PropertyValue, keys ...string) resource.PropertyValue {
	for _, k := range keys {
		v = plain(v)
		if !v.IsObject() {
			return resource.NewNullProperty()
		}
		v = v.ObjectValue()[resource.PropertyKey(k)]
	}
	return v
}

func str(v resource.PropertyValue) string {
	if v = plain(v); v.IsString() {
		return v.StringValue()
	}
	return ""
}

func arr(v resource.PropertyValue) []resource.PropertyValue {
	if v = plain(v); v.IsArray() {
		return v.ArrayValue()
	}
	return nil
}

func in(r *offline.Resource, keys ...string) resource.PropertyValue {
	return get(resource.NewObjectProperty(r.Inputs), keys...)
}

func out(r *offline.Resource, keys ...string) resource.PropertyValue {
	return get(resource.NewObjectProperty(r.Outputs), keys...)
}

// strings of a policy field that may be a string or a list of strings.
func stringOrList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// parsePolicy reads a rendered policy through the one reader the access
// model and the audits use.
func parsePolicy(t *testing.T, what, doc string) []policy.Statement {
	t.Helper()
	p, err := policy.Parse(doc)
	if err != nil {
		t.Fatalf("%s is not a policy document: %v\n%s", what, err, doc)
	}
	if p.Version != policy.Version {
		t.Errorf("%s: Version %q, want 2012-10-17 (older versions do not support policy variables)", what, p.Version)
	}
	return p.Statement
}

// codeFiles returns the files of the function's code archive.
func codeFiles(t *testing.T, fn *offline.Resource) map[string]string {
	t.Helper()
	code := plain(fn.Inputs["code"])
	if !code.IsArchive() {
		t.Fatalf("the edge function's code is %v, want an asset archive", code)
	}
	files := map[string]string{}
	for name, a := range code.ArchiveValue().Assets {
		as, ok := a.(*asset.Asset)
		if !ok || !as.IsText() {
			t.Fatalf("code file %s is %T, want a text asset", name, a)
		}
		files[name] = as.Text
	}
	return files
}

// --- the fleet bucket ------------------------------------------------------

func TestFleetBucketIsPrivateVersionedEncryptedAndTLSOnly(t *testing.T) {
	f := demoFleet(t)
	r := mustRunRouter(t, f)

	bucket := r.one(t, typeBucket)
	if got := str(in(bucket, "bucket")); got != f.Router.FleetBucket {
		t.Errorf("fleet bucket name = %q, want cells:fleetBucket %q (every cell writes under cells/<id>/ in it)", got, f.Router.FleetBucket)
	}
	if !bucket.Protect {
		t.Error("the fleet bucket must be protected: it holds every cell's data and a `destroy router` must not delete it")
	}
	bucketName := str(out(bucket, "bucket"))
	onBucket := func(res *offline.Resource) {
		t.Helper()
		if got := str(in(res, "bucket")); got != bucketName {
			t.Errorf("%s %s applies to bucket %q, want the fleet bucket %q", res.Type, res.Name, got, bucketName)
		}
	}

	v := r.one(t, typeVersioning)
	onBucket(v)
	if got := str(in(v, "versioningConfiguration", "status")); got != "Enabled" {
		t.Errorf("fleet bucket versioning = %q, want Enabled: an overwritten or deleted object must be recoverable", got)
	}

	enc := r.one(t, typeEncryption)
	onBucket(enc)
	rules := arr(in(enc, "rules"))
	if len(rules) != 1 || str(get(rules[0], "applyServerSideEncryptionByDefault", "sseAlgorithm")) != "aws:kms" {
		t.Errorf("fleet bucket encryption rules = %v, want one rule with sseAlgorithm aws:kms", rules)
	}

	pab := r.one(t, typePublicAccess)
	onBucket(pab)
	for _, flag := range []string{"blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"} {
		if v := plain(pab.Inputs[resource.PropertyKey(flag)]); !v.IsBool() || !v.BoolValue() {
			t.Errorf("public access block %s = %v, want true: the fleet bucket must never become public", flag, v)
		}
	}

	own := r.one(t, typeOwnership)
	onBucket(own)
	if got := str(in(own, "rule", "objectOwnership")); got != "BucketOwnerEnforced" {
		t.Errorf("object ownership = %q, want BucketOwnerEnforced (ACLs disabled; the bucket owner owns every object)", got)
	}

	pol := r.one(t, typeBucketPolicy)
	onBucket(pol)
	arn := str(out(bucket, "arn"))
	if arn == "" {
		t.Fatal("the fleet bucket has no arn output")
	}
	denies := false
	for _, st := range parsePolicy(t, "fleet bucket policy", str(in(pol, "policy"))) {
		if st.Effect != "Deny" || !slices.Contains(st.Action, "s3:*") {
			continue
		}
		res := st.Resource
		if slices.Contains(res, arn) && slices.Contains(res, arn+"/*") && slices.Equal(st.Condition["Bool"]["aws:SecureTransport"], policy.Values{"false"}) &&
			st.Principal != nil && st.Principal.All {
			denies = true
		}
	}
	if !denies {
		t.Errorf("the fleet bucket policy must deny s3:* to everyone on %s and %s/* when aws:SecureTransport is false (TLS only); got %s",
			arn, arn, str(in(pol, "policy")))
	}
	if !slices.Contains(pol.DependsOn, pab.URN) {
		t.Errorf("the bucket policy must be applied after the public access block (S3 rejects concurrent changes to both); it depends on %v", pol.DependsOn)
	}
}

// --- Lambda@Edge -----------------------------------------------------------

// The fleet bucket is always encrypted with the fleet's customer managed
// key — one configuration whatever accounts the cells live in, so no fleet
// change switches encryption under running cells — and the key outlives
// every grant: protected and retained, it stays when the last cell in
// another account is drained and its stack destroyed, its policy then the
// owning account's statement alone (a statement naming no principal is
// not a policy KMS accepts).
func TestFleetBucketKeyIsAlwaysThereAndOutlivesItsGrants(t *testing.T) {
	twoAccounts := func(t *testing.T) *fleet.Fleet {
		f, err := fleet.Load(fleettest.Demo(t, fleettest.TwoAccounts))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		fleet func(t *testing.T) *fleet.Fleet
		// destroyed cells export nothing.
		destroyed []string
		granted   []string
	}{
		{"one account", demoFleet, nil, nil},
		{"two accounts", twoAccounts, nil, []string{"cell-c", "cell-d"}},
		{"cell-d drained, its stack still there", func(t *testing.T) *fleet.Fleet {
			f := twoAccounts(t)
			var err error
			if f.Routing, err = router.Drain(f.Routing, "cell-d"); err != nil {
				t.Fatal(err)
			}
			return f
		}, nil, []string{"cell-c", "cell-d"}},
		{"cell-c and cell-d drained and destroyed", func(t *testing.T) *fleet.Fleet {
			f := twoAccounts(t)
			table, err := router.Drain(f.Routing, "cell-d")
			if err != nil {
				t.Fatal(err)
			}
			// The migration to cell-c ends first: a drain keeps a pin to it.
			tr, err := router.AbortMigration(table, "globex")
			if err != nil {
				t.Fatal(err)
			}
			table = tr.To
			if f.Routing, err = router.Drain(table, "cell-c"); err != nil {
				t.Fatal(err)
			}
			if c, _ := f.Routing.Cell("cell-c"); c.State != router.CellDrained {
				t.Fatalf("test setup: cell-c is %s", c.State)
			}
			return f
		}, []string{"cell-c", "cell-d"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fleet(t)
			r, err := runRouterProgram(t, f, tc.destroyed...)
			if err != nil {
				t.Fatalf("router program: %v", err)
			}
			key := r.one(t, "aws:kms/key:Key")
			if !key.Protect || !key.RetainOnDelete {
				t.Errorf("the fleet bucket key: protect %v, retainOnDelete %v; want both: objects written under it are unreadable once it is deleted", key.Protect, key.RetainOnDelete)
			}
			keyArn := str(out(key, "arn"))
			enc := r.one(t, typeEncryption)
			rule := arr(in(enc, "rules"))
			if len(rule) != 1 || str(get(rule[0], "applyServerSideEncryptionByDefault", "kmsMasterKeyId")) != keyArn || keyArn == "" ||
				!plain(get(rule[0], "bucketKeyEnabled")).IsBool() || !plain(get(rule[0], "bucketKeyEnabled")).BoolValue() {
				t.Errorf("bucket encryption %v, want SSE-KMS with the fleet key %s by ARN and S3 Bucket Keys on", rule, keyArn)
			}
			if got := r.outputs["bucketKeyArn"].Value; got != keyArn {
				t.Errorf("output bucketKeyArn = %v, want %s", got, keyArn)
			}
			var principals []string
			for _, st := range parsePolicy(t, "key policy", str(in(key, "policy"))) {
				ps := st.Principal.AWS()
				if len(ps) == 0 {
					t.Errorf("key policy statement %q names no principal", st.Sid)
				}
				if st.Sid == "OwningAccount" {
					if len(ps) != 1 || ps[0] != "arn:aws:iam::123456789012:root" || len(st.Condition) != 0 {
						t.Errorf("the owning account statement %+v must let the account's IAM policies grant the key", st)
					}
					continue
				}
				via := st.Condition["StringEquals"]
				if !slices.Equal(via["kms:ViaService"], policy.Values{"s3.us-east-1.amazonaws.com"}) ||
					!slices.Equal(via["kms:EncryptionContext:aws:s3:arn"], policy.Values{"arn:aws:s3:::" + f.Router.FleetBucket}) {
					t.Errorf("statement %q lets %v use the key outside S3 or for another bucket: %v", st.Sid, ps, st.Condition)
				}
				principals = append(principals, ps...)
			}
			var want []string
			for _, id := range tc.granted {
				want = append(want, taskRoleArn(f.Cell(id)))
			}
			if !slices.Equal(principals, want) {
				t.Errorf("key policy's cross-account principals %v, want %v", principals, want)
			}
			// The grants are the cells' access points' policies; the
			// bucket policy delegates to them once any cell lives in
			// another account, and never names a cell.
			pol := str(in(r.one(t, typeBucketPolicy), "policy"))
			crossAccount := tc.name != "one account"
			if has := strings.Contains(pol, component.DelegationSid); has != crossAccount {
				t.Errorf("bucket policy delegates to access points: %v, want %v\n%s", has, crossAccount, pol)
			}
			aps := map[string]string{}
			for _, ap := range r.rec.ByType(typeAccessPoint) {
				aps[str(in(ap, "name"))] = str(in(ap, "policy"))
			}
			for _, id := range []string{"cell-c", "cell-d"} {
				if strings.Contains(pol, id) {
					t.Errorf("bucket policy names %s:\n%s", id, pol)
				}
				apPolicy, ok := aps[spec.AccessPointName(f.Router.FleetBucket, id)]
				if ok != crossAccount {
					t.Errorf("%s has an access point: %v, want %v", id, ok, crossAccount)
				}
				if has := strings.Contains(apPolicy, "/object/cells/"+id+"/*"); has != slices.Contains(tc.granted, id) {
					t.Errorf("%s's access point grants its prefix: %v, want %v\n%s", id, has, slices.Contains(tc.granted, id), apPolicy)
				}
			}
		})
	}
}

func TestEdgeFunctionLivesInUSEast1AndPublishesVersions(t *testing.T) {
	f := demoFleet(t)
	r := mustRunRouter(t, f)

	fn := r.one(t, typeFunction)
	var edgeProvider *offline.Resource
	for _, p := range r.rec.ByType(typeProvider) {
		if fn.Provider == p.URN+"::"+p.ID {
			edgeProvider = p
		}
	}
	if edgeProvider == nil {
		t.Fatalf("the edge function must be created through an explicit aws provider (Lambda@Edge only exists in us-east-1, whatever the stack's region); its provider reference is %q", fn.Provider)
	}
	if got := str(in(edgeProvider, "region")); got != "us-east-1" {
		t.Errorf("the edge function's provider %s has region %q, want us-east-1 (Lambda@Edge functions must live there)", edgeProvider.Name, got)
	}
	if arn := str(out(fn, "arn")); !strings.HasPrefix(arn, "arn:aws:lambda:us-east-1:") {
		t.Errorf("edge function ARN %q is not in us-east-1", arn)
	}
	if got := str(in(fn, "runtime")); got != edge.Runtime {
		t.Errorf("edge function runtime = %q, want %s", got, edge.Runtime)
	}
	if got := str(in(fn, "handler")); got != edge.Handler {
		t.Errorf("edge function handler = %q, want %q", got, edge.Handler)
	}
	if v := plain(fn.Inputs["publish"]); !v.IsBool() || !v.BoolValue() {
		t.Errorf("edge function publish = %v, want true: CloudFront can only associate a published version", v)
	}
	if env := plain(fn.Inputs["environment"]); !env.IsNull() {
		t.Errorf("edge function sets environment %v; Lambda@Edge rejects environment variables", env)
	}

	role := r.one(t, typeRole)
	if got, want := str(in(fn, "role")), str(out(role, "arn")); got != want {
		t.Errorf("edge function role = %q, want the edge role %q", got, want)
	}
	assumers := map[string]bool{}
	for _, st := range parsePolicy(t, "edge role trust policy", str(in(role, "assumeRolePolicy"))) {
		if st.Effect != "Allow" || !slices.Contains(st.Action, "sts:AssumeRole") || st.Principal == nil {
			continue
		}
		for _, s := range st.Principal.Kinds[policy.KindService] {
			assumers[s] = true
		}
	}
	for _, svc := range []string{"lambda.amazonaws.com", "edgelambda.amazonaws.com"} {
		if !assumers[svc] {
			t.Errorf("the edge role's trust policy must allow %s to sts:AssumeRole (Lambda@Edge replicas run as both); it allows %v", svc, assumers)
		}
	}
}

func TestEdgeFunctionBakesInTheRoutingTableAndNoSecret(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fleet func(*testing.T) *fleet.Fleet
	}{
		{"demo table", demoFleet},
		{"cell-d drained, cell-c draining", drainedFleet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fleet(t)
			r := mustRunRouter(t, f)
			fn := r.one(t, typeFunction)
			files := codeFiles(t, fn)
			for _, name := range []string{"index.js", "routing.js", "lanes.js", "image.js", edge.ConfigFile, edge.ImageFile} {
				if files[name] == "" {
					t.Errorf("the function package has no %s (files: %v)", name, slices.Sorted(maps.Keys(files)))
				}
			}

			origins := map[string]string{}
			for _, c := range f.Routing.Cells() {
				if c.State != router.CellDrained {
					origins[c.ID] = albDNS(c.ID)
				}
			}
			// The Host names a tenant only under the wildcard viewer domain;
			// every routed cell's lane layout from its config (cells:lanes,
			// cells:laneShardSize), so the edge sends X-Cell-Lanes.
			lanes := map[string]*router.Lanes{}
			for _, id := range f.Routing.CellIDs() {
				c := f.Cell(id)
				lanes[id] = router.MustLanes(c.Lanes, c.LaneShardSize)
			}
			wantFiles, err := edge.PackageWith(f.Routing, origins, edge.Options{TenantHeader: f.Router.TenantHeader, TenantHostDomains: []string{"app.example.com"}, Lanes: lanes})
			if err != nil {
				t.Fatal(err)
			}
			// The package shipped is exactly edge.PackageWith's (the one
			// writer), and the edge would load it.
			if !maps.Equal(files, wantFiles) {
				t.Errorf("the shipped package differs from edge.PackageWith: files %v, want %v", slices.Sorted(maps.Keys(files)), slices.Sorted(maps.Keys(wantFiles)))
			}
			if err := edge.CheckPackage(files); err != nil {
				t.Errorf("the shipped package: %v", err)
			}
			want := wantFiles[edge.ConfigFile]
			if files[edge.ConfigFile] != string(want) {
				t.Errorf("config.json differs from edge.ConfigWith(routing table v%d, the cells' DNS names, %q, app.example.com):\n got: %s\nwant: %s",
					f.Routing.Version(), f.Router.TenantHeader, files[edge.ConfigFile], want)
			}
			var cfg struct {
				Version int64             `json:"version"`
				Origins map[string]string `json:"origins"`
			}
			if err := json.Unmarshal([]byte(files[edge.ConfigFile]), &cfg); err != nil {
				t.Fatalf("config.json: %v", err)
			}
			if cfg.Version != f.Routing.Version() {
				t.Errorf("config.json version = %d, want the routing table's %d (X-Routing-Version tells which table served a request)", cfg.Version, f.Routing.Version())
			}
			if _, ok := cfg.Origins["cell-d"]; ok && tc.name != "demo table" {
				t.Errorf("config.json has an origin for the drained cell-d: %v", cfg.Origins)
			}
			if d := str(in(fn, "description")); !strings.Contains(d, fmt.Sprintf("v%d %s", f.Routing.Version(), f.Routing.Checksum())) {
				t.Errorf("function description %q does not name routing table v%d %s", d, f.Routing.Version(), f.Routing.Checksum())
			}
			for name, text := range files {
				if strings.Contains(text, testSecret) {
					t.Errorf("%s in the function package contains the origin-verify secret: anyone who can read the function code could reach the cells directly", name)
				}
			}
		})
	}
}

// --- CloudFront ------------------------------------------------------------

func TestDistributionHasOneHTTPSOriginForTheFleet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fleet    func(*testing.T) *fleet.Fleet
		routable []string
	}{
		{"demo table", demoFleet, []string{"cell-a", "cell-b", "cell-c", "cell-d"}},
		{"cell-d drained, cell-c draining", drainedFleet, []string{"cell-a", "cell-b", "cell-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fleet(t)
			r := mustRunRouter(t, f)
			for _, cdn := range []*offline.Resource{r.primary(t), r.staging(t)} {
				checkFleetOrigin(t, cdn, tc.routable)
			}
			cdn := r.primary(t)
			if refs := len(r.rec.ByType(typeStackReference)); refs != len(tc.routable) {
				t.Errorf("the router reads %d cell stacks, want %d (one per routable cell; a drained cell may already be destroyed)", refs, len(tc.routable))
			}
			// The function, not the distribution, knows every routable
			// cell's DNS name (and only those).
			var cfg struct {
				Origins map[string]string `json:"origins"`
			}
			if err := json.Unmarshal([]byte(codeFiles(t, r.one(t, typeFunction))[edge.ConfigFile]), &cfg); err != nil {
				t.Fatalf("config.json: %v", err)
			}
			for _, id := range tc.routable {
				if cfg.Origins[id] != albDNS(id) {
					t.Errorf("config.json sends %s to %q, want its DNS name %q", id, cfg.Origins[id], albDNS(id))
				}
			}

			dcb := in(cdn, "defaultCacheBehavior")
			if got := str(get(dcb, "viewerProtocolPolicy")); got != "https-only" {
				t.Errorf("viewerProtocolPolicy = %q, want https-only: tenant ids and data must not be sent in clear", got)
			}
			if got := str(get(dcb, "cachePolicyId")); got != cachingDisabled {
				t.Errorf("cachePolicyId = %q, want Managed-CachingDisabled %s: one tenant's responses must never be served to another", got, cachingDisabled)
			}
			assocs := arr(get(dcb, "lambdaFunctionAssociations"))
			fn := r.one(t, typeFunction)
			qualified := str(out(fn, "qualifiedArn"))
			if len(assocs) != 1 {
				t.Fatalf("default behavior has %d function associations, want 1 (the router on origin-request)", len(assocs))
			}
			if got := str(get(assocs[0], "eventType")); got != "origin-request" {
				t.Errorf("edge function event type = %q, want origin-request (it rewrites the origin, which viewer events cannot)", got)
			}
			if got := str(get(assocs[0], "lambdaArn")); got != qualified || !strings.HasSuffix(got, ":"+str(out(fn, "version"))) {
				t.Errorf("associated function ARN = %q, want the published version's qualified ARN %q (CloudFront refuses $LATEST)", got, qualified)
			}
		})
	}
}

// checkFleetOrigin asserts a router distribution has exactly one origin,
// the fleet's: HTTPS only, carrying the origin-verify secret as a Pulumi
// secret, its domain a routable cell's DNS name, and the default behavior
// targets it. The edge function sets each request's cell.
func checkFleetOrigin(t *testing.T, cdn *offline.Resource, routable []string) {
	t.Helper()
	origins := arr(in(cdn, "origins"))
	if len(origins) != 1 {
		t.Fatalf("%s has %d CloudFront origins, want 1 whatever the fleet's size (origins per distribution is a quota of %d; the edge function picks the cell)", cdn.Name, len(origins), awsmodel.MaxOriginsPerDistribution)
	}
	o := origins[0]
	if id := str(get(o, "originId")); id != cellmodule.RouterOriginID {
		t.Errorf("%s: origin id %q, want %q", cdn.Name, id, cellmodule.RouterOriginID)
	}
	if d := str(get(o, "domainName")); !slices.ContainsFunc(routable, func(c string) bool { return albDNS(c) == d }) {
		t.Errorf("%s: origin domain %q is not a routable cell's DNS name %v (CloudFront needs a name the cells' certificates cover)", cdn.Name, d, routable)
	}
	if got := str(get(o, "customOriginConfig", "originProtocolPolicy")); got != "https-only" {
		t.Errorf("%s: originProtocolPolicy = %q, want https-only: tenant traffic must not cross the internet in clear", cdn.Name, got)
	}
	var verify []resource.PropertyValue
	for _, h := range arr(get(o, "customHeaders")) {
		if strings.EqualFold(str(get(h, "name")), cellmodule.OriginVerifyHeader) {
			verify = append(verify, get(h, "value"))
		}
	}
	if len(verify) != 1 {
		t.Fatalf("%s: the origin has %d %s headers, want 1: the cells' ALBs reject requests without it", cdn.Name, len(verify), cellmodule.OriginVerifyHeader)
	}
	if !verify[0].ContainsSecrets() {
		t.Errorf("%s: %s is not a Pulumi secret; it would be stored and shown in plain text", cdn.Name, cellmodule.OriginVerifyHeader)
	}
	if str(verify[0]) != testSecret {
		t.Errorf("%s: %s carries %q, want the fleet's origin-verify secret", cdn.Name, cellmodule.OriginVerifyHeader, str(verify[0]))
	}
	if target := str(in(cdn, "defaultCacheBehavior", "targetOriginId")); target != cellmodule.RouterOriginID {
		t.Errorf("%s: default behavior targets %q, want the fleet origin %q", cdn.Name, target, cellmodule.RouterOriginID)
	}
}

// TestRouterAt256CellsKeepsOneOrigin renders the router of a fleet at the
// documented 256-cell cap: each distribution keeps its one origin, within
// CloudFront's quota (the mock refuses TooManyOrigins), and the function
// routes every cell by its DNS name.
func TestRouterAt256CellsKeepsOneOrigin(t *testing.T) {
	const n = 256
	spec := router.Spec{Version: 1, Buckets: 4 * n}
	var origins []component.Origin
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		ids = append(ids, id)
		spec.Cells = append(spec.Cells, router.CellSpec{ID: id, State: router.CellActive, Weight: 1, Buckets: router.Ranges{{First: 4 * i, Last: 4*i + 3}}})
		origins = append(origins, component.Origin{Cell: id, DNSName: pulumi.String(albDNS(id))})
	}
	table, err := router.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := offline.Run(offline.Options{Project: "cells", Stack: fleet.RouterStack},
		awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}),
		func(ctx *pulumi.Context) error {
			_, err := component.NewRouter(ctx, fleet.RouterStack, &component.RouterArgs{
				BucketName:         "fleet-bucket-256",
				Origins:            origins,
				TableVersion:       table.Version(),
				Code:               func(dns map[string]string) (map[string]string, error) { return edge.Package(table, dns, "") },
				OriginVerifySecret: pulumi.ToSecret(pulumi.String(testSecret)).(pulumi.StringOutput),
			})
			return err
		})
	if err != nil {
		t.Fatalf("the 256-cell router does not render: %v", err)
	}
	r := &routerRun{rec: rec}
	dists := rec.ByType(typeDistribution)
	if len(dists) != 2 {
		t.Fatalf("%d distributions, want the primary and the staging one", len(dists))
	}
	for _, cdn := range dists {
		checkFleetOrigin(t, cdn, ids)
	}
	var cfg struct {
		Origins map[string]string `json:"origins"`
	}
	if err := json.Unmarshal([]byte(codeFiles(t, r.one(t, typeFunction))[edge.ConfigFile]), &cfg); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	if len(cfg.Origins) != n {
		t.Errorf("config.json routes %d cells by DNS name, want %d", len(cfg.Origins), n)
	}
	for _, id := range ids {
		if cfg.Origins[id] != albDNS(id) {
			t.Errorf("config.json sends %s to %q, want %q", id, cfg.Origins[id], albDNS(id))
		}
	}
}

// --- outputs and errors ----------------------------------------------------

func TestRouterOutputs(t *testing.T) {
	f := drainedFleet(t)
	r := mustRunRouter(t, f)
	cdn, fn := r.primary(t), r.one(t, typeFunction)

	if got, want := r.outputs["distributionDomain"].Value, str(out(cdn, "domainName")); got != want || want == "" {
		t.Errorf("output distributionDomain = %v, want the distribution's domain %q (where tenants' DNS points)", got, want)
	}
	if got := r.outputs["tableVersion"].Value; fmt.Sprint(got) != fmt.Sprint(f.Routing.Version()) {
		t.Errorf("output tableVersion = %v, want the routing table version %d (`cellctl status` compares it with routing.json)", got, f.Routing.Version())
	}
	if got, want := r.outputs["functionVersion"].Value, str(out(fn, "version")); got != want || want == "" {
		t.Errorf("output functionVersion = %v, want the published function version %q", got, want)
	}
	if got := r.outputs["tableChecksum"].Value; got != f.Routing.Checksum() {
		t.Errorf("output tableChecksum = %v, want the table's %s", got, f.Routing.Checksum())
	}
	// Stable: both distributions serve this table.
	served, _ := r.outputs["servedTables"].Value.(map[string]any)
	for _, d := range []string{"primary", "staging"} {
		e, _ := served[d].(map[string]any)
		if fmt.Sprint(e["version"]) != fmt.Sprint(f.Routing.Version()) || e["checksum"] != f.Routing.Checksum() || e["functionArn"] != str(out(fn, "qualifiedArn")) {
			t.Errorf("servedTables.%s = %v, want v%d %s on %s", d, e, f.Routing.Version(), f.Routing.Checksum(), str(out(fn, "qualifiedArn")))
		}
	}
	for k, v := range r.outputs {
		if strings.Contains(fmt.Sprint(v.Value), testSecret) {
			t.Errorf("stack output %s leaks the origin-verify secret", k)
		}
	}
}

func TestRouterRefusesAFleetWithoutRoutableCells(t *testing.T) {
	_, _, err := offline.Run(offline.Options{Project: "cells", Stack: fleet.RouterStack},
		awsmodel.NewMock(awsmodel.Env{}),
		func(ctx *pulumi.Context) error {
			_, err := component.NewRouter(ctx, "router", &component.RouterArgs{
				BucketName:         "fleet",
				Code:               func(map[string]string) (map[string]string, error) { return nil, nil },
				OriginVerifySecret: pulumi.ToSecret(pulumi.String("s")).(pulumi.StringOutput),
			})
			return err
		})
	if err == nil || !strings.Contains(err.Error(), "no routable cell") {
		t.Fatalf("a router without origins: error %v, want one saying there is no routable cell", err)
	}
}

func TestRouterNamesTheCellThatHasNotBeenDeployed(t *testing.T) {
	// Through the real program: cell-c's stack exists but exports no
	// albDnsName (never deployed, or its last up failed).
	_, err := runRouterProgram(t, demoFleet(t), "cell-c")
	if err == nil {
		t.Fatal("the router rendered although cell-c has no ALB DNS name")
	}
	if msg := err.Error(); !strings.Contains(msg, "cell-c") || !strings.Contains(msg, "cellctl up cell-c") {
		t.Errorf("error %q must name cell-c and say to run `cellctl up cell-c`", msg)
	}

	// Through the component: a cell whose DNS name resolves empty.
	_, _, err = offline.Run(offline.Options{Project: "cells", Stack: fleet.RouterStack},
		awsmodel.NewMock(awsmodel.Env{}),
		func(ctx *pulumi.Context) error {
			_, err := component.NewRouter(ctx, "router", &component.RouterArgs{
				BucketName: "fleet",
				Origins: []component.Origin{
					{Cell: "cell-a", DNSName: pulumi.String(albDNS("cell-a"))},
					{Cell: "cell-b", DNSName: pulumi.String("")},
				},
				Code:               func(map[string]string) (map[string]string, error) { return map[string]string{"index.js": ""}, nil },
				OriginVerifySecret: pulumi.ToSecret(pulumi.String("s")).(pulumi.StringOutput),
			})
			return err
		})
	if err == nil || !strings.Contains(err.Error(), "cell cell-b") || !strings.Contains(err.Error(), "cellctl up cell-b") {
		t.Errorf("a cell without an ALB DNS name: error %v, want one naming cell-b and saying to run `cellctl up cell-b`", err)
	}
}
