package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/waves"
)

// ProjectFile is the Pulumi project file at the fleet root.
const ProjectFile = "Pulumi.yaml"

var (
	stackFileRe    = regexp.MustCompile(`^Pulumi\.(.+)\.ya?ml$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$`)
	headerPattern  = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
	projectPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	// Integers are written as plain decimal digits: YAML also reads 1_0,
	// 0x10, 0o10 and 010 as integers, and Pulumi and YAML 1.1 readers
	// disagree on what some of them mean.
	decimalInt    = diag.DecimalInt
	decimalNumber = diag.DecimalNumber
)

// MaxConfigFileBytes caps every YAML file of the fleet (Pulumi.yaml, stack
// files, waves.yaml). The demo's largest is under 2 KiB; a stack file with
// every key and a secret is under 4 KiB.
const MaxConfigFileBytes = 1 << 20

var priceClasses = []string{"PriceClass_100", "PriceClass_200", "PriceClass_All"}

// Provider config keys cellctl passes through to pulumi-aws; anything else
// under aws: is most likely a typo and is rejected.
var awsKeys = []string{"region", "profile", "allowedAccountIds", "forbiddenAccountIds", "assumeRole",
	"sharedConfigFiles", "sharedCredentialsFiles", "maxRetries", "retryMode", "skipCredentialsValidation",
	"skipMetadataApiCheck", "skipRegionValidation", "skipRequestingAccountId", "defaultTags", "endpoints", "s3UsePathStyle"}

// Load reads and validates the fleet repository at dir. All problems of all
// files are returned together; no partial fleet is ever returned. Only
// regular files are read, each within its size limit, so no input can
// hang or exhaust the loader.
func Load(dir string) (*Fleet, error) {
	return LoadFS(safefile.DirFS(dir), dir)
}

// LoadFS loads a fleet from fsys; dir is only recorded as Fleet.Dir and
// used in messages.
func LoadFS(fsys fs.FS, dir string) (*Fleet, error) {
	l := &loader{fsys: fsys, dir: dir, reported: map[string]bool{}, baselineSet: map[string]bool{}}
	f := l.load()
	if err := l.errs.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

type loader struct {
	fsys fs.FS
	dir  string
	errs diag.List
	// projectLine is the line of Pulumi.yaml's name.
	projectLine int
	// reported marks baseline faults reported once already (once).
	reported map[string]bool
	// baselineSet marks every key Pulumi.yaml's config sets, valid or not:
	// a refused baseline value was reported at its line, so no stack that
	// inherits it reports it again as missing.
	baselineSet map[string]bool
}

// once reports a problem of Pulumi.yaml once: every stack inherits the
// baseline, so a fault found while checking each stack is still one fault
// at one line. Problems of other files are reported as they come.
func (l *loader) once(file string, line int, field, format string, args ...any) {
	if file == ProjectFile {
		key := fmt.Sprintf("%d\x00%s\x00", line, field) + fmt.Sprintf(format, args...)
		if l.reported[key] {
			return
		}
		l.reported[key] = true
	}
	l.errs.Add(file, line, field, format, args...)
}

// origin says where a cell's value of key came from when it is not the
// cell's own file: " (from Pulumi.yaml:LINE)" or " (the default)"; "" when
// the cell's file sets it.
func origin(f *Fleet, c *Cell, key string) string {
	if _, own := c.Lines[key]; own {
		return ""
	}
	if line, set := f.BaselineLines[key]; set {
		return fmt.Sprintf(" (from %s:%d)", ProjectFile, line)
	}
	return " (the default)"
}

// blame picks where a problem of a cell's settings is reported: the line
// of the first of keys the cell's own file sets, else the line of the
// first the baseline sets (Pulumi.yaml, reported once through once), else
// the cell's file without a line.
func blame(f *Fleet, c *Cell, keys ...string) (file string, line int, key string) {
	for _, k := range keys {
		if line, set := c.Lines[k]; set {
			return c.File, line, k
		}
	}
	for _, k := range keys {
		if line, set := f.BaselineLines[k]; set {
			return ProjectFile, line, k
		}
	}
	return c.File, 0, keys[0]
}

// rel names a file the way the user sees it: relative to the fleet dir.
func rel(parts ...string) string { return filepath.ToSlash(filepath.Join(parts...)) }

func (l *loader) read(name string) ([]byte, bool) {
	data, err := safefile.ReadFS(l.fsys, name, MaxConfigFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.errs.Add(name, 0, "", "file not found in %s", l.dir)
		} else {
			l.readError(name, err, "a fleet configuration file")
		}
		return nil, false
	}
	return data, true
}

