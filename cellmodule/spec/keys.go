package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/diag"
)

// Kind is the type of a configuration value.
type Kind int

const (
	String Kind = iota
	Int
	Number
	// Bool is true or false (YAML booleans, or the strings "true"/"false"
	// that `pulumi config set` writes).
	Bool
)

// Scope says where a key may be set.
type Scope int

const (
	// Anywhere keys may be set as fleet baseline (Pulumi.yaml) and overridden per cell.
	Anywhere Scope = iota
	// CellOnly keys describe one cell and make no sense as a fleet default.
	CellOnly
)

// Key describes one configuration key of a cell: its name in the project
// namespace (cells:<Name>), its type, what values are allowed, and how it
// lands in Cell. The fleet loader is driven entirely by this table.
type Key struct {
	Name    string
	Kind    Kind
	Scope   Scope
	Min     float64 // for Int and Number
	Max     float64
	Allowed []string       // the exact values allowed, as written (nil: any in range / matching Pattern)
	Pattern *regexp.Regexp // for String: required shape (nil: any non-empty)
	Hint    string         // what is allowed, in words, for error messages
	// MaxLen caps a String value in bytes (0: DefaultMaxLen); MaxLenWhy
	// says whose limit it is, for the error message.
	MaxLen    int
	MaxLenWhy string
	// Check, if set, is a last check of a String value that passed the
	// others (a rule a pattern cannot say).
	Check func(s string) error
	Set   func(c *Cell, s string, n float64)
	Get   func(c *Cell) string
}

// MaxValueBytes caps any configuration value the loader reads, before any
// other check: a 50 MB value must not be matched, copied or echoed.
const MaxValueBytes = 4096

// DefaultMaxLen caps a String key without a limit of its own.
const DefaultMaxLen = 256

// MaxBytes is the longest value the key accepts.
func (k Key) MaxBytes() int {
	if k.MaxLen > 0 {
		return k.MaxLen
	}
	return DefaultMaxLen
}

// LimitReason says whose limit MaxBytes is.
func (k Key) LimitReason() string {
	if k.MaxLenWhy != "" {
		return k.MaxLenWhy
	}
	return "cellctl's limit for this setting"
}

// Describe says in words what the key accepts.
func (k Key) Describe() string {
	if k.Hint != "" {
		return k.Hint
	}
	switch k.Kind {
	case Int:
		return fmt.Sprintf("an integer from %g to %g", k.Min, k.Max)
	case Number:
		return fmt.Sprintf("a number from %g to %g", k.Min, k.Max)
	case Bool:
		return "true or false"
	}
	if len(k.Allowed) > 0 {
		q := make([]string, len(k.Allowed))
		for i, a := range k.Allowed {
			q[i] = fmt.Sprintf("%q", a)
		}
		return "one of " + strings.Join(q, ", ")
	}
	return "a non-empty string"
}

