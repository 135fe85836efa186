package awsapi

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The describe and list calls of the quota audit, answered from the
// simulated cloud's own resources in the protocols the pinned clients
// speak: EC2 query (service/ec2 v1.347.0) and AWS query (service/rds
// v1.133.0, service/elasticache v1.65.0, service/elasticloadbalancingv2
// v1.64.0, service/iam v1.66.0) — form-encoded POST /, XML answers. The
// service is the one the request is signed for (SigV4 credential scope).
//
// Only the read calls the product makes are served; anything else is
// AWS's InvalidAction, so a reader that starts calling something new fails
// in every sim test until the simulator learns it.

var signedService = regexp.MustCompile(`Credential=[^/]+/\d{8}/[a-z0-9-]+/([a-z0-9-]+)/aws4_request`)

// isQuery reports whether r is an EC2 query or AWS query request.
func isQuery(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") && r.URL.Path == "/"
}

// xmlNamespaces are the namespaces AWS's query responses carry.
var xmlNamespaces = map[string]string{
	"ec2":                  "http://ec2.amazonaws.com/doc/2016-11-15/",
	"rds":                  "http://rds.amazonaws.com/doc/2014-10-31/",
	"elasticache":          "http://elasticache.amazonaws.com/doc/2015-02-02/",
	"elasticloadbalancing": "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/",
	"iam":                  "https://iam.amazonaws.com/doc/2010-05-08/",
	"sts":                  "https://sts.amazonaws.com/doc/" + stsVersion + "/",
}

// el is one XML element: text, or children.
type el struct {
	name string
	text string
	kids []el
}

func leaf(name string, v any) el { return el{name: name, text: fmt.Sprint(v)} }
func node(name string, kids ...el) el {
	if kids == nil {
		kids = []el{}
	}
	return el{name: name, kids: kids}
}

func (e el) write(b *strings.Builder) {
	b.WriteString("<" + e.name + ">")
	if e.kids == nil {
		xml.EscapeText(b, []byte(e.text))
	}
	for _, k := range e.kids {
		k.write(b)
	}
	b.WriteString("</" + e.name + ">")
}

// queryIn is a parsed query request.
type queryIn struct{ v url.Values }

func (q queryIn) get(k string) string { return q.v.Get(k) }

// filters reads EC2's Filter.N.Name / Filter.N.Value.M.
func (q queryIn) filters() map[string][]string {
	out := map[string][]string{}
	for i := 1; ; i++ {
		name := q.v.Get(fmt.Sprintf("Filter.%d.Name", i))
		if name == "" {
			return out
		}
		for j := 1; ; j++ {
			v := q.v.Get(fmt.Sprintf("Filter.%d.Value.%d", i, j))
			if v == "" {
				break
			}
			out[name] = append(out[name], v)
		}
	}
}

// page cuts items into the page a request asks for. size is the page
// size parameter (sizeKey), token the continuation (tokenKey); lo..hi
// bound the size as the API does.
func (q queryIn) page(items []el, sizeKey, tokenKey string, lo, hi, def int) ([]el, string, *apiError) {
	size := def
	if s := q.get(sizeKey); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return nil, "", &apiError{400, "InvalidParameterValue", "InvalidParameterValue", fmt.Sprintf("Value ( %s ) for parameter %s is invalid. Must be an integer from %d to %d.", s, sizeKey, lo, hi)}
		}
		size = n
	}
	offset := 0
	if tok := q.get(tokenKey); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "sim-"))
		if err != nil || n < 0 || !strings.HasPrefix(tok, "sim-") {
			return nil, "", &apiError{400, "InvalidNextToken", "InvalidNextToken", "The specified " + tokenKey + " is not valid."}
		}
		offset = n
	}
	if offset > len(items) {
		offset = len(items)
	}
	end := min(offset+size, len(items))
	next := ""
	if end < len(items) {
		next = "sim-" + strconv.Itoa(end)
	}
	return items[offset:end], next, nil
}