// readError reports a file that exists but cannot be read; what names the
// kind of file for the size limit.
func (l *loader) readError(name string, err error, what string) {
	var big *safefile.TooLargeError
	var odd *safefile.NotRegularError
	switch {
	case errors.As(err, &big):
		l.errs.Add(name, 0, "", "the file is %s; at most %s is allowed for %s", safefile.Bytes(big.Size), safefile.Bytes(big.Limit), what)
	case errors.As(err, &odd):
		l.errs.Add(name, 0, "", "cannot read: %s", strings.TrimPrefix(odd.Error(), odd.Path+" is "))
	default:
		l.errs.Add(name, 0, "", "cannot read: %v", unwrapPath(err))
	}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (l *loader) load() *Fleet {
	f := &Fleet{Dir: l.dir, Baseline: spec.Baseline(), StackDir: "."}
	data, ok := l.read(ProjectFile)
	if !ok {
		return nil
	}
	f.BaselineLines = l.loadProject(f, data)
	if f.Project == "" {
		return nil
	}
	l.checkBaselineLanes(f)

	entries, err := fs.ReadDir(l.fsys, f.StackDir)
	if err != nil {
		l.errs.Add(rel(f.StackDir), 0, "", "cannot read the stack directory (stackConfigDir in %s): %v", ProjectFile, unwrapPath(err))
		return nil
	}
	seen := map[string]string{}
	indexes := map[int]*Cell{}
	// Every cell a stack file declares, valid or not: waves.yaml is checked
	// against these so one bad stack file does not cascade into wave errors.
	var declared []string
	for _, e := range entries {
		m := stackFileRe.FindStringSubmatch(e.Name())
		if e.IsDir() || m == nil {
			continue
		}
		stack, file := m[1], rel(f.StackDir, e.Name())
		if prev, dup := seen[stack]; dup {
			l.errs.Add(file, 0, "", "duplicate stack %q: also defined by %s; keep one file per stack", stack, prev)
			continue
		}
		seen[stack] = file
		isCell := cellid.Valid(stack)
		if isCell {
			// Declared before it is read: an unreadable stack file is one
			// problem, not also "unknown cell" in waves.yaml and routing.json.
			declared = append(declared, stack)
		}
		if stack != RouterStack && !strings.HasPrefix(stack, "cell-") {
			l.errs.Add(file, 0, "", "unknown stack %s: stack files are Pulumi.cell-<id>.yaml for cells and Pulumi.router.yaml for the router", diag.Echo(stack))
			continue
		}
		if strings.HasPrefix(stack, "cell-") && !isCell {
			l.errs.Add(file, 0, "", "invalid cell id %s: use %s (AWS caps the names derived from it)", diag.Echo(stack), cellid.Rule)
			continue
		}
		data, ok := l.read(file)
		if !ok {
			continue
		}
		switch {
		case stack == RouterStack:
			f.Router = l.loadRouter(f, file, data)
		default:
			c := l.loadCell(f, stack, file, data)
			if c == nil {
				continue
			}
			if prev, dup := indexes[c.Index]; dup {
				l.errs.Add(file, c.Lines[f.ConfigKey("index")], f.ConfigKey("index"),
					"%d is already used by %s (%s:%d): each cell needs its own index, its VPC is 10.N.0.0/16",
					c.Index, prev.ID, prev.File, prev.Lines[f.ConfigKey("index")])
				continue
			}
			indexes[c.Index] = c
			f.Cells = append(f.Cells, c)
		}
	}
	sort.Slice(f.Cells, func(i, j int) bool { return f.Cells[i].ID < f.Cells[j].ID })
	if len(f.Cells) == 0 && l.errs.Len() == 0 {
		l.errs.Add(rel(f.StackDir), 0, "", "no cell stacks: add a stack file such as %s", rel(f.StackDir, "Pulumi.cell-a.yaml"))
	}

	l.loadRouting(f, declared)

	wavesFile := rel(f.StackDir, WavesFile)
	if data, ok := l.read(wavesFile); ok {
		plan, err := waves.Parse(wavesFile, data)
		l.errs.Merge(wavesFile, err)
		if plan != nil {
			f.Waves = plan
			l.errs.Merge(wavesFile, plan.Validate(declared))
			l.applyGates(f)
		}
	}
	return f
}

// loadRouting reads stacks/routing.json: required with a router stack, and
// it may only route to cells the fleet declares.
func (l *loader) loadRouting(f *Fleet, declared []string) {
	file := rel(f.StackDir, RoutingFile)
	data, err := safefile.ReadFS(l.fsys, file, router.MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		if f.Router != nil {
			l.errs.Add(file, 0, "", "file not found: the router stack needs the routing table (tenant buckets → cells)")
		}
		return
	}
	if err != nil {
		l.readError(file, err, fmt.Sprintf("a routing table (%d overrides at most)", router.MaxOverrides))
		return
	}
	t, err := router.Parse(file, data)
	if err != nil {
		l.errs.Merge(file, err)
		return
	}
	if f.Router != nil {
		// A table the function cannot load would fail every tenant's
		// request at the edge: refuse it here, so at plan.
		if err := edge.CheckFits(t, f.Router.EdgeMemoryMB); err != nil {
			l.errs.Add(file, 0, "overrides", "%v", err)
		}
	}
	for _, id := range t.CellIDs() {
		if !contains(declared, id) {
			l.errs.Add(file, 0, "cells."+id, "not a cell of this fleet (no %s): remove it from the table or add the cell", rel(f.StackDir, "Pulumi."+id+".yaml"))
		}
	}
	f.Routing = t
}

// loadProject reads Pulumi.yaml: the project name, stackConfigDir and the
// fleet baseline. It returns the line of every baseline key.
func (l *loader) loadProject(f *Fleet, data []byte) map[string]int {
	lines := l.loadProjectFile(f, data)
	if f.Project != "" && f.Baseline.NamePrefix == "" {
		// Unset: the fleet's account-unique names carry the project's
		// name (internal/awsname), so two fleets share an account.
		p, err := awsname.FromProject(f.Project)
		if err != nil {
			l.errs.Add(ProjectFile, l.projectLine, "name", "%v", err)
		}
		f.Baseline.NamePrefix = p
	}
	return lines
}

func (l *loader) loadProjectFile(f *Fleet, data []byte) map[string]int {
	root, err := diag.ParseYAML(ProjectFile, data)
	if err != nil {
		l.errs.Merge(ProjectFile, err)
		return nil
	}
	var configNode *yaml.Node
	for _, p := range diag.Pairs(ProjectFile, "", root, &l.errs) {
		switch p.Key.Value {
		case "name":
			if p.Value.Kind != yaml.ScalarNode || !projectPattern.MatchString(p.Value.Value) {
				l.errs.Add(ProjectFile, p.Value.Line, "name", "must be a project name of letters, digits, '_', '.' or '-', got %s", diag.KindName(p.Value))
				continue
			}
			f.Project = p.Value.Value
			l.projectLine = p.Value.Line
		case "stackConfigDir":
			dir := p.Value.Value
			if p.Value.Kind != yaml.ScalarNode || dir == "" || filepath.IsAbs(dir) || strings.HasPrefix(filepath.Clean(dir), "..") {
				l.errs.Add(ProjectFile, p.Value.Line, "stackConfigDir", "must be a directory inside the repository, such as \"stacks\", got %s", diag.KindName(p.Value))
				continue
			}
			f.StackDir = filepath.ToSlash(filepath.Clean(dir))
		case "config":
			configNode = p.Value
		case SettingsKey:
			f.Settings = readSettings(p.Value, &l.errs)
		case "runtime", "main", "description", "backend", "options", "template", "plugins", "author", "license", "website", "packages":
			// Pulumi's own keys; the pulumi CLI validates them.
		default:
			l.errs.Add(ProjectFile, p.Key.Line, p.Key.Value, "unknown key in a Pulumi project file")
		}
	}
	if f.Project == "" {
		if !hasKey(root, "name") {
			l.errs.Add(ProjectFile, root.Line, "name", "missing: the project name, e.g. name: cells")
		}
		return nil
	}
	lines := map[string]int{}
	if configNode == nil {
		return lines
	}
	for _, p := range diag.Pairs(ProjectFile, "config", configNode, &l.errs) {
		ns, key := l.splitKey(f.Project, p.Key.Value)
		full := ns + ":" + key
		l.baselineSet[full] = true
		value := p.Value
		if value.Kind == yaml.MappingNode {
			value = l.projectConfigValue(full, p.Value)
			if value == nil {
				continue
			}
		}
		switch ns {
		case f.Project:
			if key == OriginVerifyKey {
				l.errs.Add(ProjectFile, p.Key.Line, full, "secrets cannot be set in %s: set it per stack with `pulumi config set --secret %s` (cellctl up does this for you)", ProjectFile, full)
				continue
			}
			if key == AccountKey || key == DNSRoleKey {
				if l.accountKey(&f.baseAccount, ProjectFile, full, value) {
					lines[full] = p.Key.Line
				}
				continue
			}
			k, ok := spec.Lookup(key)
			if !ok {
				l.errs.Add(ProjectFile, p.Key.Line, full, "unknown key (allowed: %s)", strings.Join(prefixed(f.Project, append(spec.Names(), AccountKey, DNSRoleKey)), ", "))
				continue
			}
			if k.Scope == spec.CellOnly {
				l.errs.Add(ProjectFile, p.Key.Line, full, "is specific to one cell and cannot be a fleet default: set it in each cell's stack file")
				continue
			}
			if l.setKey(&f.Baseline, k, ProjectFile, full, value) {
				lines[full] = p.Key.Line
			}
		case "aws":
			if key == "region" {
				if r, ok := l.region(ProjectFile, full, value); ok {
					f.Baseline.Region = r
					lines[full] = p.Key.Line
				}
			} else if l.accountKey(&f.baseAccount, ProjectFile, full, value) {
				lines[full] = p.Key.Line
			} else if l.emulatorKey(&f.baseEndpoints, ProjectFile, full, key, value) {
				lines[full] = p.Key.Line
			} else if !contains(awsKeys, key) {
				l.errs.Add(ProjectFile, p.Key.Line, full, "unknown aws provider key (allowed: %s)", strings.Join(prefixed("aws", awsKeys), ", "))
			}
		default:
			l.errs.Add(ProjectFile, p.Key.Line, full, "unknown namespace %q (allowed: %s:<key> for the fleet, aws:<key> for the provider)", ns, f.Project)
		}
	}
	return lines
}

// projectConfigValue unwraps Pulumi's long form {value:…} / {default:…}.
func (l *loader) projectConfigValue(field string, n *yaml.Node) *yaml.Node {
	var value *yaml.Node
	for _, p := range diag.Pairs(ProjectFile, field, n, &l.errs) {
		switch p.Key.Value {
		case "value", "default":
			if value != nil {
				l.errs.Add(ProjectFile, p.Key.Line, field, "cannot have both 'default' and 'value'")
				return nil
			}
			value = p.Value
		case "description", "type":
		case "secret":
			l.errs.Add(ProjectFile, p.Key.Line, field+".secret", "secrets cannot be fleet defaults: set them per stack with `pulumi config set --secret`")
			return nil
		default:
			l.errs.Add(ProjectFile, p.Key.Line, field+"."+p.Key.Value, "unknown key (allowed: value, default, description, type)")
		}
	}
	if value == nil {
		l.errs.Add(ProjectFile, n.Line, field, "has no 'value' or 'default'")
	}
	return value
}

func (l *loader) splitKey(project, key string) (string, string) {
	if ns, k, ok := strings.Cut(key, ":"); ok {
		return ns, k
	}
	return project, key
}

// stackConfig walks the config mapping of a stack file, checking its
// top-level keys, and calls visit for every config entry.
func (l *loader) stackConfig(f *Fleet, file string, data []byte, visit func(ns, key, full string, k, v *yaml.Node)) bool {
	root, err := diag.ParseYAML(file, data)
	if err != nil {
		l.errs.Merge(file, err)
		return false
	}
	for _, p := range diag.Pairs(file, "", root, &l.errs) {
		switch p.Key.Value {
		case "config":
			for _, c := range diag.Pairs(file, "config", p.Value, &l.errs) {
				ns, key := l.splitKey(f.Project, c.Key.Value)
				visit(ns, key, ns+":"+key, c.Key, c.Value)
			}
		case "encryptionsalt", "secretsprovider", "encryptedkey", "environment":
			// Written by the pulumi CLI for secrets; opaque to cellctl.
		default:
			l.errs.Add(file, p.Key.Line, p.Key.Value, "unknown key in a Pulumi stack file (allowed: config, encryptionsalt, secretsprovider, encryptedkey, environment)")
		}
	}
	return true
}

func (l *loader) loadCell(f *Fleet, id, file string, data []byte) *Cell {
	before := l.errs.Len()
	c := &Cell{Cell: f.Baseline, File: file, Lines: map[string]int{}}
	c.ID = id
	c.Index = -1
	var own accountSettings
	parsed := l.stackConfig(f, file, data, func(ns, key, full string, k, v *yaml.Node) {
		c.Lines[full] = k.Line
		switch ns {
		case f.Project:
			if key == AccountKey || key == DNSRoleKey {
				if l.accountKey(&own, file, full, v) {
					c.Overrides = append(c.Overrides, full)
				}
				return
			}
			if key == OriginVerifyKey {
				c.HasOriginVerifySecret = l.secret(file, full, v)
				return
			}
			if key == OriginVerifyNextKey {
				c.HasOriginVerifyNext = l.secret(file, full, v)
				return
			}
			sk, ok := spec.Lookup(key)
			if !ok {
				l.errs.Add(file, k.Line, full, "unknown key (allowed: %s)", strings.Join(prefixed(f.Project, append(spec.Names(), OriginVerifyKey, AccountKey, DNSRoleKey)), ", "))
				return
			}
			if l.setKey(&c.Cell, sk, file, full, v) && sk.Scope != spec.CellOnly {
				c.Overrides = append(c.Overrides, full)
			}
		case "aws":
			if key == "region" {
				if r, ok := l.region(file, full, v); ok {
					c.Region = r
					c.Overrides = append(c.Overrides, full)
				}
			} else if l.accountKey(&own, file, full, v) {
				c.Overrides = append(c.Overrides, full)
			} else if l.emulatorKey(&c.Endpoints, file, full, key, v) {
				// A provider setting, like the other aws: keys: not a
				// cell setting the drift audit compares.
			} else if !contains(awsKeys, key) {
				l.errs.Add(file, k.Line, full, "unknown aws provider key (allowed: %s)", strings.Join(prefixed("aws", awsKeys), ", "))
			}
		default:
			l.errs.Add(file, k.Line, full, "unknown namespace %q (allowed: %s:<key> for the cell, aws:<key> for the provider)", ns, f.Project)
		}
	})
	if !parsed {
		return nil
	}
	c.access, _ = l.resolveAccess(file, f.baseAccount, own)
	c.dnsRole = resolveDNSRole(f.baseAccount, own)
	missing := func(key, what string) {
		l.errs.Add(file, 0, key, "missing: %s", what)
	}
	if _, set := c.Lines[f.ConfigKey("index")]; !set {
		missing(f.ConfigKey("index"), "the cell's index N (0–255, unique), which gives its VPC 10.N.0.0/16")
	}
	for _, req := range []struct{ key, value string }{
		{"aws:region", c.Region}, {f.ConfigKey("image"), c.Image},
		{f.ConfigKey("fleetBucket"), c.FleetBucket}, {f.ConfigKey("fleetDomain"), c.FleetDomain},
		{f.ConfigKey("hostedZoneId"), c.HostedZoneID},
	} {
		if req.value == "" && !l.baselineSet[req.key] {
			missing(req.key, fmt.Sprintf("set it in this stack file or as the fleet baseline in %s", ProjectFile))
		}
	}
	l.checkFargateSize(file, f, c)
	l.checkCacheIAM(file, f, c)
	l.checkLanes(f, file, c)
	l.checkMigrations(file, f, c)
	if c.CertificateArn != "" && c.Region != "" {
		if parts := strings.Split(c.CertificateArn, ":"); len(parts) > 3 && parts[3] != c.Region {
			// The certificate's line when this file sets it, else the
			// region's that moved the cell away from an inherited
			// certificate, else the baseline's pair, once.
			certKey := f.ConfigKey("certificateArn")
			where, line, key := blame(f, c, certKey, "aws:region")
			switch {
			case where == ProjectFile:
				l.once(ProjectFile, line, key, "the certificate is in %s but aws:region is %s (line %d): an ALB needs a certificate from its own region; set %s to one in %s",
					parts[3], c.Region, f.BaselineLines["aws:region"], certKey, c.Region)
			case key == certKey:
				l.errs.Add(file, line, key, "the certificate is in %s but the cell is in %s%s: an ALB needs a certificate from its own region; set %s to one in %s",
					parts[3], c.Region, origin(f, c, "aws:region"), certKey, c.Region)
			default:
				l.errs.Add(file, line, key, "the certificate%s is in %s but the cell is in %s: an ALB needs a certificate from its own region; set %s in this file",
					origin(f, c, certKey), parts[3], c.Region, certKey)
			}
		}
	}
	sort.Strings(c.Overrides)
	if l.errs.Len() > before {
		return nil
	}
	return c
}

func (l *loader) loadRouter(f *Fleet, file string, data []byte) *Router {
	before := l.errs.Len()
	r := &Router{File: file, Region: f.Baseline.Region, TenantHeader: DefaultTenantHeader,
		PriceClass: DefaultPriceClass, FleetBucket: f.Baseline.FleetBucket, EdgeMemoryMB: edge.DefaultMemoryMB,
		EdgeVersionsKept: DefaultEdgeVersionsKept, Lines: map[string]int{}}
	var own accountSettings
	parsed := l.stackConfig(f, file, data, func(ns, key, full string, k, v *yaml.Node) {
		r.Lines[full] = k.Line
		switch {
		case ns == "aws" && key == "region":
			if reg, ok := l.region(file, full, v); ok {
				r.Region = reg
			}
		case ns == f.Project && key == DNSRoleKey:
			l.errs.Add(file, k.Line, full, "applies to cells only: the router writes its viewer records with its own provider, in cells:viewerHostedZoneId of its own account")
		case (ns == "aws" || ns == f.Project) && l.accountKey(&own, file, full, v):
		case ns == "aws" && l.emulatorKey(&r.Endpoints, file, full, key, v):
		case ns == "aws" && contains(awsKeys, key):
		case ns == f.Project && key == OriginVerifyKey:
			r.HasOriginVerifySecret = l.secret(file, full, v)
		case ns == f.Project && key == "tenantHeader":
			if s, ok := l.plainString(file, full, v); ok {
				if !headerPattern.MatchString(s) {
					l.errs.Add(file, v.Line, full, "must be an HTTP header name of 1-64 letters, digits and hyphens, got %s", diag.Echo(s))
				} else if err := edge.CheckTenantHeader(s); err != nil {
					l.errs.Add(file, v.Line, full, "%v", err)
				} else {
					r.TenantHeader = s
				}
			}
		case ns == f.Project && key == "tenantFrom":
			if s, ok := l.plainString(file, full, v); ok {
				if _, err := edge.CheckTenantFrom(s); err != nil {
					l.errs.Add(file, v.Line, full, "%v", err)
				} else {
					r.TenantFrom = s
				}
			}
		case ns == f.Project && key == "priceClass":
			if s, ok := l.plainString(file, full, v); ok {
				if !contains(priceClasses, s) {
					l.errs.Add(file, v.Line, full, "must be one of %s, got %s", diag.Quote(priceClasses), diag.Echo(s))
				} else {
					r.PriceClass = s
				}
			}
		case ns == f.Project && key == "edgeMemoryMb":
			k := spec.Key{Name: key, Kind: spec.Int, Min: edge.MinMemoryMB, Max: edge.MaxMemoryMB,
				Hint: fmt.Sprintf("the edge function's memory in MB, an integer from %d to %d (Lambda's range for origin-request functions)", edge.MinMemoryMB, edge.MaxMemoryMB)}
			var tmp spec.Cell
			k.Set = func(_ *spec.Cell, _ string, n float64) { r.EdgeMemoryMB = int(n) }
			l.setKey(&tmp, k, file, full, v)
		case ns == f.Project && key == "edgeVersionsKept":
			k := spec.Key{Name: key, Kind: spec.Int, Min: 1, Max: MaxEdgeVersionsKept,
				Hint: fmt.Sprintf("how many of the newest edge function versions the router keeps besides the ones a distribution runs, an integer from 1 to %d (default %d)", MaxEdgeVersionsKept, DefaultEdgeVersionsKept)}
			var tmp spec.Cell
			k.Set = func(_ *spec.Cell, _ string, n float64) { r.EdgeVersionsKept = int(n) }
			l.setKey(&tmp, k, file, full, v)
		case ns == f.Project && key == "viewerDomains":
			r.ViewerDomains = l.viewerDomains(file, full, v)
		case ns == f.Project && key == "viewerHostedZoneId":
			if s, ok := l.plainString(file, full, v); ok {
				if !viewerZonePattern.MatchString(s) {
					l.errs.Add(file, v.Line, full, "must be a Route 53 hosted zone id such as \"Z0123456789ABCDEFGHIJ\", got %q", s)
				} else {
					r.ViewerHostedZoneID = s
				}
			}
		case ns == f.Project && key == "viewerCertificateArn":
			if s, ok := l.plainString(file, full, v); ok {
				if !viewerCertPattern.MatchString(s) {
					l.errs.Add(file, v.Line, full, "must be an ACM certificate ARN in us-east-1 (CloudFront reads viewer certificates only there), got %q", s)
				} else {
					r.ViewerCertificateArn = s
				}
			}
		case ns == f.Project && key == "fleetBucket":
			k, _ := spec.Lookup("fleetBucket")
			var tmp spec.Cell
			if l.setKey(&tmp, k, file, full, v) {
				r.FleetBucket = tmp.FleetBucket
			}
		default:
			l.errs.Add(file, k.Line, full, "unknown key for the router stack (allowed: aws:region, %s)",
				strings.Join(prefixed(f.Project, routerKeys), ", "))
		}
	})
	if !parsed {
		return nil
	}
	r.access, _ = l.resolveAccess(file, f.baseAccount, own)
	if r.Region == "" && !l.baselineSet["aws:region"] {
		l.errs.Add(file, 0, "aws:region", "missing: set it in this stack file or as the fleet baseline in %s", ProjectFile)
	}
	if r.FleetBucket == "" && !l.baselineSet[f.ConfigKey("fleetBucket")] {
		l.errs.Add(file, 0, f.ConfigKey("fleetBucket"), "missing: the router stack owns the fleet bucket; set it in %s", ProjectFile)
	}
	if len(r.ViewerDomains) > 0 && r.ViewerHostedZoneID == "" {
		l.errs.Add(file, r.Lines[f.ConfigKey("viewerDomains")], f.ConfigKey("viewerHostedZoneId"),
			"missing: viewer domains need the Route 53 hosted zone their alias records go in")
	}
	if len(r.ViewerDomains) == 0 {
		for _, k := range []string{"viewerHostedZoneId", "viewerCertificateArn"} {
			if line, set := r.Lines[f.ConfigKey(k)]; set {
				l.errs.Add(file, line, f.ConfigKey(k), "set without %s: it only applies to viewer domains", f.ConfigKey("viewerDomains"))
			}
		}
	}
	if l.errs.Len() > before {
		return nil
	}
	return r
}

// secret accepts only an encrypted value: a secret must never sit in a
// stack file in plaintext.
func (l *loader) secret(file, field string, v *yaml.Node) bool {
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == "secure" && v.Content[i+1].Kind == yaml.ScalarNode && v.Content[i+1].Value != "" {
				if len(v.Content) == 2 {
					return true
				}
			}
		}
	}
	l.errs.Add(file, v.Line, field, "must be a secret (secure: …), never plaintext: set it with `pulumi config set --secret %s`", field)
	return false
}

