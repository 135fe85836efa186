package cellmodule

import (
	"fmt"
	iampolicy "github.com/cellctl/cellctl/internal/policy"
	"net/netip"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/offline"
)

// allowedTypes is the contract with the simulator and the AWS output model.
var allowedTypes = map[string]bool{
	"aws:ec2/vpc:Vpc": true, "aws:ec2/subnet:Subnet": true, "aws:ec2/internetGateway:InternetGateway": true,
	"aws:ec2/eip:Eip": true, "aws:ec2/natGateway:NatGateway": true, "aws:ec2/routeTable:RouteTable": true,
	"aws:ec2/routeTableAssociation:RouteTableAssociation": true, "aws:ec2/vpcEndpoint:VpcEndpoint": true,
	"aws:ec2/securityGroup:SecurityGroup": true, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": true,
	"aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": true, "aws:rds/subnetGroup:SubnetGroup": true,
	"aws:rds/clusterParameterGroup:ClusterParameterGroup": true, "aws:rds/cluster:Cluster": true,
	"aws:rds/clusterInstance:ClusterInstance": true, "aws:elasticache/subnetGroup:SubnetGroup": true,
	"aws:elasticache/user:User": true, "aws:elasticache/userGroup:UserGroup": true,
	"aws:elasticache/replicationGroup:ReplicationGroup": true, "aws:sqs/queue:Queue": true,
	"aws:sqs/queuePolicy:QueuePolicy": true, "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": true,
	"aws:iam/role:Role": true, "aws:iam/rolePolicy:RolePolicy": true,
	"aws:iam/rolePolicyAttachment:RolePolicyAttachment": true, "aws:cloudwatch/logGroup:LogGroup": true,
	"aws:cloudwatch/metricAlarm:MetricAlarm": true, "aws:ecs/cluster:Cluster": true,
	"aws:ecs/taskDefinition:TaskDefinition": true, "aws:ecs/service:Service": true,
	"aws:lb/loadBalancer:LoadBalancer": true, "aws:lb/targetGroup:TargetGroup": true,
	"aws:lb/listener:Listener": true, "aws:lb/listenerRule:ListenerRule": true,
	"aws:acm/certificate:Certificate": true, "aws:acm/certificateValidation:CertificateValidation": true,
	"aws:route53/record:Record": true,
}

// untaggable are the allowed types AWS (and the provider) cannot tag.
var untaggable = map[string]bool{
	"aws:ec2/routeTableAssociation:RouteTableAssociation": true,
	"aws:sqs/queuePolicy:QueuePolicy":                     true,
	"aws:sqs/redriveAllowPolicy:RedriveAllowPolicy":       true,
	"aws:iam/rolePolicy:RolePolicy":                       true,
	"aws:iam/rolePolicyAttachment:RolePolicyAttachment":   true,
	"aws:route53/record:Record":                           true,
	"aws:acm/certificateValidation:CertificateValidation": true,
}

var allowedInvokes = map[string]bool{
	"aws:index/getAvailabilityZones:getAvailabilityZones": true,
	"aws:index/getPartition:getPartition":                 true,
	"aws:ec2/getManagedPrefixList:getManagedPrefixList":   true,
	"aws:index/getCallerIdentity:getCallerIdentity":       true,
}

func TestEveryChildIsParentedNamedAndTagged(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		id := r.spec.ID
		comps := r.rec.ByType(TypeToken)
		if len(comps) != 1 || comps[0].Name != id || comps[0].Custom {
			t.Fatalf("want one %s component named %s, got %+v", TypeToken, id, comps)
		}
		comp := comps[0]
		counts := map[string]int{}
		for _, res := range r.rec.Resources() {
			if res == comp {
				continue
			}
			counts[res.Type]++
			if !allowedTypes[res.Type] {
				t.Errorf("%s: type %s is not in the agreed list", res.Name, res.Type)
			}
			if res.Parent != comp.URN {
				t.Errorf("%s (%s): parent %q, want the cell %q", res.Name, res.Type, res.Parent, comp.URN)
			}
			if !strings.HasPrefix(res.Name, id+"-") {
				t.Errorf("%s (%s): name does not start with %q", res.Name, res.Type, id+"-")
			}
			if untaggable[res.Type] {
				continue
			}
			tags := get(in(res), "tags")
			if get(tags, TagCell) != id || get(tags, TagManagedBy) != ManagedBy {
				t.Errorf("%s (%s): tags %v, want cell=%s and managed-by=cellctl", res.Name, res.Type, tags, id)
			}
		}
		nat := 3
		if r.spec.NATMode == spec.NATSingle {
			nat = 1
		}
		want := map[string]int{
			"aws:ec2/vpc:Vpc": 1, "aws:ec2/subnet:Subnet": 9, "aws:ec2/eip:Eip": nat, "aws:ec2/natGateway:NatGateway": nat,
			"aws:ec2/routeTable:RouteTable": 5, "aws:ec2/routeTableAssociation:RouteTableAssociation": 9,
			"aws:rds/clusterInstance:ClusterInstance": r.spec.AuroraInstances, "aws:sqs/queue:Queue": 2,
			"aws:cloudwatch/metricAlarm:MetricAlarm": 3, "aws:ecs/service:Service": 1,
		}
		for typ, n := range want {
			if counts[typ] != n {
				t.Errorf("%d × %s, want %d", counts[typ], typ, n)
			}
		}
		t.Logf("%d resources: %v", len(r.rec.Resources())-1, counts)
	})
}

func TestInvokesAreTheAgreedOnes(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		seen := map[string]bool{}
		for _, inv := range r.rec.Invokes() {
			seen[inv.Token] = true
			if !allowedInvokes[inv.Token] {
				t.Errorf("unexpected invoke %s", inv.Token)
			}
			args := plainMap(inv.Args)
			switch inv.Token {
			case "aws:index/getAvailabilityZones:getAvailabilityZones":
				if args["state"] != "available" {
					t.Errorf("getAvailabilityZones state = %v, want available", args["state"])
				}
			case "aws:ec2/getManagedPrefixList:getManagedPrefixList":
				if args["name"] != CloudFrontPrefixList {
					t.Errorf("prefix list name = %v", args["name"])
				}
			}
		}
		for _, tok := range []string{"aws:index/getAvailabilityZones:getAvailabilityZones", "aws:index/getPartition:getPartition", "aws:ec2/getManagedPrefixList:getManagedPrefixList"} {
			if !seen[tok] {
				t.Errorf("invoke %s not made", tok)
			}
		}
	})
}

