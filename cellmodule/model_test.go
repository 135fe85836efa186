package cellmodule

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// testModel is a minimal stand-in for internal/awsmodel (not available when
// these tests were written): id = name + "-id", outputs = inputs plus the
// computed attributes the cell reads. Switch to awsmodel.NewMock once it
// lands; the assertions do not depend on this model's details beyond the
// "<name>-id" ids.
type testModel struct {
	Partition, Account, Region string
	// AZs overrides the zones getAvailabilityZones returns.
	AZs []string
}

func newTestModel(region string) *testModel {
	return &testModel{Partition: "aws", Account: "123456789012", Region: region}
}

const testPrefixListID = "pl-3b927c52"

func (m *testModel) arn(service, resourcePart string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", m.Partition, service, m.Region, m.Account, resourcePart)
}

func (m *testModel) NewResource(typ, name string, inputs resource.PropertyMap, _ string) (string, resource.PropertyMap, error) {
	id := name + "-id"
	out := inputs.Copy()
	set := func(k string, v any) { out[resource.PropertyKey(k)] = resource.NewPropertyValue(v) }
	str := func(k string) string {
		if v, ok := inputs[resource.PropertyKey(k)]; ok && v.IsString() {
			return v.StringValue()
		}
		return ""
	}
	physical := str("name")
	if physical == "" {
		physical = name + "-0a1b2c3"
		set("name", physical)
	}
	service := strings.Split(strings.TrimPrefix(typ, "aws:"), "/")[0]
	set("arn", m.arn(service, physical))
	switch typ {
	case "aws:ec2/eip:Eip":
		set("allocationId", "eipalloc-"+name)
		set("publicIp", "203.0.113.10")
	case "aws:rds/cluster:Cluster":
		set("clusterIdentifier", physical)
		set("endpoint", physical+".cluster-abc.rds.amazonaws.com")
		set("readerEndpoint", physical+".cluster-ro-abc.rds.amazonaws.com")
		set("masterUserSecrets", []any{map[string]any{
			"secretArn":    m.arn("secretsmanager", "secret:rds!cluster-"+name+"-AbCdEf"),
			"secretStatus": "active",
			"kmsKeyId":     "",
		}})
	case "aws:elasticache/replicationGroup:ReplicationGroup":
		set("replicationGroupId", physical)
		set("arn", m.arn("elasticache", "replicationgroup:"+physical))
		set("primaryEndpointAddress", "master."+physical+".abc.use1.cache.amazonaws.com")
	case "aws:elasticache/user:User":
		set("arn", m.arn("elasticache", "user:"+str("userId")))
	case "aws:sqs/queue:Queue":
		id = fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", m.Region, m.Account, physical)
		set("url", id)
		set("arn", m.arn("sqs", physical))
	case "aws:iam/role:Role":
		set("arn", fmt.Sprintf("arn:%s:iam::%s:role/%s", m.Partition, m.Account, physical))
	case "aws:lb/loadBalancer:LoadBalancer":
		set("arn", m.arn("elasticloadbalancing", "loadbalancer/app/"+physical+"/50dc6c495c0c9188"))
		set("arnSuffix", "app/"+physical+"/50dc6c495c0c9188")
		set("dnsName", physical+"-1234567890."+m.Region+".elb.amazonaws.com")
	case "aws:lb/targetGroup:TargetGroup":
		set("arn", m.arn("elasticloadbalancing", "targetgroup/"+physical+"/73e2d6bc24d8a067"))
		set("arnSuffix", "targetgroup/"+physical+"/73e2d6bc24d8a067")
	case "aws:ecs/cluster:Cluster":
		set("arn", m.arn("ecs", "cluster/"+physical))
	case "aws:ecs/taskDefinition:TaskDefinition":
		set("arn", m.arn("ecs", "task-definition/"+str("family")+":1"))
	case "aws:acm/certificate:Certificate":
		id = m.arn("acm", "certificate/"+name)
		set("arn", id)
		set("domainValidationOptions", []any{map[string]any{
			"domainName": str("domainName"), "resourceRecordName": "_abc." + str("domainName") + ".",
			"resourceRecordType": "CNAME", "resourceRecordValue": "_def.acm-validations.aws.",
		}})
	case "aws:route53/record:Record":
		set("fqdn", strings.TrimSuffix(str("name"), "."))
	}
	switch typ {
	case "aws:rds/cluster:Cluster":
		set("clusterResourceId", "cluster-ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	case "aws:lb/loadBalancer:LoadBalancer":
		set("zoneId", "Z35SXDOTRQ7X7K")
	}
	out["id"] = resource.NewPropertyValue(id)
	return id, out, nil
}

func (m *testModel) Invoke(token string, args resource.PropertyMap, _ string) (resource.PropertyMap, error) {
	switch token {
	case "aws:index/getAvailabilityZones:getAvailabilityZones":
		azs := m.AZs
		if azs == nil {
			azs = []string{m.Region + "a", m.Region + "b", m.Region + "c", m.Region + "d"}
		}
		names := make([]any, len(azs))
		for i, a := range azs {
			names[i] = a
		}
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": m.Region, "names": names, "zoneIds": names, "groupNames": []any{m.Region},
		}), nil
	case "aws:index/getPartition:getPartition":
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": m.Partition, "partition": m.Partition, "dnsSuffix": "amazonaws.com", "reverseDnsPrefix": "com.amazonaws",
		}), nil
	case "aws:index/getCallerIdentity:getCallerIdentity":
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": m.Account, "accountId": m.Account,
			"arn": fmt.Sprintf("arn:%s:iam::%s:user/test", m.Partition, m.Account), "userId": "AIDATEST",
		}), nil
	case "aws:ec2/getManagedPrefixList:getManagedPrefixList":
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": testPrefixListID, "name": CloudFrontPrefixList, "addressFamily": "IPv4",
			"arn": "arn:aws:ec2:" + m.Region + ":aws:prefix-list/" + testPrefixListID, "maxEntries": 55, "ownerId": "AWS",
		}), nil
	}
	return nil, fmt.Errorf("testModel: unexpected invoke %s", token)
}