func (l *loader) plainString(file, field string, v *yaml.Node) (string, bool) {
	return l.scalar(file, field, "a string", v)
}

// scalar returns the text of a plain scalar value; what names the expected
// value in the error.
func (l *loader) scalar(file, field, what string, v *yaml.Node) (string, bool) {
	if v.Kind == yaml.MappingNode && hasKey(v, "secure") {
		l.errs.Add(file, v.Line, field, "cannot be a secret: cellctl reads it to validate the fleet; store it in plaintext")
		return "", false
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" || v.ShortTag() == "!!bool" || v.Value == "" {
		l.errs.Add(file, v.Line, field, "must be %s, got %s", what, diag.KindName(v))
		return "", false
	}
	if len(v.Value) > spec.MaxValueBytes {
		l.errs.Add(file, v.Line, field, "is %d bytes long; at most %d bytes are allowed for any value", len(v.Value), spec.MaxValueBytes)
		return "", false
	}
	return v.Value, true
}

func (l *loader) region(file, field string, v *yaml.Node) (string, bool) {
	s, ok := l.plainString(file, field, v)
	if !ok {
		return "", false
	}
	if !regionPattern.MatchString(s) {
		l.errs.Add(file, v.Line, field, "must be an AWS region such as \"us-east-1\", got %s", diag.Echo(s))
		return "", false
	}
	return s, true
}