func TestNetwork(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		vpc := in(r.one(t, "vpc"))
		if vpc["cidrBlock"] != s.CIDR() || vpc["enableDnsSupport"] != true || vpc["enableDnsHostnames"] != true {
			t.Errorf("vpc inputs %v", vpc)
		}
		vpcPrefix := netip.MustParsePrefix(s.CIDR())
		layout, _ := CarveSubnets(vpcPrefix)

		subnetAZ := map[string]string{} // subnet id → AZ
		var all []netip.Prefix
		for _, tier := range layout.Tiers() {
			azs := map[string]bool{}
			var got, want []string
			for _, res := range r.rec.ByType("aws:ec2/subnet:Subnet") {
				i := in(res)
				if get(i, "tags", "tier") != tier.Name {
					continue
				}
				az := str(i["availabilityZone"])
				azs[az] = true
				subnetAZ[res.ID] = az
				if res.Name != s.ID+"-"+tier.Name+"-"+azSuffix(az) {
					t.Errorf("subnet name %s", res.Name)
				}
				if i["vpcId"] != r.idOf("vpc") || i["mapPublicIpOnLaunch"] != false {
					t.Errorf("%s: vpcId %v mapPublicIpOnLaunch %v", res.Name, i["vpcId"], i["mapPublicIpOnLaunch"])
				}
				p := netip.MustParsePrefix(str(i["cidrBlock"]))
				if !vpcPrefix.Contains(p.Addr()) || p.Bits() <= 16 {
					t.Errorf("%s: %s outside %s", res.Name, p, vpcPrefix)
				}
				all = append(all, p)
				got = append(got, p.String())
			}
			for _, p := range tier.Prefixes {
				want = append(want, p.String())
			}
			if len(azs) != spec.AZCount || !sameSet(got, want) {
				t.Errorf("%s tier: AZs %v cidrs %v, want 3 AZs and %v", tier.Name, azs, got, want)
			}
		}
		for i := range all {
			for j := i + 1; j < len(all); j++ {
				if all[i].Overlaps(all[j]) {
					t.Errorf("subnets %s and %s overlap", all[i], all[j])
				}
			}
		}

		igw := r.idOf("igw")
		if in(r.one(t, "igw"))["vpcId"] != r.idOf("vpc") {
			t.Error("internet gateway not in the cell's VPC")
		}

		// NAT gateways: per mode, in public subnets, each with its own EIP.
		public := r.subnetIDs("public")
		nats := r.rec.ByType("aws:ec2/natGateway:NatGateway")
		eips := r.rec.ByType("aws:ec2/eip:Eip")
		wantNAT := map[string]int{spec.NATPerAZ: 3, spec.NATSingle: 1}[s.NATMode]
		if len(nats) != wantNAT || len(eips) != wantNAT {
			t.Fatalf("%s: %d NAT gateways and %d EIPs, want %d", s.NATMode, len(nats), len(eips), wantNAT)
		}
		natAZ := map[string]string{}
		allocs := map[string]bool{}
		for _, e := range eips {
			if in(e)["domain"] != "vpc" {
				t.Errorf("%s: domain %v", e.Name, in(e)["domain"])
			}
			allocs[str(out(e)["allocationId"])] = true
		}
		for _, n := range nats {
			i := in(n)
			sub := str(i["subnetId"])
			if !contains(public, sub) {
				t.Errorf("%s in subnet %s, not a public one", n.Name, sub)
			}
			if !allocs[str(i["allocationId"])] {
				t.Errorf("%s: allocation %v is not one of the cell's EIPs", n.Name, i["allocationId"])
			}
			delete(allocs, str(i["allocationId"]))
			if !contains(n.DependsOn, urnOf(r, "igw")) {
				t.Errorf("%s does not depend on the internet gateway", n.Name)
			}
			natAZ[n.ID] = subnetAZ[sub]
		}

		// Route tables and what each subnet is associated with.
		tables := map[string]map[string]any{}
		for _, rt := range r.rec.ByType("aws:ec2/routeTable:RouteTable") {
			tables[rt.ID] = in(rt)
			if tables[rt.ID]["vpcId"] != r.idOf("vpc") {
				t.Errorf("%s not in the cell's VPC", rt.Name)
			}
		}
		assoc := map[string]string{} // subnet → table
		for _, a := range r.rec.ByType("aws:ec2/routeTableAssociation:RouteTableAssociation") {
			i := in(a)
			if _, dup := assoc[str(i["subnetId"])]; dup {
				t.Errorf("subnet %v associated twice", i["subnetId"])
			}
			assoc[str(i["subnetId"])] = str(i["routeTableId"])
		}
		if len(assoc) != 9 {
			t.Errorf("%d subnets associated, want 9", len(assoc))
		}
		routes := func(table string) []any { a, _ := tables[table]["routes"].([]any); return a }
		for _, sub := range public {
			rs := routes(assoc[sub])
			if len(rs) != 1 || get(rs, 0, "cidrBlock") != "0.0.0.0/0" || get(rs, 0, "gatewayId") != igw || get(rs, 0, "natGatewayId") != nil {
				t.Errorf("public subnet %s routes %v, want only 0.0.0.0/0 → %s", sub, rs, igw)
			}
		}
		privateTables := map[string]bool{}
		usedNAT := map[string]bool{}
		for _, sub := range r.subnetIDs("private") {
			privateTables[assoc[sub]] = true
			rs := routes(assoc[sub])
			nat := str(get(rs, 0, "natGatewayId"))
			if len(rs) != 1 || get(rs, 0, "cidrBlock") != "0.0.0.0/0" || get(rs, 0, "gatewayId") != nil || nat == "" {
				t.Fatalf("private subnet %s routes %v, want only 0.0.0.0/0 → a NAT gateway", sub, rs)
			}
			usedNAT[nat] = true
			if s.NATMode == spec.NATPerAZ && natAZ[nat] != subnetAZ[sub] {
				t.Errorf("private subnet in %s routes to the NAT in %s", subnetAZ[sub], natAZ[nat])
			}
		}
		if len(privateTables) != 3 || len(usedNAT) != wantNAT {
			t.Errorf("private tier: %d tables, %d NATs used; want 3 tables and %d NATs", len(privateTables), len(usedNAT), wantNAT)
		}
		isolatedTables := map[string]bool{}
		for _, sub := range r.subnetIDs("isolated") {
			isolatedTables[assoc[sub]] = true
			if rs := routes(assoc[sub]); len(rs) != 0 {
				t.Errorf("isolated subnet %s has routes %v", sub, rs)
			}
		}

		ep := in(r.one(t, "s3-endpoint"))
		wantTables := []string{}
		for id := range privateTables {
			wantTables = append(wantTables, id)
		}
		for id := range isolatedTables {
			wantTables = append(wantTables, id)
		}
		if ep["serviceName"] != "com.amazonaws."+s.Region+".s3" || ep["vpcEndpointType"] != "Gateway" ||
			ep["vpcId"] != r.idOf("vpc") || !sameSet(strs(ep["routeTableIds"]), wantTables) {
			t.Errorf("S3 endpoint %v, want a gateway on tables %v", ep, wantTables)
		}
	})
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func urnOf(r *cellRun, suffix string) string {
	if res := r.rec.ByName(r.spec.ID + "-" + suffix); res != nil {
		return res.URN
	}
	return ""
}

