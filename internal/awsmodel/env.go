// Package awsmodel is cellctl's knowledge of AWS as the pulumi-aws v6.83.4
// provider presents it: for a resource type token, its logical name and
// inputs, which inputs the provider accepts, how it autonames, which changes
// force a replacement, and which outputs (ids, ARNs, endpoints) AWS reports.
// It also answers the data-source invokes the programs use.
//
// Two consumers share it: the offline mocks behind `cellctl plan`
// (NewMock, deterministic) and the simulated AWS provider in internal/sim.
// Rules that need other resources see them through Cloud and Lister (a
// subnet inside its VPC and apart from its siblings); checks over a whole
// account (unique names, quotas, dependents) live in the simulator, which
// asks this package for the facts (References, UniqueNames, QuotaDefs).
package awsmodel

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Env is where resources are created: partition, account and region.
type Env struct {
	Partition string `json:"partition"`
	Account   string `json:"account"`
	Region    string `json:"region"`
	// DefaultTags are the provider's defaultTags.tags, merged into every
	// taggable resource's tagsAll.
	DefaultTags map[string]string `json:"defaultTags,omitempty"`
}

// DefaultAccount is the account id the mocks and the simulator report.
const DefaultAccount = "123456789012"

// DefaultEnv is the environment of a provider with no configuration.
func DefaultEnv() Env {
	return Env{Partition: "aws", Account: DefaultAccount, Region: "us-east-1"}
}

func (e Env) normalized() Env {
	if e.Partition == "" {
		e.Partition = "aws"
	}
	if e.Account == "" {
		e.Account = DefaultAccount
	}
	if e.Region == "" {
		e.Region = "us-east-1"
	}
	return e
}

// DNSSuffix is the partition's DNS suffix.
func (e Env) DNSSuffix() string {
	switch e.Partition {
	case "aws-cn":
		return "amazonaws.com.cn"
	default:
		return "amazonaws.com"
	}
}

// ARN builds an ARN in this environment. Pass region "" for global
// services (IAM, S3, CloudFront) and account "" where ARNs omit it (S3).
func (e Env) ARN(service, region, account, res string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", e.normalized().Partition, service, region, account, res)
}

// regional builds an ARN in this environment's region and account.
func (e Env) regional(service, res string) string {
	return e.ARN(service, e.Region, e.Account, res)
}

type regionInfo struct {
	description string
	azLetters   string
	// hosted zones of regional endpoints
	albZone, nlbZone, rdsZone, s3Zone string
	// AWS-managed prefix lists
	s3PrefixList, dynamoPrefixList, cloudfrontPrefixList string
}

// regions are the regions the model knows by heart; any other well-formed
// region gets three zones and derived ids.
var regions = map[string]regionInfo{
	"us-east-1":      {"US East (N. Virginia)", "abcdef", "Z35SXDOTRQ7X7K", "Z26RNL4JYFTOTI", "Z2R2ITUGPM61AM", "Z3AQBSTGFYJSTF", "pl-63a5400a", "pl-02cd2c6b", "pl-3b927c52"},
	"us-east-2":      {"US East (Ohio)", "abc", "Z3AADJGX6KTTL2", "ZLMOA37VPKANP", "Z2XHWR1WZ565X2", "Z2O1EMRO9K5GLX", "pl-7ba54012", "pl-4ca54025", "pl-b6a144df"},
	"us-west-1":      {"US West (N. California)", "ab", "Z368ELLRRE2KJ0", "Z24FKFUX50B4VW", "Z10WI91S59XXQN", "Z2F56UZL2M1ACD", "pl-6ba54002", "pl-6ea54007", "pl-4ea04527"},
	"us-west-2":      {"US West (Oregon)", "abcd", "Z1H1FL5HABSF5", "Z18D5FSROUN65G", "Z1PVIF0B656C1W", "Z3BJ6K6RIION7M", "pl-68a54001", "pl-00a54069", "pl-82a045eb"},
	"ca-central-1":   {"Canada (Central)", "abd", "ZQSVJUPU6J1EY", "Z2EPGBW3API2WT", "Z1XGG4LU6SMQ5C", "Z1QDHH18159H29", "pl-7da54014", "pl-4ea54027", "pl-38a64351"},
	"eu-west-1":      {"Europe (Ireland)", "abc", "Z32O12XQLNTSW2", "Z2IFOLAFXWLO4F", "Z29XKXDKYMONMX", "Z1BKCTXD74EZPE", "pl-6da54004", "pl-6fa54006", "pl-4fa04526"},
	"eu-west-2":      {"Europe (London)", "abc", "ZHURV8PSTC4K8", "ZD4D7Y8KGAS4G", "Z1Y7RM3ALAJKUC", "Z3GKZC51ZF0DB4", "pl-7ca54015", "pl-75b1541c", "pl-93a247fa"},
	"eu-central-1":   {"Europe (Frankfurt)", "abc", "Z215JYRZR1TBD5", "Z3F0SRJ5LGBH90", "Z1RLNUO7B9Q6NB", "Z21DNDUVLTQW6Q", "pl-6ea54007", "pl-66a5400f", "pl-a3a144ca"},
	"ap-south-1":     {"Asia Pacific (Mumbai)", "abc", "ZP97RAFLXTNZK", "ZVDDRBQ08TROA", "Z2VFMSZA74J7XZ", "Z11RGJOFQNVJUP", "pl-78a54011", "pl-66a5400f", "pl-9aa247f3"},
	"ap-southeast-1": {"Asia Pacific (Singapore)", "abc", "Z1LMS91P8CMLE5", "ZKVM4W9LS7TM", "Z2G0U3KFCY8NZ5", "Z3O0J2DXBE1FTB", "pl-6fa54006", "pl-67a5400e", "pl-31a34658"},
	"ap-southeast-2": {"Asia Pacific (Sydney)", "abc", "Z1GM3OXH4ZPM65", "ZCT6FZBF4DROD", "Z2G9ALFWRLMOHF", "Z1WCIGYICN2BYD", "pl-6ca54005", "pl-62a5400b", "pl-b8a742d1"},
	"ap-northeast-1": {"Asia Pacific (Tokyo)", "acd", "Z14GRHDCWA56QT", "Z31USIVHYNEOWT", "Z24O6O9L7SGTNB", "Z2M4EHUR26P7ZW", "pl-61a54008", "pl-78a54011", "pl-58a04531"},
	"sa-east-1":      {"South America (Sao Paulo)", "abc", "Z2P70J7HTTTPLU", "ZTK26PT1VY4CU", "Z2KOWX7UBKPJ0C", "Z7KQH4QJS55SO", "pl-6aa54003", "pl-60a54009", "pl-5da64334"},
}