// setKey parses one value per its schema and stores it; it reports a
// precise error and returns false when the value is not allowed.
func (l *loader) setKey(c *spec.Cell, k spec.Key, file, field string, v *yaml.Node) bool {
	if k.Kind == spec.Bool {
		return l.setBool(c, k, file, field, v)
	}
	s, ok := l.scalar(file, field, k.Describe(), v)
	if !ok {
		return false
	}
	switch k.Kind {
	case spec.Int, spec.Number:
		plain := decimalInt
		if k.Kind == spec.Number {
			plain = decimalNumber
		}
		if !plain.MatchString(s) {
			tag := v.ShortTag()
			if (tag != "!!int" && tag != "!!float") || decimalNumber.MatchString(s) {
				// Not a number at all, or a plain fraction for an integer key.
				l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), diag.KindName(v))
				return false
			}
			how := "plain decimal digits such as 10"
			if k.Kind == spec.Number {
				how = "a plain decimal number such as 2.5"
			}
			l.errs.Add(file, v.Line, field, "must be %s, written as %s (no underscores, + signs, leading zeros, exponents or 0x/0o prefixes), got %s", k.Describe(), how, diag.Echo(s))
			return false
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), diag.Echo(s))
			return false
		}
		if n < k.Min || n > k.Max || (len(k.Allowed) > 0 && !contains(k.Allowed, strconv.FormatInt(int64(n), 10))) {
			l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), s)
			return false
		}
		k.Set(c, s, n)
	default:
		if max := k.MaxBytes(); len(s) > max {
			l.errs.Add(file, v.Line, field, "is %d bytes long; at most %d bytes are allowed (%s)", len(s), max, k.LimitReason())
			return false
		}
		if len(k.Allowed) > 0 && !contains(k.Allowed, s) {
			l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), diag.Echo(s))
			return false
		}
		if k.Pattern != nil && !k.Pattern.MatchString(s) {
			l.errs.Add(file, v.Line, field, "must be %s, got %s", k.Describe(), diag.Echo(s))
			return false
		}
		if k.Check != nil {
			if err := k.Check(s); err != nil {
				l.errs.Add(file, v.Line, field, "%v", err)
				return false
			}
		}
		k.Set(c, s, 0)
	}
	return true
}