func TestSecurityGroupRules(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		groups := map[string]string{} // id → short name
		for _, g := range []string{"alb", "service", "db", "cache"} {
			res := r.one(t, g+"-sg")
			groups[res.ID] = g
			i := in(res)
			if i["vpcId"] != r.idOf("vpc") || i["ingress"] != nil || i["egress"] != nil {
				t.Errorf("%s: vpc %v, inline rules %v %v", res.Name, i["vpcId"], i["ingress"], i["egress"])
			}
		}
		if n := len(r.rec.ByType("aws:ec2/securityGroup:SecurityGroup")); n != 4 {
			t.Errorf("%d security groups, want 4", n)
		}
		var got []string
		collect := func(dir, typ string) {
			for _, res := range r.rec.ByType(typ) {
				i := in(res)
				from, to := i["fromPort"], i["toPort"]
				if i["ipProtocol"] != "tcp" || from != to {
					t.Errorf("%s: protocol %v ports %v-%v", res.Name, i["ipProtocol"], from, to)
				}
				var peer []string
				if v := str(i["prefixListId"]); v != "" {
					peer = append(peer, "pl:"+v)
				}
				if v := str(i["referencedSecurityGroupId"]); v != "" {
					peer = append(peer, "sg:"+groups[v])
				}
				if v := str(i["cidrIpv4"]); v != "" {
					peer = append(peer, "cidr:"+v)
				}
				if v := str(i["cidrIpv6"]); v != "" {
					peer = append(peer, "cidr6:"+v)
				}
				if len(peer) != 1 {
					t.Errorf("%s: want exactly one peer, got %v", res.Name, peer)
				}
				if dir == "in" && strings.HasPrefix(strings.Join(peer, ""), "cidr") {
					t.Errorf("%s: ingress from an address range %v", res.Name, peer)
				}
				got = append(got, strings.Join([]string{groups[str(i["securityGroupId"])], dir, fmtPort(from), strings.Join(peer, "+")}, " "))
			}
		}
		collect("in", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
		collect("out", "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")
		port := fmtPort(float64(r.spec.ContainerPort))
		want := []string{
			"alb in 443 pl:" + testPrefixListID,
			"alb out " + port + " sg:service",
			"service in " + port + " sg:alb",
			"service out 443 cidr:0.0.0.0/0",
			"service out 5432 sg:db",
			"service out 6379 sg:cache",
			"db in 5432 sg:service",
			"cache in 6379 sg:service",
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("security group rules:\n got %q\nwant %q", got, want)
		}
	})
}

func fmtPort(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestAurora(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		clusterRes := r.one(t, "db")
		c := in(clusterRes)
		subnetGroup := r.one(t, "db-subnets")
		params := r.one(t, "db-params")
		major, _, _ := strings.Cut(s.AuroraEngineVersion, ".")
		expect := map[string]any{
			"engine": "aurora-postgresql", "engineVersion": s.AuroraEngineVersion,
			"manageMasterUserPassword": true, "storageEncrypted": true, "deletionProtection": true,
			"skipFinalSnapshot": false, "finalSnapshotIdentifier": "shop-" + s.ID + "-final",
			"backupRetentionPeriod": float64(s.AuroraBackupRetentionDays), "copyTagsToSnapshot": true,
			"iamDatabaseAuthenticationEnabled": true,
			"dbSubnetGroupName":                out(subnetGroup)["name"],
			"dbClusterParameterGroupName":      out(params)["name"],
		}
		for k, v := range expect {
			if c[k] != v {
				t.Errorf("cluster %s = %v, want %v", k, c[k], v)
			}
		}
		if _, ok := c["masterPassword"]; ok {
			t.Error("cluster has a masterPassword input; the password must be AWS-managed")
		}
		if !reflect.DeepEqual(strs(c["vpcSecurityGroupIds"]), []string{r.idOf("db-sg")}) {
			t.Errorf("cluster security groups %v, want only the DB group", c["vpcSecurityGroupIds"])
		}
		if !clusterRes.Protect {
			t.Error("the Aurora cluster is not protected")
		}
		if !sameSet(strs(in(subnetGroup)["subnetIds"]), r.subnetIDs("isolated")) {
			t.Errorf("DB subnet group %v, want the isolated subnets", in(subnetGroup)["subnetIds"])
		}
		p := in(params)
		if p["family"] != "aurora-postgresql"+major {
			t.Errorf("parameter group family %v", p["family"])
		}
		forceSSL := false
		for _, e := range p["parameters"].([]any) {
			if get(e, "name") == "rds.force_ssl" && get(e, "value") == "1" {
				forceSSL = true
			}
		}
		if !forceSSL {
			t.Errorf("parameters %v lack rds.force_ssl=1", p["parameters"])
		}
		instances := r.rec.ByType("aws:rds/clusterInstance:ClusterInstance")
		if len(instances) != s.AuroraInstances {
			t.Fatalf("%d instances, want %d", len(instances), s.AuroraInstances)
		}
		for _, inst := range instances {
			i := in(inst)
			if i["clusterIdentifier"] != clusterRes.ID || i["publiclyAccessible"] != false ||
				i["instanceClass"] != s.AuroraInstanceClass || i["engine"] != "aurora-postgresql" {
				t.Errorf("%s: %v", inst.Name, i)
			}
		}
	})
}