var regionPattern = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$`)

// ValidRegion reports whether name is a well-formed AWS region name.
func ValidRegion(name string) bool { return regionPattern.MatchString(name) }

// KnownRegions lists the regions the model has detailed data for.
func KnownRegions() []string {
	out := make([]string, 0, len(regions))
	for r := range regions {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func regionOf(name string) regionInfo {
	if ri, ok := regions[name]; ok {
		return ri
	}
	r := newRand([]byte("region:" + name))
	return regionInfo{
		description:          name,
		azLetters:            "abc",
		albZone:              "Z" + r.Chars("alb", 13, upperAlnum),
		nlbZone:              "Z" + r.Chars("nlb", 13, upperAlnum),
		rdsZone:              "Z" + r.Chars("rds", 13, upperAlnum),
		s3Zone:               "Z" + r.Chars("s3", 13, upperAlnum),
		s3PrefixList:         "pl-" + r.Hex("pl-s3", 8),
		dynamoPrefixList:     "pl-" + r.Hex("pl-ddb", 8),
		cloudfrontPrefixList: "pl-" + r.Hex("pl-cf", 8),
	}
}

// shortRegion is the compact region code AWS uses in zone ids and cache
// endpoints: us-east-1 → use1, eu-west-2 → euw2, ap-southeast-1 → apse1.
func shortRegion(region string) string {
	parts := strings.Split(region, "-")
	if len(parts) < 3 {
		return region
	}
	dir := parts[len(parts)-2]
	var d string
	switch dir {
	case "east":
		d = "e"
	case "west":
		d = "w"
	case "north":
		d = "n"
	case "south":
		d = "s"
	case "central":
		d = "c"
	case "northeast":
		d = "ne"
	case "southeast":
		d = "se"
	case "northwest":
		d = "nw"
	case "southwest":
		d = "sw"
	default:
		d = dir[:1]
	}
	return strings.Join(parts[:len(parts)-2], "") + d + parts[len(parts)-1]
}

// Zone is one availability zone of a region.
type Zone struct {
	Name string `json:"name"`
	ID   string `json:"zoneId"`
}

// Zones returns the availability zones of region, in name order.
func Zones(region string) []Zone {
	ri := regionOf(region)
	out := make([]Zone, 0, len(ri.azLetters))
	for i, l := range ri.azLetters {
		out = append(out, Zone{Name: region + string(l), ID: fmt.Sprintf("%s-az%d", shortRegion(region), i+1)})
	}
	return out
}

// ZoneID returns the zone id of an AZ name, and false when the name is not
// an AZ of its region.
func ZoneID(az string) (string, bool) {
	if len(az) < 2 {
		return "", false
	}
	for _, z := range Zones(az[:len(az)-1]) {
		if z.Name == az {
			return z.ID, true
		}
	}
	return "", false
}