// Fargate accepts only certain CPU/memory pairs; catching a bad pair here
// saves a failed deploy. The problem is reported at the line of the key the
// cell's own file sets (memory first), naming where the other value came
// from; a pair wholly inherited from Pulumi.yaml is reported there, once.
func (l *loader) checkFargateSize(file string, f *Fleet, c *Cell) {
	allowed, ok := fargateMemory(c.TaskCPU, c.TaskMemory)
	if ok {
		return
	}
	if allowed == "" {
		return // an unknown CPU size: the key check already reported it
	}
	cpuKey, memKey := f.ConfigKey("taskCpu"), f.ConfigKey("taskMemory")
	where, line, key := blame(f, c, memKey, cpuKey)
	if where == ProjectFile {
		file = ProjectFile
	}
	other, otherKey := "", cpuKey
	if key == cpuKey {
		otherKey = memKey
	}
	if line, set := f.BaselineLines[otherKey]; where == ProjectFile && set {
		other = fmt.Sprintf(" (line %d)", line) // both in Pulumi.yaml
	} else {
		other = origin(f, c, otherKey)
	}
	if key == memKey {
		l.once(file, line, key, "%d MiB does not fit taskCpu %d%s: Fargate allows %s", c.TaskMemory, c.TaskCPU, other, allowed)
		return
	}
	l.once(file, line, key, "%d does not fit taskMemory %d MiB%s: with taskCpu %d Fargate allows %s; set %s to one of them", c.TaskCPU, c.TaskMemory, other, c.TaskCPU, allowed, memKey)
}