func TestElastiCache(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		rgRes := r.one(t, "cache")
		rg := in(rgRes)
		failover := s.CacheNodes >= 2
		group := r.one(t, "cache-users")
		expect := map[string]any{
			"engine": s.CacheEngine, "engineVersion": s.CacheEngineVersion, "nodeType": s.CacheNodeType,
			"numCacheClusters": float64(s.CacheNodes), "atRestEncryptionEnabled": true,
			"transitEncryptionEnabled": true, "automaticFailoverEnabled": failover, "multiAzEnabled": failover,
			"subnetGroupName": out(r.one(t, "cache-subnets"))["name"],
		}
		for k, v := range expect {
			if rg[k] != v {
				t.Errorf("replication group %s = %v, want %v", k, rg[k], v)
			}
		}
		if _, ok := rg["authToken"]; ok {
			t.Error("replication group has an auth token; auth must be RBAC with IAM")
		}
		if !reflect.DeepEqual(strs(rg["userGroupIds"]), []string{"shop-" + s.ID + "-users"}) ||
			!reflect.DeepEqual(strs(rg["securityGroupIds"]), []string{r.idOf("cache-sg")}) {
			t.Errorf("user groups %v, security groups %v", rg["userGroupIds"], rg["securityGroupIds"])
		}
		if !rgRes.Protect {
			t.Error("the replication group is not protected")
		}
		if !sameSet(strs(in(r.one(t, "cache-subnets"))["subnetIds"]), r.subnetIDs("isolated")) {
			t.Error("cache subnet group is not on the isolated subnets")
		}
		app := in(r.one(t, "cache-user"))
		if app["userId"] != "shop-"+s.ID+"-app" || app["userName"] != app["userId"] ||
			get(app, "authenticationMode", "type") != "iam" || app["engine"] != s.CacheEngine ||
			!strings.HasPrefix(str(app["accessString"]), "on ") {
			t.Errorf("app user %v, want IAM auth with userId == userName", app)
		}
		// A VALKEY user group only takes users that authenticate: the
		// switched-off default user has a generated password, a secret.
		def := in(r.one(t, "cache-default-user"))
		pw, _ := get(def, "authenticationMode", "passwords").([]any)
		if def["userName"] != "default" || str(def["accessString"]) != "off -@all" ||
			get(def, "authenticationMode", "type") != "password" || len(pw) != 1 {
			t.Errorf("default user %v, want a switched-off user with one password", def)
		}
		if sv, ok := pw[0].(secretValue); !ok || sv.V != DefaultCacheUserPassword(testSecret, s.ID) || len(str(sv.V)) != 64 {
			t.Errorf("default user password %v: want the derived 64-character password as a Pulumi secret", pw[0])
		}
		if DefaultCacheUserPassword(testSecret, "cell-a") == DefaultCacheUserPassword(testSecret, "cell-g") {
			t.Error("two cells derive the same default-user password")
		}
		for k, v := range r.outputs {
			if strings.Contains(fmt.Sprint(v.Value), DefaultCacheUserPassword(testSecret, s.ID)) {
				t.Errorf("output %s carries the default user's password", k)
			}
		}
		g := in(group)
		if g["userGroupId"] != "shop-"+s.ID+"-users" || !sameSet(strs(g["userIds"]), []string{"shop-" + s.ID + "-app", "shop-" + s.ID + "-default"}) {
			t.Errorf("user group %v", g)
		}
	})
}

func TestQueues(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		qRes, dRes := r.one(t, "queue"), r.one(t, "dlq")
		q, d := in(qRes), in(dRes)
		qArn, dArn := str(out(qRes)["arn"]), str(out(dRes)["arn"])
		qURL, dURL := str(out(qRes)["url"]), str(out(dRes)["url"])
		for name, m := range map[string]map[string]any{"queue": q, "dlq": d} {
			if m["sqsManagedSseEnabled"] != true {
				t.Errorf("%s: SSE not enabled", name)
			}
		}
		if !qRes.Protect || !dRes.Protect {
			t.Error("queues are not protected")
		}
		if q["visibilityTimeoutSeconds"] != float64(s.QueueVisibilityTimeoutSeconds) {
			t.Errorf("visibility timeout %v", q["visibilityTimeoutSeconds"])
		}
		var redrive struct {
			DeadLetterTargetArn string  `json:"deadLetterTargetArn"`
			MaxReceiveCount     float64 `json:"maxReceiveCount"`
		}
		mustJSON(t, str(q["redrivePolicy"]), &redrive)
		if redrive.DeadLetterTargetArn != dArn || int(redrive.MaxReceiveCount) != s.QueueMaxReceiveCount {
			t.Errorf("redrive %+v, want %s after %d receives", redrive, dArn, s.QueueMaxReceiveCount)
		}
		allow := in(r.one(t, "dlq-redrive-allow"))
		var ap struct {
			RedrivePermission string   `json:"redrivePermission"`
			SourceQueueArns   []string `json:"sourceQueueArns"`
		}
		mustJSON(t, str(allow["redriveAllowPolicy"]), &ap)
		if allow["queueUrl"] != dURL || ap.RedrivePermission != "byQueue" || !reflect.DeepEqual(ap.SourceQueueArns, []string{qArn}) {
			t.Errorf("redrive allow policy on %v: %+v", allow["queueUrl"], ap)
		}
		policies := map[string]PolicyDocument{}
		for _, res := range r.rec.ByType("aws:sqs/queuePolicy:QueuePolicy") {
			i := in(res)
			policies[str(i["queueUrl"])] = policyOf(t, i["policy"])
		}
		for url, arn := range map[string]string{qURL: qArn, dURL: dArn} {
			doc, ok := policies[url]
			if !ok {
				t.Errorf("no policy on %s", url)
				continue
			}
			want := PolicyStatement{
				Sid: "DenyInsecureTransport", Effect: "Deny", Principal: iampolicy.Everyone(), Action: []string{"sqs:*"},
				Resource:  []string{arn},
				Condition: iampolicy.Conditions{"Bool": {"aws:SecureTransport": {"false"}}},
			}
			if len(doc.Statement) != 1 || !reflect.DeepEqual(doc.Statement[0], want) {
				t.Errorf("policy on %s: %+v, want %+v", url, doc.Statement, want)
			}
		}
	})
}

