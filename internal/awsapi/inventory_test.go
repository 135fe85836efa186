package awsapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// queryReply is one scripted answer to an EC2 query / AWS query request.
type queryReply struct {
	service, action string
	check           func(url.Values) // optional check of the form
	status          int
	body            string
}

// queryReplay serves the script in order to the real SDK clients.
type queryReplay struct {
	t       *testing.T
	mu      sync.Mutex
	replies []queryReply
	served  int
}

func (q *queryReplay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(b))
	if err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		q.t.Errorf("request %d is not form-encoded: %q (%v)", q.served+1, r.Header.Get("Content-Type"), err)
	}
	if q.served >= len(q.replies) {
		q.t.Errorf("unexpected request %d: %s", q.served+1, form.Get("Action"))
		w.WriteHeader(500)
		return
	}
	rep := q.replies[q.served]
	q.served++
	if got := form.Get("Action"); got != rep.action {
		q.t.Errorf("request %d: Action %q, want %q", q.served, got, rep.action)
	}
	if !strings.Contains(r.Header.Get("Authorization"), "/"+rep.service+"/aws4_request") {
		q.t.Errorf("request %d is not signed for %s: %q", q.served, rep.service, r.Header.Get("Authorization"))
	}
	if rep.check != nil {
		rep.check(form)
	}
	w.Header().Set("Content-Type", "text/xml")
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	io.WriteString(w, rep.body)
}

func startQuery(t *testing.T, replies ...queryReply) (*Inventory, *queryReplay) {
	t.Helper()
	q := &queryReplay{t: t, replies: replies}
	srv := httptest.NewServer(q)
	t.Cleanup(srv.Close)
	tg := Sim(srv.URL, "us-east-1")
	tg.MaxBackoff = time.Millisecond
	inv, err := NewInventory(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.served != len(q.replies) {
			t.Errorf("served %d of %d scripted replies", q.served, len(q.replies))
		}
	})
	return inv, q
}

func doc(t *testing.T, name string) string { return string(documented(t, name)) }

// withToken adds a continuation token to a documented page, as the API
// returns it on a page that is not the last.
func withToken(body, closing, token string) string {
	return strings.Replace(body, closing, token+closing, 1)
}

const ec2Throttle = `<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>d0d4b1c8-0000-4000-8000-throttled0001</RequestID></Response>`

const queryThrottle = `<ErrorResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>7a62c49f-347e-4fc4-9331-6e8eEXAMPLE</RequestId></ErrorResponse>`

func TestElasticIPsFromTheDocumentedResponseAfterThrottling(t *testing.T) {
	inv, _ := startQuery(t,
		queryReply{service: "ec2", action: "DescribeAddresses", status: 503, body: ec2Throttle},
		queryReply{service: "ec2", action: "DescribeAddresses", body: doc(t, "ec2/describe-addresses.xml"), check: func(f url.Values) {
			if f.Get("Filter.1.Name") != "domain" || f.Get("Filter.1.Value.1") != "vpc" {
				t.Errorf("DescribeAddresses must filter domain=vpc: %v", f)
			}
		}},
	)
	n, err := inv.ElasticIPs(ctx)
	if err != nil || n != 1 {
		t.Fatalf("ElasticIPs = %d, %v; want the documented address after the retry", n, err)
	}
}