// fargateMemory says whether mem MiB is a Fargate size for cpu units and,
// when it is not, which sizes are ("" for a cpu Fargate does not offer).
func fargateMemory(cpu, mem int) (allowed string, ok bool) {
	type span struct{ min, max, step int }
	sizes := map[int]span{
		512: {1024, 4096, 1024}, 1024: {2048, 8192, 1024},
		2048: {4096, 16384, 1024}, 4096: {8192, 30720, 1024}, 8192: {16384, 61440, 4096}, 16384: {32768, 122880, 8192},
	}
	if cpu == 256 {
		return "512, 1024 or 2048 MiB", mem == 512 || mem == 1024 || mem == 2048
	}
	sp, known := sizes[cpu]
	if !known {
		return "", true
	}
	return fmt.Sprintf("%d–%d MiB in steps of %d", sp.min, sp.max, sp.step),
		mem >= sp.min && mem <= sp.max && (mem-sp.min)%sp.step == 0
}

// checkCacheIAM refuses a cache engine version without IAM authentication:
// the app connects as an IAM-authenticated ElastiCache user, which needs
// Valkey 7.2 or Redis OSS 7.0 and later (awsfacts.CacheIAMAuthProblem).
// Rendering the cache without IAM would hand the app a password it was
// never given, so the fleet is refused here, at the line that set the
// version (or the engine), rather than at the first `up`.
func (l *loader) checkCacheIAM(file string, f *Fleet, c *Cell) {
	err := awsfacts.CacheIAMAuthProblem(c.CacheEngine, c.CacheEngineVersion)
	if err == nil {
		return
	}
	for _, k := range []string{"cacheEngineVersion", "cacheEngine"} {
		key := f.ConfigKey(k)
		if line, set := c.Lines[key]; set {
			l.errs.Add(file, line, key, "%v: set %s to %s or later, or %s to valkey", err, f.ConfigKey("cacheEngineVersion"), awsfacts.CacheIAMAuthMinimum(c.CacheEngine), f.ConfigKey("cacheEngine"))
			return
		}
	}
	for _, k := range []string{"cacheEngineVersion", "cacheEngine"} {
		key := f.ConfigKey(k)
		if line, set := f.BaselineLines[key]; set {
			// A baseline fault is reported once, by the first cell.
			if !l.reported[key] {
				l.errs.Add(ProjectFile, line, key, "%v: set %s to %s or later, or %s to valkey", err, key, awsfacts.CacheIAMAuthMinimum(c.CacheEngine), f.ConfigKey("cacheEngine"))
			}
			l.reported[key] = true
			return
		}
	}
	l.errs.Add(file, 0, f.ConfigKey("cacheEngineVersion"), "%v", err)
}