func TestIAM(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		prefix := "cells/" + s.ID + "/"
		bucketArn := "arn:aws:s3:::" + testBucket
		queueArn := str(out(r.one(t, "queue"))["arn"])
		dlqArn := str(out(r.one(t, "dlq"))["arn"])
		rgArn := str(out(r.one(t, "cache"))["arn"])
		userArn := str(out(r.one(t, "cache-user"))["arn"])

		for _, role := range []string{"execution-role", "task-role"} {
			doc := policyOf(t, in(r.one(t, role))["assumeRolePolicy"])
			st := doc.Statement
			if len(st) != 1 || st[0].Effect != "Allow" || !reflect.DeepEqual(st[0].Action, iampolicy.Values{"sts:AssumeRole"}) ||
				!reflect.DeepEqual(st[0].Principal, iampolicy.ServicePrincipals("ecs-tasks.amazonaws.com")) {
				t.Errorf("%s trust policy %+v", role, st)
			}
			if role == "task-role" && !reflect.DeepEqual(st[0].Condition, iampolicy.Conditions{"StringEquals": {"aws:SourceAccount": {testAccount}}}) {
				t.Errorf("task role trust condition %v", st[0].Condition)
			}
		}

		taskPolicy := in(r.one(t, "task-policy"))
		if taskPolicy["role"] != out(r.one(t, "task-role"))["name"] {
			t.Errorf("task policy on role %v", taskPolicy["role"])
		}
		doc := policyOf(t, taskPolicy["policy"])
		got := map[string]PolicyStatement{}
		for _, st := range doc.Statement {
			if st.Effect != "Allow" {
				t.Errorf("statement %s: effect %s", st.Sid, st.Effect)
			}
			for _, res := range st.Resource {
				if strings.Contains(res, "*") && res != bucketArn+"/"+prefix+"*" {
					t.Errorf("statement %s: wildcard resource %s", st.Sid, res)
				}
				if res == dlqArn {
					t.Errorf("statement %s grants the DLQ", st.Sid)
				}
			}
			got[st.Sid] = st
		}
		want := map[string]PolicyStatement{
			"CellObjects": {Sid: "CellObjects", Effect: "Allow", Action: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
				Resource: []string{bucketArn + "/" + prefix + "*"}},
			"ListCellPrefix": {Sid: "ListCellPrefix", Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{bucketArn},
				Condition: iampolicy.Conditions{"StringLike": {"s3:prefix": {prefix, prefix + "*"}}}},
			"CellQueue": {Sid: "CellQueue", Effect: "Allow", Action: []string{"sqs:SendMessage", "sqs:ReceiveMessage",
				"sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}, Resource: []string{queueArn}},
			"CellCacheIAMAuth": {Sid: "CellCacheIAMAuth", Effect: "Allow", Action: []string{"elasticache:Connect"},
				Resource: []string{rgArn, userArn}},
			// rds-db:connect on this cluster's resource id and the app user only.
			"CellDatabaseIAMAuth": {Sid: "CellDatabaseIAMAuth", Effect: "Allow", Action: []string{"rds-db:connect"},
				Resource: []string{"arn:aws:rds-db:" + s.Region + ":" + testAccount + ":dbuser:" +
					str(out(r.one(t, "db"))["clusterResourceId"]) + "/" + DatabaseAppUser}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("task role policy\n got %+v\nwant %+v", got, want)
		}
		// Nothing names another cell.
		for _, other := range testCells() {
			if other.ID != s.ID && strings.Contains(str(taskPolicy["policy"]), other.ID) {
				t.Errorf("task policy mentions %s", other.ID)
			}
		}

		// The execution role writes only its own cell's log streams (the
		// AWS managed policy would let it write every log group).
		exec := in(r.one(t, "execution-policy"))
		if exec["role"] != out(r.one(t, "execution-role"))["name"] {
			t.Errorf("execution role policy on %v", exec["role"])
		}
		execDoc := policyOf(t, exec["policy"])
		wantLogs := "arn:aws:logs:" + s.Region + ":" + testAccount + ":log-group:" + s.Names().LogGroup() + ":log-stream:*"
		if len(execDoc.Statement) != 2 || len(execDoc.Statement[1].Resource) != 1 || execDoc.Statement[1].Resource[0] != wantLogs {
			t.Errorf("execution role policy %+v, want its logs at %s", execDoc, wantLogs)
		}
		// The master secret stays out of the task: no role may read it.
		for _, res := range r.rec.ByType("aws:iam/rolePolicy:RolePolicy") {
			if strings.Contains(str(in(res)["policy"]), "secretsmanager") {
				t.Errorf("%s grants Secrets Manager access: %s", res.Name, in(res)["policy"])
			}
		}
	})
}

func TestLoadBalancerOnlyServesItsOwnCell(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		alb := in(r.one(t, "alb"))
		if alb["loadBalancerType"] != "application" || alb["internal"] != false || alb["dropInvalidHeaderFields"] != true ||
			!sameSet(strs(alb["subnets"]), r.subnetIDs("public")) ||
			!reflect.DeepEqual(strs(alb["securityGroups"]), []string{r.idOf("alb-sg")}) {
			t.Errorf("ALB %v", alb)
		}
		tg := in(r.one(t, "tg"))
		if tg["targetType"] != "ip" || tg["protocol"] != "HTTP" || tg["port"] != float64(s.ContainerPort) ||
			tg["vpcId"] != r.idOf("vpc") || get(tg, "healthCheck", "path") != s.HealthCheckPath {
			t.Errorf("target group %v", tg)
		}
		l := in(r.one(t, "https"))
		if l["port"] != float64(443) || l["protocol"] != "HTTPS" || !strings.Contains(str(l["sslPolicy"]), "TLS13") ||
			l["certificateArn"] != r.listenerCertificate(t) || l["loadBalancerArn"] != out(r.one(t, "alb"))["arn"] {
			t.Errorf("listener %v", l)
		}
		acts, _ := l["defaultActions"].([]any)
		if len(acts) != 1 || get(acts, 0, "type") != "fixed-response" || get(acts, 0, "fixedResponse", "statusCode") != "421" {
			t.Errorf("listener default actions %v, want one fixed 421", acts)
		}
		rule := in(r.one(t, "forward-own-cell"))
		if rule["listenerArn"] != out(r.one(t, "https"))["arn"] {
			t.Errorf("rule on listener %v", rule["listenerArn"])
		}
		ra, _ := rule["actions"].([]any)
		if len(ra) != 1 || get(ra, 0, "type") != "forward" || get(ra, 0, "targetGroupArn") != out(r.one(t, "tg"))["arn"] {
			t.Errorf("rule actions %v", ra)
		}
		conds, _ := rule["conditions"].([]any)
		headers := map[string]any{}
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if len(m) != 1 || get(m, "httpHeader") == nil {
				t.Errorf("condition %v is not a single http-header condition", c)
				continue
			}
			headers[str(get(m, "httpHeader", "httpHeaderName"))] = get(m, "httpHeader", "values")
		}
		wantHeaders := map[string]any{
			CellIDHeader:       []any{s.ID},
			OriginVerifyHeader: []any{secretValue{testSecret}},
		}
		if len(conds) != 2 || !reflect.DeepEqual(headers, wantHeaders) {
			t.Errorf("rule conditions %v, want %v (the origin secret as a secret)", headers, wantHeaders)
		}
		for _, res := range r.rec.Resources() {
			if containsString(in(res), testSecret) {
				t.Errorf("%s holds the origin secret in plaintext", res.Name)
			}
		}
		for k, v := range r.outputs {
			if strings.Contains(str(v.Value), testSecret) {
				t.Errorf("output %s holds the origin secret", k)
			}
		}
	})
}