func (h *apiHandler) serveQuery(w http.ResponseWriter, r *http.Request, body []byte, region string) {
	m := signedService.FindStringSubmatch(r.Header.Get("Authorization"))
	service := ""
	if m != nil {
		service = m[1]
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		h.failQuery(w, service, &apiError{400, "MalformedQueryString", "MalformedQueryString", err.Error()})
		return
	}
	in := queryIn{v}
	action := in.get("Action")
	if action == "" {
		h.failQuery(w, service, &apiError{400, "MissingAction", "MissingAction", "The request must contain the parameter Action."})
		return
	}
	if service == "iam" {
		// IAM is global: its resources are every region's.
		region = ""
	}
	var result []el
	var aerr *apiError
	if service == "sts" {
		// STS reads and writes the home dir's registry under its own lock,
		// not the account's resources.
		result, aerr = h.sts(action, in)
	} else if verr := h.c.Read(func(st *store.State, _ *store.Control) error {
		q := &queryView{View: h.c.NewView(st), region: region}
		result, aerr = q.answer(service, action, in)
		return nil
	}); verr != nil {
		aerr = internal(verr)
	}
	if aerr != nil {
		h.failQuery(w, service, aerr)
		return
	}
	var b strings.Builder
	b.WriteString(xml.Header)
	ns := xmlNamespaces[service]
	if service == "ec2" {
		// EC2 query: members directly under <ActionResponse>.
		b.WriteString(`<` + action + `Response xmlns="` + ns + `"><requestId>` + requestID() + `</requestId>`)
		for _, e := range result {
			e.write(&b)
		}
		b.WriteString(`</` + action + `Response>`)
	} else {
		b.WriteString(`<` + action + `Response xmlns="` + ns + `"><` + action + `Result>`)
		for _, e := range result {
			e.write(&b)
		}
		b.WriteString(`</` + action + `Result><ResponseMetadata><RequestId>` + requestID() + `</RequestId></ResponseMetadata></` + action + `Response>`)
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Write([]byte(b.String()))
}

var requests atomic.Int64

func requestID() string {
	return fmt.Sprintf("5ec1a7ed-0000-4000-8000-%012d", requests.Add(1))
}

// failQuery writes an error in EC2's or AWS query's shape.
func (h *apiHandler) failQuery(w http.ResponseWriter, service string, e *apiError) {
	var b strings.Builder
	b.WriteString(xml.Header)
	code := e.queryCode
	if code == "" {
		code = e.shape
	}
	if service == "ec2" {
		b.WriteString("<Response><Errors><Error>")
		leaf("Code", code).write(&b)
		leaf("Message", e.message).write(&b)
		b.WriteString("</Error></Errors><RequestID>" + requestID() + "</RequestID></Response>")
	} else {
		b.WriteString(`<ErrorResponse xmlns="` + xmlNamespaces[service] + `"><Error><Type>Sender</Type>`)
		leaf("Code", code).write(&b)
		leaf("Message", e.message).write(&b)
		b.WriteString("</Error><RequestId>" + requestID() + "</RequestId></ErrorResponse>")
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.status)
	w.Write([]byte(b.String()))
}

// queryView answers describe calls from the live resources of a region.
type queryView struct {
	*store.View
	region string // "" = every region (IAM)
}

// live lists the records of typ in the region, in id order. Abandoned
// resources are live: Pulumi forgot them, AWS did not; so is the region's
// default network, which AWS created (store.View.Defaults).
func (q *queryView) live(typ string) []*store.Record {
	var out []*store.Record
	for _, r := range q.Defaults(q.region) {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	for _, r := range q.State.Resources {
		if r.Type == typ && (q.region == "" || store.GlobalType(typ) || r.Region == q.region) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (q *queryView) get(r *store.Record, k string) any {
	return store.Plain(q.Outputs(r)[resource.PropertyKey(k)])
}

func (q *queryView) s(r *store.Record, k string) string { return store.Str(q.get(r, k)) }

func matches(f map[string][]string, name, value string) bool {
	vals, ok := f[name]
	if !ok {
		return true
	}
	for _, v := range vals {
		if v == value {
			return true
		}
	}
	return false
}

func unknownAction(service, action string) *apiError {
	return &apiError{400, "InvalidAction", "InvalidAction", fmt.Sprintf("The action %s is not valid for this web service (the simulator serves the %s read calls cellctl makes).", action, service)}
}

func (q *queryView) answer(service, action string, in queryIn) ([]el, *apiError) {
	switch service {
	case "ec2":
		return q.ec2(action, in)
	case "rds":
		return q.rds(action, in)
	case "elasticache":
		return q.elasticache(action, in)
	case "elasticloadbalancing":
		return q.elbv2(action, in)
	case "iam":
		return q.iam(action, in)
	}
	return nil, &apiError{400, "InvalidAction", "InvalidAction", fmt.Sprintf("the simulator does not serve service %q over the query protocol", service)}
}

// ---- EC2 -------------------------------------------------------------------

func (q *queryView) ec2(action string, in queryIn) ([]el, *apiError) {
	f := in.filters()
	var items []el
	set := ""
	paged := true
	switch action {
	case "DescribeAddresses":
		set, paged = "addressesSet", false
		for _, r := range q.live("aws:ec2/eip:Eip") {
			if !matches(f, "domain", "vpc") {
				continue
			}
			items = append(items, node("item", leaf("publicIp", q.s(r, "publicIp")), leaf("allocationId", r.ID), leaf("domain", "vpc"),
				leaf("networkBorderGroup", r.Region), leaf("publicIpv4Pool", "amazon")))
		}
	case "DescribeVpcs":
		set = "vpcSet"
		for _, r := range q.live("aws:ec2/vpc:Vpc") {
			items = append(items, node("item", leaf("vpcId", r.ID), leaf("ownerId", q.Account()), leaf("state", "available"),
				leaf("cidrBlock", q.s(r, "cidrBlock")), leaf("instanceTenancy", "default"), leaf("isDefault", fmt.Sprint(q.get(r, "isDefault") == true))))
		}
	case "DescribeInternetGateways":
		set = "internetGatewaySet"
		for _, r := range q.live("aws:ec2/internetGateway:InternetGateway") {
			att := []el{}
			if vpc := q.s(r, "vpcId"); vpc != "" {
				att = append(att, node("item", leaf("vpcId", vpc), leaf("state", "available")))
			}
			items = append(items, node("item", leaf("internetGatewayId", r.ID), leaf("ownerId", q.Account()), node("attachmentSet", att...)))
		}
	case "DescribeNatGateways":
		set = "natGatewaySet"
		for _, r := range q.live("aws:ec2/natGateway:NatGateway") {
			if !matches(f, "state", "available") {
				continue
			}
			items = append(items, node("item", leaf("natGatewayId", r.ID), leaf("subnetId", q.s(r, "subnetId")), leaf("vpcId", q.s(r, "vpcId")),
				leaf("state", "available"), leaf("connectivityType", "public")))
		}
	case "DescribeSubnets":
		set = "subnetSet"
		for _, r := range q.live("aws:ec2/subnet:Subnet") {
			items = append(items, node("item", leaf("subnetId", r.ID), leaf("vpcId", q.s(r, "vpcId")), leaf("state", "available"),
				leaf("cidrBlock", q.s(r, "cidrBlock")), leaf("availabilityZone", q.s(r, "availabilityZone")), leaf("ownerId", q.Account())))
		}
	case "DescribeSecurityGroups":
		set = "securityGroupInfo"
		rules := map[string][2][]el{} // group id → ingress, egress permissions
		for i, typ := range []string{"aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"} {
			for _, r := range q.live(typ) {
				g := q.s(r, "securityGroupId")
				pair := rules[g]
				pair[i] = append(pair[i], q.permission(r))
				rules[g] = pair
			}
		}
		for _, r := range q.live("aws:ec2/securityGroup:SecurityGroup") {
			pair := rules[r.ID]
			items = append(items, node("item", leaf("ownerId", q.Account()), leaf("groupId", r.ID), leaf("groupName", q.s(r, "name")),
				leaf("groupDescription", q.s(r, "description")), leaf("vpcId", q.s(r, "vpcId")),
				node("ipPermissions", pair[0]...), node("ipPermissionsEgress", pair[1]...)))
		}
		// Every VPC comes with its default security group (Amazon VPC User
		// Guide, "Default security groups for your VPCs"): inbound from
		// its own members, outbound anywhere. The default VPC's is one of
		// the region's default resources, listed above.
		for _, r := range q.live("aws:ec2/vpc:Vpc") {
			id := q.s(r, "defaultSecurityGroupId")
			if id == "" || q.get(r, "isDefault") == true {
				continue
			}
			items = append(items, node("item", leaf("ownerId", q.Account()), leaf("groupId", id), leaf("groupName", "default"),
				leaf("groupDescription", "default VPC security group"), leaf("vpcId", r.ID),
				node("ipPermissions", node("item", leaf("ipProtocol", "-1"),
					node("groups", node("item", leaf("userId", q.Account()), leaf("groupId", id))))),
				node("ipPermissionsEgress", node("item", leaf("ipProtocol", "-1"),
					node("ipRanges", node("item", leaf("cidrIp", "0.0.0.0/0")))))))
		}
	case "DescribeManagedPrefixLists":
		set = "prefixListSet"
		region := q.region
		for _, pl := range awsmodel.ManagedPrefixLists(awsmodel.Env{Partition: "aws", Account: q.Account(), Region: region}) {
			items = append(items, node("item", leaf("prefixListId", pl.ID), leaf("addressFamily", "IPv4"), leaf("state", "create-complete"),
				leaf("prefixListName", pl.Name), leaf("maxEntries", pl.MaxEntries), leaf("version", 1), leaf("ownerId", "AWS")))
		}
	case "DescribeVpcEndpoints":
		set = "vpcEndpointSet"
		for _, r := range q.live("aws:ec2/vpcEndpoint:VpcEndpoint") {
			typ := q.s(r, "vpcEndpointType")
			if typ == "" {
				typ = "Gateway"
			}
			if !matches(f, "vpc-endpoint-type", typ) {
				continue
			}
			items = append(items, node("item", leaf("vpcEndpointId", r.ID), leaf("vpcEndpointType", typ), leaf("vpcId", q.s(r, "vpcId")),
				leaf("serviceName", q.s(r, "serviceName")), leaf("state", "available")))
		}
	default:
		return nil, unknownAction("ec2", action)
	}
	if !paged {
		return []el{node(set, items...)}, nil
	}
	page, next, aerr := in.page(items, "MaxResults", "NextToken", 5, 1000, 1000)
	if action == "DescribeManagedPrefixLists" {
		page, next, aerr = in.page(items, "MaxResults", "NextToken", 1, 100, 100)
	}
	if aerr != nil {
		return nil, aerr
	}
	out := []el{node(set, page...)}
	if next != "" {
		out = append(out, leaf("nextToken", next))
	}
	return out, nil
}

// permission renders one rule resource as an IpPermission.
func (q *queryView) permission(r *store.Record) el {
	kids := []el{leaf("ipProtocol", q.s(r, "ipProtocol"))}
	if from, ok := q.get(r, "fromPort").(float64); ok {
		kids = append(kids, leaf("fromPort", int(from)))
	}
	if to, ok := q.get(r, "toPort").(float64); ok {
		kids = append(kids, leaf("toPort", int(to)))
	}
	v4, v6, pls, groups := []el{}, []el{}, []el{}, []el{}
	if c := q.s(r, "cidrIpv4"); c != "" {
		v4 = append(v4, node("item", leaf("cidrIp", c)))
	}
	if c := q.s(r, "cidrIpv6"); c != "" {
		v6 = append(v6, node("item", leaf("cidrIpv6", c)))
	}
	if p := q.s(r, "prefixListId"); p != "" {
		pls = append(pls, node("item", leaf("prefixListId", p)))
	}
	if g := q.s(r, "referencedSecurityGroupId"); g != "" {
		groups = append(groups, node("item", leaf("groupId", g), leaf("userId", q.Account())))
	}
	kids = append(kids, node("ipRanges", v4...), node("ipv6Ranges", v6...), node("prefixListIds", pls...), node("groups", groups...))
	return node("item", kids...)
}

// ---- RDS, ElastiCache, ELBv2, IAM (AWS query) --------------------------------

func (q *queryView) rds(action string, in queryIn) ([]el, *apiError) {
	var items []el
	var list, member string
	switch action {
	case "DescribeDBClusters":
		list, member = "DBClusters", "DBCluster"
		for _, r := range q.live("aws:rds/cluster:Cluster") {
			items = append(items, el{name: member, kids: []el{leaf("DBClusterIdentifier", q.s(r, "clusterIdentifier")),
				leaf("DBClusterArn", q.s(r, "arn")), leaf("Engine", q.s(r, "engine")), leaf("EngineVersion", q.s(r, "engineVersion")), leaf("Status", "available")}})
		}
	case "DescribeDBInstances":
		list, member = "DBInstances", "DBInstance"
		for _, r := range q.live("aws:rds/clusterInstance:ClusterInstance") {
			items = append(items, el{name: member, kids: []el{leaf("DBInstanceIdentifier", q.s(r, "identifier")),
				leaf("DBInstanceArn", q.s(r, "arn")), leaf("DBInstanceClass", q.s(r, "instanceClass")), leaf("Engine", q.s(r, "engine")),
				leaf("DBClusterIdentifier", q.s(r, "clusterIdentifier")), leaf("DBInstanceStatus", "available")}})
		}
	case "DescribeDBEngineVersions":
		// The versions AWS offers for new clusters: the model's list,
		// less what `sim engine-version retire` took away.
		list, member = "DBEngineVersions", "DBEngineVersion"
		engine, version, family := in.get("Engine"), in.get("EngineVersion"), in.get("DBParameterGroupFamily")
		majors := make([]string, 0, len(awsmodel.AuroraPostgreSQLVersions))
		for m := range awsmodel.AuroraPostgreSQLVersions {
			majors = append(majors, m)
		}
		sort.Slice(majors, func(i, j int) bool { a, _ := strconv.Atoi(majors[i]); b, _ := strconv.Atoi(majors[j]); return a < b })
		for _, m := range majors {
			fam := "aurora-postgresql" + m
			for _, v := range awsmodel.AuroraPostgreSQLVersions[m] {
				if (engine != "" && engine != "aurora-postgresql") || (version != "" && version != v) || (family != "" && family != fam) || q.State.IsRetired("aurora-postgresql", v) {
					continue
				}
				items = append(items, el{name: member, kids: []el{leaf("Engine", "aurora-postgresql"), leaf("EngineVersion", v),
					leaf("DBParameterGroupFamily", fam), leaf("Status", "available")}})
			}
		}
	default:
		return nil, unknownAction("rds", action)
	}
	page, next, aerr := in.page(items, "MaxRecords", "Marker", 20, 100, 100)
	if aerr != nil {
		return nil, aerr
	}
	out := []el{node(list, page...)}
	if next != "" {
		out = append(out, leaf("Marker", next))
	}
	return out, nil
}

func (q *queryView) elasticache(action string, in queryIn) ([]el, *apiError) {
	if action != "DescribeCacheClusters" {
		return nil, unknownAction("elasticache", action)
	}
	// A replication group's nodes are cache clusters of one node each,
	// named <group>-001, -002… as ElastiCache names them.
	var items []el
	for _, r := range q.live("aws:elasticache/replicationGroup:ReplicationGroup") {
		n := cacheNodesOf(q.Outputs(r))
		for i := 1; i <= n; i++ {
			items = append(items, el{name: "CacheCluster", kids: []el{leaf("CacheClusterId", fmt.Sprintf("%s-%03d", r.ID, i)),
				leaf("CacheNodeType", q.s(r, "nodeType")), leaf("Engine", q.s(r, "engine")), leaf("CacheClusterStatus", "available"),
				leaf("NumCacheNodes", 1), leaf("ReplicationGroupId", r.ID)}})
		}
	}
	page, next, aerr := in.page(items, "MaxRecords", "Marker", 20, 100, 100)
	if aerr != nil {
		return nil, aerr
	}
	out := []el{node("CacheClusters", page...)}
	if next != "" {
		out = append(out, leaf("Marker", next))
	}
	return out, nil
}

// cacheNodesOf counts a replication group's nodes the way the quota does.
func cacheNodesOf(out resource.PropertyMap) int {
	for _, u := range awsmodel.QuotaUsage("aws:elasticache/replicationGroup:ReplicationGroup", awsmodel.Env{}, out, nil) {
		return int(u.Amount)
	}
	return 1
}

func (q *queryView) elbv2(action string, in queryIn) ([]el, *apiError) {
	var items []el
	var list string
	switch action {
	case "DescribeLoadBalancers":
		list = "LoadBalancers"
		for _, r := range q.live("aws:lb/loadBalancer:LoadBalancer") {
			typ := q.s(r, "loadBalancerType")
			if typ == "" {
				typ = "application"
			}
			items = append(items, node("member", leaf("LoadBalancerArn", q.s(r, "arn")), leaf("LoadBalancerName", q.s(r, "name")),
				leaf("DNSName", q.s(r, "dnsName")), leaf("Type", typ), leaf("Scheme", "internet-facing"), leaf("VpcId", q.s(r, "vpcId")),
				node("State", leaf("Code", "active"))))
		}
	case "DescribeTargetGroups":
		list = "TargetGroups"
		for _, r := range q.live("aws:lb/targetGroup:TargetGroup") {
			items = append(items, node("member", leaf("TargetGroupArn", q.s(r, "arn")), leaf("TargetGroupName", q.s(r, "name")),
				leaf("Protocol", q.s(r, "protocol")), leaf("TargetType", q.s(r, "targetType")), leaf("VpcId", q.s(r, "vpcId"))))
		}
	default:
		return nil, unknownAction("elasticloadbalancing", action)
	}
	page, next, aerr := in.page(items, "PageSize", "Marker", 1, 400, 400)
	if aerr != nil {
		return nil, aerr
	}
	out := []el{node(list, page...)}
	if next != "" {
		out = append(out, leaf("NextMarker", next))
	}
	return out, nil
}

func (q *queryView) iam(action string, in queryIn) ([]el, *apiError) {
	if action != "ListRoles" {
		return nil, unknownAction("iam", action)
	}
	var items []el
	for _, r := range q.live("aws:iam/role:Role") {
		items = append(items, node("member", leaf("Path", "/"), leaf("RoleName", q.s(r, "name")), leaf("RoleId", q.s(r, "uniqueId")),
			leaf("Arn", q.s(r, "arn")), leaf("CreateDate", r.Created.UTC().Format("2006-01-02T15:04:05Z"))))
	}
	page, next, aerr := in.page(items, "MaxItems", "Marker", 1, 1000, 100)
	if aerr != nil {
		return nil, aerr
	}
	out := []el{node("Roles", page...), leaf("IsTruncated", next != "")}
	if next != "" {
		out = append(out, leaf("Marker", next))
	}
	return out, nil
}