func hasKey(n *yaml.Node, key string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func prefixed(ns string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = ns + ":" + k
	}
	return out
}

// routerKeys are the cells:<key>s of the router stack.
var routerKeys = []string{"tenantHeader", "tenantFrom", "priceClass", "fleetBucket", "edgeMemoryMb", "edgeVersionsKept", "viewerDomains", "viewerHostedZoneId", "viewerCertificateArn", OriginVerifyKey}

var (
	// A viewer domain: a DNS name, optionally with a leading "*." (tenants
	// as the first label, e.g. "*.app.example.com").
	viewerDomainPattern = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	viewerZonePattern   = regexp.MustCompile(`^Z[A-Z0-9]{1,31}$`)
	viewerCertPattern   = regexp.MustCompile(`^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate/[A-Za-z0-9-]+$`)
)

// viewerDomains reads the router's tenant-facing domain names: a YAML list
// of DNS names, each at most once, at most 100 (CloudFront's alias quota).
func (l *loader) viewerDomains(file, field string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		l.errs.Add(file, v.Line, field, "must be a list of DNS names such as [app.example.com, \"*.app.example.com\"]")
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, item := range v.Content {
		s, ok := l.plainString(file, field, item)
		if !ok {
			continue
		}
		switch {
		case !viewerDomainPattern.MatchString(s):
			l.errs.Add(file, item.Line, field, "%q is not a DNS name (lowercase labels; a wildcard only as the leftmost label, \"*.app.example.com\")", s)
		case seen[s]:
			l.errs.Add(file, item.Line, field, "%q is listed twice", s)
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) > 100 {
		l.errs.Add(file, v.Line, field, "%d domains: a CloudFront distribution has at most 100 alternate domain names", len(out))
	}
	return out
}