var (
	// A name prefix (internal/awsname.CheckPrefix says the rest) or "none".
	prefixPattern  = regexp.MustCompile(`^(none|[a-z]([a-z0-9]|-[a-z0-9])*)$`)
	imagePattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]*[a-z0-9]$`)
	bucketPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	certPattern    = regexp.MustCompile(`^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/[A-Za-z0-9-]+$`)
	versionPattern = regexp.MustCompile(`^\d+(\.\d+){0,2}$`)
	classPattern   = regexp.MustCompile(`^db\.[a-z0-9]+\.[a-z0-9]+$`)
	nodePattern    = regexp.MustCompile(`^cache\.[a-z0-9]+\.[a-z0-9]+$`)
	pathPattern    = regexp.MustCompile(`^/[A-Za-z0-9._~/-]*$`)
	// A public DNS domain: lowercase labels of letters, digits and inner
	// hyphens, at least two of them.
	domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	// Route 53 hosted zone ids: "Z" and upper-case letters and digits.
	zonePattern = regexp.MustCompile(`^Z[A-Z0-9]{1,31}$`)
)

func str(f func(c *Cell) *string) (func(*Cell, string, float64), func(*Cell) string) {
	return func(c *Cell, s string, _ float64) { *f(c) = s }, func(c *Cell) string { return *f(c) }
}

func integer(f func(c *Cell) *int) (func(*Cell, string, float64), func(*Cell) string) {
	return func(c *Cell, _ string, n float64) { *f(c) = int(n) }, func(c *Cell) string { return fmt.Sprint(*f(c)) }
}

func key(name string, kind Kind, scope Scope, set func(*Cell, string, float64), get func(*Cell) string, opts ...func(*Key)) Key {
	k := Key{Name: name, Kind: kind, Scope: scope, Set: set, Get: get}
	for _, o := range opts {
		o(&k)
	}
	return k
}

func between(min, max float64) func(*Key) { return func(k *Key) { k.Min, k.Max = min, max } }
func oneOf(v ...string) func(*Key)        { return func(k *Key) { k.Allowed = v } }
func shaped(p *regexp.Regexp, hint string) func(*Key) {
	return func(k *Key) { k.Pattern, k.Hint = p, hint }
}
func capped(n int, why string) func(*Key) { return func(k *Key) { k.MaxLen, k.MaxLenWhy = n, why } }

// Keys is every cells:<key> a cell understands, in documentation order.
var Keys = func() []Key {
	var keys []Key
	add := func(k Key) { keys = append(keys, k) }

	set, get := str(func(c *Cell) *string { return &c.NamePrefix })
	add(key("namePrefix", String, Anywhere, set, get, shaped(prefixPattern, awsname.PrefixRule),
		capped(awsname.MaxPrefix, "cellctl's limit, so the 40-character ElastiCache ids keep the cell id"),
		func(k *Key) { k.Check = awsname.CheckPrefix }))
	set, get = integer(func(c *Cell) *int { return &c.Index })
	add(key("index", Int, CellOnly, set, get, between(0, 255),
		func(k *Key) { k.Hint = "an integer from 0 to 255, unique in the fleet (the N of the VPC 10.N.0.0/16)" }))
	set, get = str(func(c *Cell) *string { return &c.Image })
	add(key("image", String, Anywhere, set, get, shaped(imagePattern, "a container image reference such as registry.example.com/app:1.2.3"),
		// ECS RegisterTaskDefinition, ContainerDefinition.image: "Up to 255 letters …".
		capped(255, "ECS's limit for a container image reference")))
	set, get = str(func(c *Cell) *string { return &c.FleetBucket })
	add(key("fleetBucket", String, Anywhere, set, get, shaped(bucketPattern, "an S3 bucket name: 3–63 lowercase letters, digits, dots or hyphens")))
	set, get = str(func(c *Cell) *string { return &c.FleetDomain })
	add(key("fleetDomain", String, Anywhere, set, get, shaped(domainPattern, "a DNS domain such as \"cells.example.com\"; each cell is <cell id>.<fleetDomain>")))
	set, get = str(func(c *Cell) *string { return &c.HostedZoneID })
	add(key("hostedZoneId", String, Anywhere, set, get, shaped(zonePattern, "the Route 53 hosted zone id of fleetDomain, such as \"Z0123456789ABCDEFGHIJ\"")))
	set, get = str(func(c *Cell) *string { return &c.CertificateArn })
	add(key("certificateArn", String, Anywhere, set, get, shaped(certPattern, "an existing ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>) in the cell's region covering <cell id>.<fleetDomain>; leave unset to let the cell request a DNS-validated one"),
		// ACM DescribeCertificate, CertificateArn: length 20-2048.
		capped(2048, "ACM's limit for a certificate ARN")))
	set, get = str(func(c *Cell) *string { return &c.NATMode })
	add(key("natMode", String, Anywhere, set, get, oneOf(NATPerAZ, NATSingle)))

	set, get = str(func(c *Cell) *string { return &c.AuroraEngineVersion })
	add(key("auroraEngineVersion", String, Anywhere, set, get, shaped(versionPattern, "an Aurora PostgreSQL major such as \"16\" (AWS applies minor upgrades) or an exact minor such as \"16.4\" (automatic minor upgrades off)")))
	set, get = str(func(c *Cell) *string { return &c.AuroraInstanceClass })
	add(key("auroraInstanceClass", String, Anywhere, set, get, shaped(classPattern, "an RDS instance class such as \"db.r6g.large\"")))
	set, get = integer(func(c *Cell) *int { return &c.AuroraInstances })
	add(key("auroraInstances", Int, Anywhere, set, get, between(1, 15)))
	set, get = integer(func(c *Cell) *int { return &c.AuroraBackupRetentionDays })
	add(key("auroraBackupRetentionDays", Int, Anywhere, set, get, between(1, 35)))

	set, get = str(func(c *Cell) *string { return &c.CacheEngine })
	add(key("cacheEngine", String, Anywhere, set, get, oneOf("valkey", "redis")))
	set, get = str(func(c *Cell) *string { return &c.CacheEngineVersion })
	add(key("cacheEngineVersion", String, Anywhere, set, get, shaped(versionPattern, "a cache engine version such as \"8.0\"")))
	set, get = str(func(c *Cell) *string { return &c.CacheNodeType })
	add(key("cacheNodeType", String, Anywhere, set, get, shaped(nodePattern, "an ElastiCache node type such as \"cache.r7g.large\"")))
	set, get = integer(func(c *Cell) *int { return &c.CacheNodes })
	add(key("cacheNodes", Int, Anywhere, set, get, between(1, 6)))

	set, get = integer(func(c *Cell) *int { return &c.QueueVisibilityTimeoutSeconds })
	add(key("queueVisibilityTimeoutSeconds", Int, Anywhere, set, get, between(0, 43200)))
	set, get = integer(func(c *Cell) *int { return &c.QueueMaxReceiveCount })
	add(key("queueMaxReceiveCount", Int, Anywhere, set, get, between(1, 1000)))

	set, get = integer(func(c *Cell) *int { return &c.TaskCPU })
	add(key("taskCpu", Int, Anywhere, set, get, func(k *Key) {
		k.Allowed = []string{"256", "512", "1024", "2048", "4096", "8192", "16384"}
		k.Min, k.Max = 256, 16384
		k.Hint = "a Fargate CPU size: 256, 512, 1024, 2048, 4096, 8192 or 16384"
	}))
	set, get = integer(func(c *Cell) *int { return &c.TaskMemory })
	add(key("taskMemory", Int, Anywhere, set, get, between(512, 122880)))
	set, get = integer(func(c *Cell) *int { return &c.DesiredCount })
	add(key("desiredCount", Int, Anywhere, set, get, between(0, 1000)))
	set, get = integer(func(c *Cell) *int { return &c.ContainerPort })
	add(key("containerPort", Int, Anywhere, set, get, between(1, 65535)))
	set, get = str(func(c *Cell) *string { return &c.HealthCheckPath })
	add(key("healthCheckPath", String, Anywhere, set, get, shaped(pathPattern, "an absolute URL path such as \"/healthz\""),
		// ELBv2 CreateTargetGroup, HealthCheckPath: length 1-1024.
		capped(1024, "Elastic Load Balancing's limit for a health check path")))
	set, get = integer(func(c *Cell) *int { return &c.LogRetentionDays })
	add(key("logRetentionDays", Int, Anywhere, set, get, func(k *Key) {
		k.Allowed = []string{"1", "3", "5", "7", "14", "30", "60", "90", "120", "150", "180", "365", "400", "545", "731", "1096", "1827", "2192", "2557", "2922", "3288", "3653"}
		k.Min, k.Max = 1, 3653
		k.Hint = "a CloudWatch Logs retention: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653 days"
	}))

	add(key("alarm5xxRatePercent", Number, Anywhere,
		func(c *Cell, _ string, n float64) { c.Alarm5xxRatePercent = n },
		func(c *Cell) string { return fmt.Sprint(c.Alarm5xxRatePercent) }, between(0.01, 100)))
	set, get = integer(func(c *Cell) *int { return &c.AlarmP99LatencyMs })
	add(key("alarmP99LatencyMs", Int, Anywhere, set, get, between(1, 60000)))
	set, get = integer(func(c *Cell) *int { return &c.AlarmEvalPeriods })
	add(key("alarmEvalPeriods", Int, Anywhere, set, get, between(1, 60)))

	// The cell's published capacity and its CellCapacityWarning alarm
	// (cellmodule/alarms.go); not a gate signal.
	set, get = integer(func(c *Cell) *int { return &c.CapacityRPS })
	add(key("capacityRequestsPerSecond", Int, Anywhere, set, get, between(0, 10000000), func(k *Key) {
		k.Hint = "the requests per second the cell is load-tested to carry (0: none published, no capacity alarm)"
	}))
	set, get = integer(func(c *Cell) *int { return &c.CapacityWarningPercent })
	add(key("capacityWarningPercent", Int, Anywhere, set, get, between(1, 100)))
	set, get = integer(func(c *Cell) *int { return &c.CapacityWarningMinutes })
	// CloudWatch: EvaluationPeriods × Period must not exceed one day; with
	// 60 s periods that is 1440.
	add(key("capacityWarningMinutes", Int, Anywhere, set, get, between(1, 1440)))

	// Shuffle sharding inside the cell (router/lanes.go): M lanes, r per
	// tenant, and optionally one SQS queue per lane. The cross-key rule
	// (1 ≤ r ≤ M, C(M, r) ≤ 2^53−1) is LanesProblem, checked by the loader.
	set, get = integer(func(c *Cell) *int { return &c.Lanes })
	add(key("lanes", Int, Anywhere, set, get, between(1, 256),
		func(k *Key) {
			k.Hint = "an integer from 1 to 256: the number M of lanes the cell's fungible resources are cut into"
		}))
	set, get = integer(func(c *Cell) *int { return &c.LaneShardSize })
	add(key("laneShardSize", Int, Anywhere, set, get, between(1, 256),
		func(k *Key) { k.Hint = "an integer from 1 to cells:lanes: the number r of lanes each tenant uses" }))
	add(key("laneQueues", Bool, Anywhere,
		func(c *Cell, s string, _ float64) { c.LaneQueues = s == "true" },
		func(c *Cell) string { return fmt.Sprint(c.LaneQueues) }))

	// Schema migrations (cellmodule/migration.go): the command is a JSON
	// array of strings (ParseCommand), so no shell and no quoting rule
	// decide how it splits.
	for _, m := range []struct {
		name string
		f    func(c *Cell) *[]string
		hint string
	}{
		{"migrationCommand", func(c *Cell) *[]string { return &c.MigrationCommand }, CommandHint + ": the container command that applies the release's pending migrations"},
		{"migrationRollbackCommand", func(c *Cell) *[]string { return &c.MigrationRollbackCommand }, CommandHint + ": the container command that undoes the release's migrations when its wave rolls back"},
	} {
		f := m.f
		add(key(m.name, String, Anywhere,
			func(c *Cell, s string, _ float64) { *f(c), _ = ParseCommand(s) },
			func(c *Cell) string { return FormatCommand(*f(c)) },
			capped(MaxCommandBytes, "cellctl's limit for a container command"),
			func(k *Key) { k.Hint, k.Check = m.hint, func(s string) error { _, err := ParseCommand(s); return err } }))
	}
	set, get = integer(func(c *Cell) *int { return &c.MigrationTimeoutSeconds })
	add(key("migrationTimeoutSeconds", Int, Anywhere, set, get, between(60, 14400), func(k *Key) {
		k.Hint = "an integer from 60 to 14400: the seconds a migration task may run before the rollout stops it"
	}))
	return keys
}()

// CommandHint says how a command key is written.
const CommandHint = `a JSON array of strings in a quoted YAML string, such as '["./migrate", "up"]'`

// MaxCommandBytes caps a command key's value.
const MaxCommandBytes = 2048

// ParseCommand reads a command key's value: a JSON array of one or more
// strings, the first (the executable) not empty, none with a control
// character, and nothing after the array. The array is ECS's container
// command as is; no shell splits or expands it (a command that wants one
// says ["sh", "-c", "…"]). It is strict where encoding/json is lenient: a
// null element would decode as "" and a trailing "]" goes unnoticed by
// Decoder.More, so each element is checked for a JSON string and the rest
// of the input for nothing but spaces.
func ParseCommand(s string) ([]string, error) {
	var raw []json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("must be %s", CommandHint)
	}
	if rest := strings.TrimSpace(s[dec.InputOffset():]); rest != "" {
		return nil, fmt.Errorf("must be %s, with nothing after the array; got %s after it", CommandHint, diag.Echo(rest))
	}
	if raw == nil {
		return nil, fmt.Errorf("must be %s, got null", CommandHint)
	}
	argv := make([]string, len(raw))
	for i, el := range raw {
		if len(el) == 0 || el[0] != '"' || json.Unmarshal(el, &argv[i]) != nil {
			return nil, fmt.Errorf("element %d is %s, not a string: must be %s", i, jsonKind(el), CommandHint)
		}
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("must name the executable first (%s), got an empty one", CommandHint)
	}
	for i, a := range argv {
		for _, r := range a {
			if r < 0x20 || r == 0x7f {
				return nil, fmt.Errorf("element %d has a control character (U+%04X); write arguments without newlines, tabs or other control characters", i, r)
			}
		}
	}
	return argv, nil
}

// jsonKind names what a JSON value is, for "element 1 is null".
func jsonKind(v json.RawMessage) string {
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean (" + string(v) + ")"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number (" + string(v) + ")"
}

// FormatCommand is a command key's canonical text ("" for none): what
// drift compares and what a rollout shows.
func FormatCommand(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	b, _ := json.Marshal(argv)
	return string(b)
}

// Lookup finds a key by name.
func Lookup(name string) (Key, bool) {
	for _, k := range Keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// Names lists every key name, for "allowed keys" messages.
func Names() []string {
	n := make([]string, len(Keys))
	for i, k := range Keys {
		n[i] = k.Name
	}
	return n
}
