package awsmodel

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// Invoke tokens the model answers.
const (
	InvokeAvailabilityZones   = "aws:index/getAvailabilityZones:getAvailabilityZones"
	InvokePartition           = "aws:index/getPartition:getPartition"
	InvokeRegion              = "aws:index/getRegion:getRegion"
	InvokeCallerIdentity      = "aws:index/getCallerIdentity:getCallerIdentity"
	InvokeManagedPrefixList   = "aws:ec2/getManagedPrefixList:getManagedPrefixList"
	InvokePolicyDocument      = "aws:iam/getPolicyDocument:getPolicyDocument"
	InvokeCachePolicy         = "aws:cloudfront/getCachePolicy:getCachePolicy"
	InvokeOriginRequestPolicy = "aws:cloudfront/getOriginRequestPolicy:getOriginRequestPolicy"
)

// Invokes lists the invoke tokens the model answers.
func Invokes() []string {
	out := make([]string, 0, len(invokes))
	for k := range invokes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var invokes = map[string]func(env Env, args resource.PropertyMap) (resource.PropertyMap, error){
	InvokeAvailabilityZones:   getAvailabilityZones,
	InvokePartition:           getPartition,
	InvokeRegion:              getRegion,
	InvokeCallerIdentity:      getCallerIdentity,
	InvokeManagedPrefixList:   getManagedPrefixList,
	InvokePolicyDocument:      getPolicyDocument,
	InvokeCachePolicy:         getManagedCachePolicy,
	InvokeOriginRequestPolicy: getManagedOriginRequestPolicy,
}

// Invoke answers a data-source call as pulumi-aws would in env. Unknown
// tokens are an error naming the token.
func Invoke(token string, args resource.PropertyMap, env Env) (resource.PropertyMap, error) {
	fn, ok := invokes[token]
	if !ok {
		return nil, fmt.Errorf("the simulated AWS (awsmodel) does not implement the invoke %q; implemented: %s",
			token, strings.Join(Invokes(), ", "))
	}
	return fn(env.normalized(), args)
}

func getAvailabilityZones(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	state := str(args, "state")
	if state != "" && !slices.Contains([]string{"available", "information", "impaired", "unavailable"}, state) {
		return nil, fmt.Errorf("expected state to be one of [available information impaired unavailable], got %s", state)
	}
	excludeNames, excludeIDs := strings_(args, "excludeNames"), strings_(args, "excludeZoneIds")
	filters := objects(args, "filters")
	var names, ids []string
	for _, z := range Zones(env.Region) {
		if slices.Contains(excludeNames, z.Name) || slices.Contains(excludeIDs, z.ID) {
			continue
		}
		if state != "" && state != "available" {
			continue
		}
		if !zoneMatches(z, env.Region, filters) {
			continue
		}
		names = append(names, z.Name)
		ids = append(ids, z.ID)
	}
	out := resource.PropertyMap{
		"id": pv(env.Region), "names": pv(nonNil(names)), "zoneIds": pv(nonNil(ids)), "groupNames": pv([]string{env.Region}),
	}
	for _, k := range []string{"state", "allAvailabilityZones", "excludeNames", "excludeZoneIds", "filters"} {
		if v, ok := args[resource.PropertyKey(k)]; ok {
			out[resource.PropertyKey(k)] = v
		}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func zoneMatches(z Zone, region string, filters []resource.PropertyMap) bool {
	for _, f := range filters {
		vals := strings_(f, "values")
		var have string
		switch str(f, "name") {
		case "zone-name":
			have = z.Name
		case "zone-id":
			have = z.ID
		case "opt-in-status":
			have = "opt-in-not-required"
		case "zone-type":
			have = "availability-zone"
		case "region-name", "group-name":
			have = region
		case "state":
			have = "available"
		default:
			continue
		}
		if !slices.Contains(vals, have) {
			return false
		}
	}
	return true
}

func getPartition(env Env, _ resource.PropertyMap) (resource.PropertyMap, error) {
	rev := "com.amazonaws"
	if env.Partition == "aws-cn" {
		rev = "cn.com.amazonaws"
	}
	return resource.PropertyMap{
		"id": pv(env.Partition), "partition": pv(env.Partition), "dnsSuffix": pv(env.DNSSuffix()), "reverseDnsPrefix": pv(rev),
	}, nil
}

func getRegion(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	region := env.Region
	if n := str(args, "name"); n != "" {
		if !ValidRegion(n) {
			return nil, fmt.Errorf("region %q not found", n)
		}
		region = n
	}
	return resource.PropertyMap{
		"id": pv(region), "name": pv(region), "description": pv(regionOf(region).description),
		"endpoint": pv("ec2." + region + "." + env.DNSSuffix()),
	}, nil
}

func getCallerIdentity(env Env, _ resource.PropertyMap) (resource.PropertyMap, error) {
	r := newRand([]byte("caller:" + env.Account))
	return resource.PropertyMap{
		"id": pv(env.Account), "accountId": pv(env.Account),
		"arn":    pv(env.ARN("iam", "", env.Account, "user/cellctl-sim")),
		"userId": pv("AIDA" + r.Chars("user-id", 17, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
	}, nil
}

// cloudFrontOriginFacing is a sample of the CloudFront origin-facing ranges.
var cloudFrontOriginFacing = []string{"120.52.22.96/27", "205.251.249.0/24", "180.163.57.128/26", "204.246.168.0/22",
	"18.160.0.0/15", "205.251.252.0/23", "54.192.0.0/16", "204.246.173.0/24", "54.230.200.0/21", "120.253.240.192/26",
	"116.129.226.128/26", "130.176.0.0/17", "108.156.0.0/14", "99.86.0.0/16", "13.32.0.0/15", "120.253.245.128/26",
	"13.224.0.0/14", "70.132.0.0/18", "15.158.0.0/16", "13.249.0.0/16", "18.238.0.0/15", "18.244.0.0/15",
	"205.251.208.0/20", "65.9.128.0/18", "130.176.128.0/18", "58.254.138.0/25", "54.230.208.0/20", "3.160.0.0/14",
	"116.129.226.0/25", "52.222.128.0/17", "18.164.0.0/15", "64.252.128.0/18", "205.251.254.0/24", "54.230.224.0/19",
	"71.152.0.0/17", "216.137.32.0/19", "204.246.172.0/24", "18.172.0.0/15", "120.52.39.128/27", "118.193.97.64/26",
	"18.154.0.0/15", "54.240.128.0/18", "205.251.250.0/23", "180.163.57.0/25", "52.46.0.0/18", "52.82.128.0/19",
	"54.230.0.0/17", "54.230.128.0/18", "54.239.128.0/18", "130.176.224.0/20", "36.103.232.128/26", "52.84.0.0/15",
	"143.204.0.0/16", "144.220.0.0/16", "120.52.153.192/26"}

type prefixList struct {
	id, name   string
	maxEntries int
	entries    []string
}

func prefixLists(env Env) []prefixList {
	ri := regionOf(env.Region)
	return []prefixList{
		{ri.cloudfrontPrefixList, "com.amazonaws.global.cloudfront.origin-facing", 55, cloudFrontOriginFacing},
		{ri.s3PrefixList, "com.amazonaws." + env.Region + ".s3", len(s3Ranges(env.Region)), s3Ranges(env.Region)},
		{ri.dynamoPrefixList, "com.amazonaws." + env.Region + ".dynamodb", 3, []string{"3.218.180.0/22", "52.94.0.0/22", "52.119.224.0/20"}},
	}
}

func getManagedPrefixList(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	name, id := str(args, "name"), str(args, "id")
	for _, f := range objects(args, "filters") {
		vals := strings_(f, "values")
		if len(vals) == 0 {
			continue
		}
		switch str(f, "name") {
		case "prefix-list-name":
			name = vals[0]
		case "prefix-list-id":
			id = vals[0]
		}
	}
	for _, pl := range prefixLists(env) {
		if (name != "" && pl.name != name) || (id != "" && pl.id != id) || (name == "" && id == "") {
			continue
		}
		entries := make([]resource.PropertyMap, len(pl.entries))
		for i, c := range pl.entries {
			entries[i] = resource.PropertyMap{"cidr": pv(c), "description": pv("")}
		}
		out := resource.PropertyMap{
			"id": pv(pl.id), "name": pv(pl.name), "arn": pv(env.ARN("ec2", env.Region, "aws", "prefix-list/"+pl.id)),
			"ownerId": pv("AWS"), "addressFamily": pv("IPv4"), "maxEntries": pv(pl.maxEntries), "version": pv(1),
			"entries": pv(entries), "tags": pv(map[string]string{}),
		}
		if f, ok := args["filters"]; ok {
			out["filters"] = f
		}
		return out, nil
	}
	return nil, fmt.Errorf("reading EC2 Managed Prefix List: no matching EC2 Managed Prefix List found (name %q, id %q)", name, id)
}

// getPolicyDocument renders an IAM policy document from statements, in
// the shape the provider returns (indented json and minified json).
func getPolicyDocument(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	type principal struct {
		typ string
		ids []string
	}
	doc := map[string]any{"Version": "2012-10-17"}
	if v := str(args, "version"); v != "" {
		doc["Version"] = v
	}
	if id := str(args, "policyId"); id != "" {
		doc["Id"] = id
	}
	var stmts []any
	for _, s := range objects(args, "statements") {
		st := map[string]any{}
		if sid := str(s, "sid"); sid != "" {
			st["Sid"] = sid
		}
		effect := str(s, "effect")
		if effect == "" {
			effect = "Allow"
		}
		st["Effect"] = effect
		for k, key := range map[string]string{"actions": "Action", "notActions": "NotAction", "resources": "Resource", "notResources": "NotResource"} {
			if vals := strings_(s, k); len(vals) == 1 {
				st[key] = vals[0]
			} else if len(vals) > 1 {
				st[key] = vals
			}
		}
		for k, key := range map[string]string{"principals": "Principal", "notPrincipals": "NotPrincipal"} {
			ps := objects(s, k)
			if len(ps) == 0 {
				continue
			}
			m := map[string]any{}
			for _, p := range ps {
				pr := principal{str(p, "type"), strings_(p, "identifiers")}
				if pr.typ == "*" {
					st[key] = "*"
					continue
				}
				if len(pr.ids) == 1 {
					m[pr.typ] = pr.ids[0]
				} else {
					m[pr.typ] = pr.ids
				}
			}
			if len(m) > 0 {
				st[key] = m
			}
		}
		if conds := objects(s, "conditions"); len(conds) > 0 {
			m := map[string]map[string]any{}
			for _, c := range conds {
				test := str(c, "test")
				if m[test] == nil {
					m[test] = map[string]any{}
				}
				vals := strings_(c, "values")
				if len(vals) == 1 {
					m[test][str(c, "variable")] = vals[0]
				} else {
					m[test][str(c, "variable")] = vals
				}
			}
			st["Condition"] = m
		}
		stmts = append(stmts, st)
	}
	doc["Statement"] = stmts
	pretty, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	mini, _ := json.Marshal(doc)
	out := resource.PropertyMap{
		"json": pv(string(pretty)), "minifiedJson": pv(string(mini)), "id": pv(fmt.Sprint(hashcode(string(mini)))),
		"version": pv(doc["Version"]),
	}
	if st, ok := args["statements"]; ok {
		out["statements"] = st
	}
	return out, nil
}

var managedCachePolicies = map[string]string{
	"Managed-CachingDisabled":                        "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
	"Managed-CachingOptimized":                       "658327ea-f89d-4fab-a63d-7e88639e58f6",
	"Managed-CachingOptimizedForUncompressedObjects": "b2884449-e4de-46a7-ac36-70bc7f1ddd6d",
}

var managedOriginRequestPolicies = map[string]string{
	"Managed-AllViewer":                             "216adef6-5c7f-47e4-b989-5492eafa07d3",
	"Managed-AllViewerExceptHostHeader":             "b689b0a8-53d0-40ab-baf2-68738e2966ac",
	"Managed-CORS-S3Origin":                         "88a5eaf4-2fd4-4709-b370-b4c650ea3fcf",
	"Managed-AllViewerAndCloudFrontHeaders-2022-06": "33f36d7e-f396-46d9-90e0-52428a34d9dc",
	"Managed-CORS-CustomOrigin":                     "59781a5b-3903-41f3-afcb-af62929ccde1",
	"Managed-UserAgentRefererHeaders":               "acba4595-bd28-49b8-b9fe-13317c0390fa",
}

func managedLookup(table map[string]string, kind string, args resource.PropertyMap) (string, string, error) {
	name, id := str(args, "name"), str(args, "id")
	for n, i := range table {
		if n == name || i == id {
			return n, i, nil
		}
	}
	return "", "", fmt.Errorf("no matching CloudFront %s found (name %q, id %q); the simulator knows the AWS-managed ones", kind, name, id)
}

func getManagedCachePolicy(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	name, id, err := managedLookup(managedCachePolicies, "Cache Policy", args)
	if err != nil {
		return nil, err
	}
	ttl := map[bool][3]int{true: {0, 0, 0}, false: {0, 86400, 31536000}}[name == "Managed-CachingDisabled"]
	return resource.PropertyMap{
		"id": pv(id), "name": pv(name), "comment": pv("Policy for " + strings.TrimPrefix(name, "Managed-")),
		"etag": pv("E23ZP02F085DFQ"), "minTtl": pv(ttl[0]), "defaultTtl": pv(ttl[1]), "maxTtl": pv(ttl[2]),
	}, nil
}

func getManagedOriginRequestPolicy(env Env, args resource.PropertyMap) (resource.PropertyMap, error) {
	name, id, err := managedLookup(managedOriginRequestPolicies, "Origin Request Policy", args)
	if err != nil {
		return nil, err
	}
	return resource.PropertyMap{
		"id": pv(id), "name": pv(name), "comment": pv("Policy for " + strings.TrimPrefix(name, "Managed-")), "etag": pv("E23ZP02F085DFQ"),
	}, nil
}

// ProviderEnv reads an aws provider's configuration (region, defaultTags)
// over base. Values may arrive JSON-encoded, as the engine sends them.
func ProviderEnv(config resource.PropertyMap, base Env) (Env, error) {
	env := base
	if r := str(config, "region"); r != "" {
		if !ValidRegion(r) {
			return env, fmt.Errorf("invalid AWS Region: %s", r)
		}
		env.Region = r
	}
	if v, ok := get(config, "defaultTags"); ok {
		if v.IsString() {
			var dt struct {
				Tags map[string]string `json:"tags"`
			}
			if err := json.Unmarshal([]byte(v.StringValue()), &dt); err == nil {
				env.DefaultTags = dt.Tags
			}
		} else if v.IsObject() {
			env.DefaultTags = stringMap(v.ObjectValue(), "tags")
		}
	}
	if ids := strings_(config, "allowedAccountIds"); len(ids) > 0 && !slices.Contains(ids, env.normalized().Account) {
		return env, fmt.Errorf("AWS account ID not allowed: %s", env.normalized().Account)
	}
	if v, ok := get(config, "allowedAccountIds"); ok && v.IsString() {
		var ids []string
		if json.Unmarshal([]byte(v.StringValue()), &ids) == nil && len(ids) > 0 && !slices.Contains(ids, env.normalized().Account) {
			return env, fmt.Errorf("AWS account ID not allowed: %s", env.normalized().Account)
		}
	}
	return env.normalized(), nil
}