func TestNATGatewaysPerZoneFollowPagesAndSubnets(t *testing.T) {
	nat := doc(t, "ec2/describe-nat-gateways.xml")
	inv, _ := startQuery(t,
		queryReply{service: "ec2", action: "DescribeNatGateways", body: withToken(nat, "</DescribeNatGatewaysResponse>", "<nextToken>page-2</nextToken>"),
			check: func(f url.Values) {
				if f.Get("Filter.1.Name") != "state" || f.Get("Filter.1.Value.1") != "pending" || f.Get("Filter.1.Value.2") != "available" {
					t.Errorf("DescribeNatGateways must count pending and available gateways only: %v", f)
				}
			}},
		queryReply{service: "ec2", action: "DescribeNatGateways", body: nat, check: func(f url.Values) {
			if f.Get("NextToken") != "page-2" {
				t.Errorf("second page asked with NextToken %q", f.Get("NextToken"))
			}
		}},
		// The gateway's subnet, in the shape of DescribeSubnets' subnetSet.
		queryReply{service: "ec2", action: "DescribeSubnets", body: `<DescribeSubnetsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><subnetSet><item><subnetId>subnet-7b16de0c</subnetId><availabilityZone>us-east-1a</availabilityZone><vpcId>vpc-1a2b3c4d</vpcId></item></subnetSet></DescribeSubnetsResponse>`},
	)
	byAZ, err := inv.NATGatewaysByAZ(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(byAZ) != 1 || byAZ["us-east-1a"] != 2 {
		t.Errorf("NAT gateways per zone = %v, want us-east-1a: 2 (one per page)", byAZ)
	}
}

func TestNATGatewayInAnUnknownSubnetStillCounts(t *testing.T) {
	inv, _ := startQuery(t,
		queryReply{service: "ec2", action: "DescribeNatGateways", body: doc(t, "ec2/describe-nat-gateways.xml")},
		queryReply{service: "ec2", action: "DescribeSubnets", body: `<DescribeSubnetsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><subnetSet/></DescribeSubnetsResponse>`},
	)
	byAZ, err := inv.NATGatewaysByAZ(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if byAZ["unknown-az(subnet-7b16de0c)"] != 1 {
		t.Errorf("a gateway whose zone is unknown must still count: %v", byAZ)
	}
}

// TestSecurityGroupCountStandsWhenARuleCannotBeWeighed: a rule naming a
// prefix list DescribeManagedPrefixLists does not return leaves the rules
// per group unknown, never the number of groups, which no rule changes.
func TestSecurityGroupCountStandsWhenARuleCannotBeWeighed(t *testing.T) {
	inv, _ := startQuery(t,
		queryReply{service: "ec2", action: "DescribeSecurityGroups", body: `<DescribeSecurityGroupsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><securityGroupInfo>` +
			`<item><groupId>sg-1</groupId><vpcId>vpc-1</vpcId><ipPermissions><item><ipProtocol>tcp</ipProtocol><fromPort>443</fromPort><toPort>443</toPort><prefixListIds><item><prefixListId>pl-3b927c52</prefixListId></item></prefixListIds></item></ipPermissions><ipPermissionsEgress/></item>` +
			`<item><groupId>sg-2</groupId><vpcId>vpc-1</vpcId><ipPermissions/><ipPermissionsEgress/></item>` +
			`</securityGroupInfo></DescribeSecurityGroupsResponse>`},
		queryReply{service: "ec2", action: "DescribeManagedPrefixLists", body: `<DescribeManagedPrefixListsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><prefixListSet/></DescribeManagedPrefixListsResponse>`},
	)
	sg, err := inv.SecurityGroups(ctx)
	if err != nil {
		t.Fatalf("SecurityGroups: %v", err)
	}
	if sg.Count != 2 {
		t.Errorf("Count = %d, want 2: the groups were read", sg.Count)
	}
	if sg.RulesErr == nil || !strings.Contains(sg.RulesErr.Error(), "pl-3b927c52") {
		t.Errorf("RulesErr = %v, want the prefix list that could not be weighed", sg.RulesErr)
	}
}

func TestDBClustersFollowMarkerAfterThrottling(t *testing.T) {
	page := doc(t, "rds/describe-db-clusters.xml")
	inv, _ := startQuery(t,
		queryReply{service: "rds", action: "DescribeDBClusters", status: 400, body: queryThrottle},
		queryReply{service: "rds", action: "DescribeDBClusters", body: withToken(page, "</DescribeDBClustersResult>", "<Marker>sample-cluster3</Marker>"),
			check: func(f url.Values) {
				if f.Get("MaxRecords") != "100" {
					t.Errorf("MaxRecords = %q, want the API's largest page (100)", f.Get("MaxRecords"))
				}
			}},
		queryReply{service: "rds", action: "DescribeDBClusters", body: page, check: func(f url.Values) {
			if f.Get("Marker") != "sample-cluster3" {
				t.Errorf("second page asked with Marker %q", f.Get("Marker"))
			}
		}},
	)
	n, err := inv.DBClusters(ctx)
	if err != nil || n != 4 {
		t.Fatalf("DBClusters = %d, %v; want 2 per documented page × 2 pages", n, err)
	}
}

func TestCacheNodesSumNumCacheNodes(t *testing.T) {
	inv, _ := startQuery(t, queryReply{service: "elasticache", action: "DescribeCacheClusters", body: doc(t, "elasticache/describe-cache-clusters.xml")})
	n, err := inv.CacheNodes(ctx)
	if err != nil || n != 6 {
		t.Fatalf("CacheNodes = %d, %v; want the documented cluster's 6 nodes", n, err)
	}
}

func TestAnUnreadableCallIsAnErrorNeverZero(t *testing.T) {
	denied := `<ErrorResponse xmlns="http://elasticache.amazonaws.com/doc/2015-02-02/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User is not authorized to perform: elasticache:DescribeCacheClusters</Message></Error><RequestId>x</RequestId></ErrorResponse>`
	inv, _ := startQuery(t, queryReply{service: "elasticache", action: "DescribeCacheClusters", status: 403, body: denied})
	if n, err := inv.CacheNodes(ctx); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("CacheNodes = %d, %v; want the AccessDenied error", n, err)
	}
}