func TestOriginSecretStaysSecretWhenPassedPlain(t *testing.T) {
	s := testCells()[0]
	r, err := runCell(s, newTestModel(s.Region), func(*pulumi.Context) pulumi.StringInput { return pulumi.String(testSecret) })
	if err != nil {
		t.Fatal(err)
	}
	rule := in(r.one(t, "forward-own-cell"))
	if !containsSecret(rule["conditions"], testSecret) || containsString(rule, testSecret) {
		t.Errorf("conditions %v: the origin secret must be marked secret", rule["conditions"])
	}
}

func containsSecret(v any, want string) bool {
	switch x := v.(type) {
	case secretValue:
		return x.V == want
	case []any:
		for _, e := range x {
			if containsSecret(e, want) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if containsSecret(e, want) {
				return true
			}
		}
	}
	return false
}

func TestServiceDeploysSafely(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		svcRes := r.one(t, "service")
		svc := in(svcRes)
		if get(svc, "deploymentCircuitBreaker", "enable") != true || get(svc, "deploymentCircuitBreaker", "rollback") != true {
			t.Errorf("circuit breaker %v, want enabled with rollback", svc["deploymentCircuitBreaker"])
		}
		expect := map[string]any{
			"launchType": "FARGATE", "desiredCount": float64(s.DesiredCount), "propagateTags": "SERVICE",
			"enableEcsManagedTags": true, "cluster": out(r.one(t, "ecs"))["arn"],
			"taskDefinition": out(r.one(t, "task"))["arn"],
		}
		for k, v := range expect {
			if svc[k] != v {
				t.Errorf("service %s = %v, want %v", k, svc[k], v)
			}
		}
		if g, _ := svc["healthCheckGracePeriodSeconds"].(float64); g <= 0 {
			t.Errorf("health check grace period %v", svc["healthCheckGracePeriodSeconds"])
		}
		nc := svc["networkConfiguration"]
		if get(nc, "assignPublicIp") != false || !sameSet(strs(get(nc, "subnets")), r.subnetIDs("private")) ||
			!reflect.DeepEqual(strs(get(nc, "securityGroups")), []string{r.idOf("service-sg")}) {
			t.Errorf("network configuration %v", nc)
		}
		lbs, _ := svc["loadBalancers"].([]any)
		if len(lbs) != 1 || get(lbs, 0, "targetGroupArn") != out(r.one(t, "tg"))["arn"] ||
			get(lbs, 0, "containerName") != ContainerName || get(lbs, 0, "containerPort") != float64(s.ContainerPort) {
			t.Errorf("service load balancers %v", lbs)
		}
		if !contains(svcRes.DependsOn, urnOf(r, "forward-own-cell")) {
			t.Error("service does not wait for the listener rule that attaches its target group")
		}
		if len(svcRes.IgnoreChanges) != 0 {
			t.Errorf("service ignores %v", svcRes.IgnoreChanges)
		}
		ecsCluster := in(r.one(t, "ecs"))
		if get(ecsCluster, "settings", 0, "name") != "containerInsights" || get(ecsCluster, "settings", 0, "value") != "enabled" {
			t.Errorf("ECS cluster settings %v", ecsCluster["settings"])
		}
		lg := in(r.one(t, "logs"))
		if lg["name"] != "/cellctl/shop/"+s.ID+"/service" || lg["retentionInDays"] != float64(s.LogRetentionDays) {
			t.Errorf("log group %v", lg)
		}
	})
}

func TestTaskDefinition(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		td := in(r.one(t, "task"))
		expect := map[string]any{
			"networkMode": "awsvpc", "cpu": itoa(s.TaskCPU), "memory": itoa(s.TaskMemory),
			"executionRoleArn": out(r.one(t, "execution-role"))["arn"], "taskRoleArn": out(r.one(t, "task-role"))["arn"],
		}
		for k, v := range expect {
			if td[k] != v {
				t.Errorf("task definition %s = %v, want %v", k, td[k], v)
			}
		}
		if !reflect.DeepEqual(strs(td["requiresCompatibilities"]), []string{"FARGATE"}) {
			t.Errorf("requiresCompatibilities %v", td["requiresCompatibilities"])
		}
		var defs []map[string]any
		mustJSON(t, str(td["containerDefinitions"]), &defs)
		if len(defs) != 1 {
			t.Fatalf("%d containers, want 1", len(defs))
		}
		c := defs[0]
		if c["name"] != "app" || c["image"] != s.Image || c["essential"] != true || c["readonlyRootFilesystem"] != true {
			t.Errorf("container %v", c)
		}
		if get(c, "portMappings", 0, "containerPort") != float64(s.ContainerPort) {
			t.Errorf("port mappings %v", c["portMappings"])
		}
		env := map[string]string{}
		for _, e := range c["environment"].([]any) {
			env[str(get(e, "name"))] = str(get(e, "value"))
		}
		db := out(r.one(t, "db"))
		wantEnv := map[string]string{
			"CELL_ID": s.ID, "AWS_REGION": s.Region,
			"DB_ENDPOINT": str(db["endpoint"]), "DB_READER_ENDPOINT": str(db["readerEndpoint"]),
			"CACHE_ENDPOINT": str(out(r.one(t, "cache"))["primaryEndpointAddress"]), "CACHE_USER": "shop-" + s.ID + "-app",
			"QUEUE_URL": str(out(r.one(t, "queue"))["url"]), "BUCKET": testBucket, "BUCKET_PREFIX": "cells/" + s.ID + "/",
		}
		for k, v := range wantEnv {
			if env[k] != v || v == "" {
				t.Errorf("env %s = %q, want %q", k, env[k], v)
			}
		}
		for k := range env {
			if strings.Contains(k, "PASSWORD") || strings.Contains(k, "SECRET") {
				t.Errorf("env %s looks like a credential; credentials come from secrets", k)
			}
		}
		// The app logs in to the database as its own IAM-authenticated user:
		// no master secret in the task (it would also go stale on rotation).
		if secrets, _ := c["secrets"].([]any); len(secrets) != 0 {
			t.Errorf("secrets %v, want none", secrets)
		}
		if env["DB_USER"] != DatabaseAppUser || env["DB_AUTH"] != "iam" {
			t.Errorf("DB_USER=%q DB_AUTH=%q, want %s with iam", env["DB_USER"], env["DB_AUTH"], DatabaseAppUser)
		}
		lc := c["logConfiguration"]
		if get(lc, "logDriver") != "awslogs" || get(lc, "options", "awslogs-group") != "/cellctl/shop/"+s.ID+"/service" ||
			get(lc, "options", "awslogs-region") != s.Region {
			t.Errorf("log configuration %v", lc)
		}
	})
}

func TestAlarms(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		lbSuffix := out(r.one(t, "alb"))["arnSuffix"]
		tgSuffix := out(r.one(t, "tg"))["arnSuffix"]
		names := AlarmNames(s.Names())
		if names["5xx"] != "cellctl-shop-"+s.ID+"-5xx-rate" {
			t.Errorf("alarm names %v", names)
		}
		common := func(a map[string]any, what string) {
			if a["comparisonOperator"] != "GreaterThanThreshold" || a["evaluationPeriods"] != float64(s.AlarmEvalPeriods) ||
				a["treatMissingData"] != "notBreaching" {
				t.Errorf("%s alarm %v", what, a)
			}
		}
		rate := in(r.one(t, "5xx-rate"))
		common(rate, "5xx")
		if rate["name"] != names["5xx"] || rate["threshold"] != s.Alarm5xxRatePercent || rate["metricName"] != nil {
			t.Errorf("5xx alarm %v", rate)
		}
		metrics := map[string]string{} // id → metric name
		var expr string
		for _, q := range rate["metricQueries"].([]any) {
			if e := str(get(q, "expression")); e != "" {
				if get(q, "returnData") != true {
					t.Error("the expression does not return data")
				}
				expr = e
				continue
			}
			if get(q, "returnData") == true {
				t.Errorf("metric %v returns data", q)
			}
			if get(q, "metric", "namespace") != "AWS/ApplicationELB" || get(q, "metric", "stat") != "Sum" ||
				get(q, "metric", "dimensions", "LoadBalancer") != lbSuffix {
				t.Errorf("metric query %v", q)
			}
			metrics[str(get(q, "id"))] = str(get(q, "metric", "metricName"))
		}
		if !sameSet(values(metrics), []string{"HTTPCode_Target_5XX_Count", "HTTPCode_ELB_5XX_Count", "RequestCount"}) {
			t.Errorf("5xx alarm metrics %v", metrics)
		}
		for id, m := range metrics {
			if !strings.Contains(expr, id) {
				t.Errorf("expression %q ignores %s", expr, m)
			}
		}
		if !strings.Contains(expr, "100") || !strings.Contains(expr, "/") {
			t.Errorf("expression %q is not a percentage", expr)
		}
		p99 := in(r.one(t, "p99-latency"))
		common(p99, "p99")
		if p99["name"] != names["p99"] || p99["metricName"] != "TargetResponseTime" || p99["extendedStatistic"] != "p99" ||
			p99["threshold"] != float64(s.AlarmP99LatencyMs)/1000 || get(p99, "dimensions", "LoadBalancer") != lbSuffix {
			t.Errorf("p99 alarm %v", p99)
		}
		un := in(r.one(t, "unhealthy-tasks"))
		common(un, "unhealthy")
		if un["name"] != names["unhealthy"] || un["metricName"] != "UnHealthyHostCount" || un["threshold"] != float64(0) ||
			!reflect.DeepEqual(un["dimensions"], map[string]any{"TargetGroup": tgSuffix, "LoadBalancer": lbSuffix}) {
			t.Errorf("unhealthy alarm %v", un)
		}
	})
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestOnlyStatefulResourcesAreProtected(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		var got []string
		for _, res := range r.rec.Resources() {
			if res.Protect {
				got = append(got, strings.TrimPrefix(res.Name, r.spec.ID+"-"))
			}
		}
		if !sameSet(got, []string{"db", "cache", "queue", "dlq"}) {
			t.Errorf("protected: %v", got)
		}
	})
}

func TestOutputs(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		s := r.spec
		o := func(k string) any {
			v, ok := r.outputs[k]
			if !ok || !v.Known || v.Secret {
				t.Errorf("output %s: %+v", k, v)
			}
			return v.Value
		}
		db := out(r.one(t, "db"))
		expect := map[string]any{
			"cellId": s.ID, "index": float64(s.Index), "cidr": s.CIDR(), "region": s.Region, "image": s.Image,
			"vpcId":                r.idOf("vpc"),
			"albDnsName":           out(r.one(t, "alb"))["dnsName"],
			"albArnSuffix":         out(r.one(t, "alb"))["arnSuffix"],
			"targetGroupArnSuffix": out(r.one(t, "tg"))["arnSuffix"],
			"queueUrl":             out(r.one(t, "queue"))["url"],
			"queueArn":             out(r.one(t, "queue"))["arn"],
			"dlqUrl":               out(r.one(t, "dlq"))["url"],
			"dbEndpoint":           db["endpoint"],
			"dbReaderEndpoint":     db["readerEndpoint"],
			"dbSecretArn":          get(db, "masterUserSecrets", 0, "secretArn"),
			"cacheEndpoint":        out(r.one(t, "cache"))["primaryEndpointAddress"],
			"storagePrefix":        "s3://" + testBucket + "/cells/" + s.ID + "/",
			"ecsCluster":           out(r.one(t, "ecs"))["name"],
			"ecsService":           out(r.one(t, "service"))["name"],
			"logGroup":             "/cellctl/shop/" + s.ID + "/service",
			"taskRoleArn":          out(r.one(t, "task-role"))["arn"],
		}
		for k, want := range expect {
			got := o(k)
			got = normalize(got)
			if !reflect.DeepEqual(got, want) || want == nil || want == "" {
				t.Errorf("output %s = %v, want %v", k, got, want)
			}
		}
		names := map[string]any{}
		for k, v := range AlarmNames(s.Names()) {
			names[k] = v
		}
		if got := normalize(o("alarmNames")); !reflect.DeepEqual(got, names) {
			t.Errorf("alarmNames = %v, want %v", got, names)
		}
	})
}

// normalize makes awaited output values comparable with recorded inputs.
func normalize(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case pulumi.ID:
		return string(n)
	case map[string]string:
		m := map[string]any{}
		for k, e := range n {
			m[k] = e
		}
		return m
	}
	return v
}

func TestNewCellRejectsBadArgs(t *testing.T) {
	good := testCells()[0]
	mutate := func(f func(*spec.Cell)) *CellArgs {
		s := good
		f(&s)
		return &CellArgs{Spec: s, OriginVerifySecret: pulumi.String("x")}
	}
	cases := []struct {
		name string
		cell string
		args *CellArgs
		want string
	}{
		{"nil args", "cell-a", nil, "nil"},
		{"empty id", "", mutate(func(s *spec.Cell) { s.ID = "" }), "id is empty"},
		{"index below range", "cell-a", mutate(func(s *spec.Cell) { s.Index = -1 }), "index -1"},
		{"index above range", "cell-a", mutate(func(s *spec.Cell) { s.Index = 256 }), "index 256"},
		{"uppercase id", "Cell-A", mutate(func(s *spec.Cell) { s.ID = "Cell-A" }), "lowercase"},
		{"not a cell id", "sg-a", mutate(func(s *spec.Cell) { s.ID = "sg-a" }), `invalid cell id "sg-a"`},
		{"double hyphen", "cell-a--b", mutate(func(s *spec.Cell) { s.ID = "cell-a--b" }), "single inner hyphens"},
		{"name is not the id", "other", mutate(func(*spec.Cell) {}), "must equal the cell id"},
		{"bad NAT mode", "cell-a", mutate(func(s *spec.Cell) { s.NATMode = "none" }), "natMode"},
		{"bad engine version", "cell-a", mutate(func(s *spec.Cell) { s.AuroraEngineVersion = "latest" }), "auroraEngineVersion"},
		{"no secret", "cell-a", &CellArgs{Spec: good}, "OriginVerifySecret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cell *Cell
			var newErr error
			rec, _, err := offline.Run(offline.Options{Project: "cells", Stack: "cell-a"}, newTestModel("us-east-1"),
				func(ctx *pulumi.Context) error {
					cell, newErr = NewCell(ctx, tc.cell, tc.args)
					return newErr
				})
			if newErr == nil || err == nil || cell != nil {
				t.Fatalf("NewCell returned %v, %v; want an error", cell, newErr)
			}
			if !strings.Contains(newErr.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", newErr, tc.want)
			}
			if n := len(rec.Resources()); n != 0 {
				t.Errorf("%d resources registered before validation failed", n)
			}
		})
	}
}

func TestNewCellNeedsThreeAvailabilityZones(t *testing.T) {
	s := testCells()[0]
	m := newTestModel(s.Region)
	m.AZs = []string{"us-east-1a", "us-east-1b"}
	_, err := runCell(s, m, nil)
	if err == nil || !strings.Contains(err.Error(), "needs 3") {
		t.Errorf("err = %v, want a clear error about availability zones", err)
	}
}

func TestNewCellRefusesZonesOfAnotherRegion(t *testing.T) {
	s := testCells()[0]
	_, err := runCell(s, newTestModel("eu-west-1"), nil)
	if err == nil || !strings.Contains(err.Error(), "not in region us-east-1") {
		t.Errorf("err = %v, want a region mismatch error", err)
	}
}

func TestNewCellRefusesAWildcardOriginSecret(t *testing.T) {
	s := testCells()[0]
	_, err := runCell(s, newTestModel(s.Region), func(*pulumi.Context) pulumi.StringInput {
		return pulumi.ToSecret(pulumi.String("abc*")).(pulumi.StringOutput)
	})
	if err == nil || !strings.Contains(err.Error(), "wildcards") {
		t.Errorf("err = %v, want the wildcard refusal", err)
	}
	if err != nil && strings.Contains(err.Error(), "abc*") {
		t.Error("the error reveals the secret")
	}
}
