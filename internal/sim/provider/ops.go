package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// target identifies the resource one provider call is about.
type target struct {
	project string // Pulumi project ("" when unknown)
	stack   string
	urn     string
	typ     string
	name    string // logical name
	env     awsmodel.Env
	// cloud is the store of the account the target's provider works in.
	cloud *store.Cloud
}

func (t target) String() string { return fmt.Sprintf("%s %q in stack %s", t.typ, t.name, t.stack) }

// key is the target's project-qualified stack (StackKey).
func (t target) key() string { return store.StackKey(t.project, t.stack) }

// injectFault consumes a matching fault, if any, and returns its error.
func injectFault(c *store.Cloud, op string, t target) error {
	var pending bool
	if err := c.Read(func(_ *store.State, ctl *store.Control) error {
		for _, f := range ctl.Faults {
			pending = pending || f.Matches(t.key(), op, t.typ, t.name)
		}
		return nil
	}); err != nil || !pending {
		return err
	}
	var hit *store.Fault
	err := c.Update(func(_ *store.State, ctl *store.Control) error {
		hit = ctl.TakeFault(t.key(), op, t.typ, t.name)
		return nil
	})
	if err != nil || hit == nil {
		return err
	}
	code := hit.Code
	if code == "" {
		code = "InjectedFault"
	}
	msg := fmt.Sprintf("injected fault %s (simulated AWS): %s of %s %q in stack %s fails", hit.ID, op, t.typ, t.name, t.stack)
	if hit.Message != "" {
		msg += ": " + hit.Message
	}
	if !hit.Always {
		msg += fmt.Sprintf(" (%d more to come)", hit.Times-1)
	}
	opIdx := map[string]int{store.OpCreate: awsmodel.OpCreate, store.OpUpdate: awsmodel.OpUpdate, store.OpDelete: awsmodel.OpDelete, store.OpRead: awsmodel.OpRead}[op]
	ae := awsmodel.NewAPIError(t.typ, opIdx, t.name, code, msg)
	ae.Status = 500
	return &store.InjectedFaultError{Fault: *hit, Op: op, Stack: t.stack, Type: t.typ, Resource: t.name, Detail: ae.Error()}
}

// create makes a resource in the cloud.
func create(c *store.Cloud, t target, inputs resource.PropertyMap) (string, resource.PropertyMap, error) {
	var id string
	var outs resource.PropertyMap
	err := c.Update(func(st *store.State, ctl *store.Control) error {
		if err := st.StackErr(t.key()); err != nil {
			return err
		}
		if st.Account == "" {
			st.Account = t.env.Account
			st.TouchMeta()
		}
		st.Touch(t.key())
		v := c.NewView(st)
		if err := checkRefs(v, t, awsmodel.OpCreate, inputs); err != nil {
			return err
		}
		seed := awsmodel.NewSeed()
		var err error
		id, outs, err = awsmodel.Outputs(awsmodel.Request{Type: t.typ, Name: t.name, Inputs: inputs, Env: t.env, Seed: seed, Cloud: v, Now: c.Now()})
		if err != nil {
			return err
		}
		if err := checkCross(v, t, awsmodel.OpCreate, outs, nil); err != nil {
			return err
		}
		if err := checkUnique(v, t, awsmodel.OpCreate, id, outs, nil); err != nil {
			return err
		}
		if err := checkQuotas(v, ctl, t, awsmodel.OpCreate, outs, nil); err != nil {
			return err
		}
		rec := &store.Record{Project: t.project, Stack: t.stack, URN: t.urn, Type: t.typ, Name: t.name, ID: id, Region: t.env.Region,
			Seed: hex.EncodeToString(seed), Created: c.Now(), Updated: c.Now()}
		if err := fill(c, rec, inputs, outs); err != nil {
			return err
		}
		st.Resources = append(st.Resources, rec)
		if t.typ == typeCertValidation {
			return issueCertificate(c, st, v, outs, t.env.Region)
		}
		if t.typ == store.TypeFunction {
			return c.WriteFunctionCode(t.env.Region, id, outs)
		}
		return nil
	})
	return id, outs, err
}

const typeCertValidation = "aws:acm/certificateValidation:CertificateValidation"

// issueCertificate marks the validated certificate ISSUED, as ACM does once
// it finds the validation record, with a 13-month validity.
func issueCertificate(c *store.Cloud, st *store.State, v *store.View, validation resource.PropertyMap, region string) error {
	rec := v.LookupTyped("aws:acm/certificate:Certificate", pvString(validation["certificateArn"]), region)
	if rec == nil {
		return nil
	}
	outs := v.Outputs(rec).Copy()
	now := c.Now().UTC()
	outs["status"] = resource.NewStringProperty("ISSUED")
	outs["notBefore"] = resource.NewStringProperty(now.Format(time.RFC3339))
	outs["notAfter"] = resource.NewStringProperty(now.AddDate(0, 13, 0).Format(time.RFC3339))
	outs["renewalEligibility"] = resource.NewStringProperty("ELIGIBLE")
	enc, err := c.EncodeMap(outs)
	if err != nil {
		return err
	}
	rec.SetOutputs(enc, nil)
	st.Touch(rec.Key())
	return nil
}

func fill(c *store.Cloud, rec *store.Record, inputs, outputs resource.PropertyMap) error {
	in, err := c.EncodeMap(inputs)
	if err != nil {
		return fmt.Errorf("storing inputs of %s: %w", rec.Name, err)
	}
	out, err := c.EncodeMap(outputs)
	if err != nil {
		return fmt.Errorf("storing outputs of %s: %w", rec.Name, err)
	}
	rec.Inputs = in
	rec.SetOutputs(out, outputs.Copy())
	return nil
}

func byID(st *store.State, typ, id string) *store.Record {
	for _, r := range st.Resources {
		if r.ID == id && r.Type == typ {
			return r
		}
	}
	return nil
}

func notFound(t target, op int, id string) error {
	return awsmodel.NewAPIError(t.typ, op, t.name, "NotFound", fmt.Sprintf("%s %s (%s) does not exist in the simulated cloud", t.typ, t.name, id))
}

// update changes a live resource to new inputs.
func update(c *store.Cloud, t target, id string, inputs resource.PropertyMap) (resource.PropertyMap, error) {
	var outs resource.PropertyMap
	err := c.Update(func(st *store.State, ctl *store.Control) error {
		if err := st.StackErr(t.key()); err != nil {
			return err
		}
		rec := byID(st, t.typ, id)
		if rec == nil {
			return notFound(t, awsmodel.OpUpdate, id)
		}
		v := c.NewView(st)
		if err := checkRefs(v, t, awsmodel.OpUpdate, inputs); err != nil {
			return err
		}
		seed, _ := hex.DecodeString(rec.Seed)
		t.env.Region = rec.Region // a resource stays where it was made
		newID, o, err := awsmodel.Outputs(awsmodel.Request{Type: t.typ, Name: t.name, Inputs: inputs, Env: t.env, Seed: seed,
			Old: v.Outputs(rec), Cloud: v, Now: c.Now()})
		if err != nil {
			return err
		}
		outs = o
		if err := checkCross(v, t, awsmodel.OpUpdate, outs, rec); err != nil {
			return err
		}
		if err := checkUnique(v, t, awsmodel.OpUpdate, newID, outs, rec); err != nil {
			return err
		}
		if err := checkQuotas(v, ctl, t, awsmodel.OpUpdate, outs, rec); err != nil {
			return err
		}
		if err := fill(c, rec, inputs, outs); err != nil {
			return err
		}
		st.Touch(rec.Key())
		// Properties the program now sets are managed again.
		rec.Edited = slices.DeleteFunc(rec.Edited, func(k string) bool { _, ok := inputs[resource.PropertyKey(k)]; return ok })
		rec.Updated = c.Now()
		if t.typ == store.TypeFunction {
			return c.WriteFunctionCode(rec.Region, rec.ID, outs)
		}
		return nil
	})
	return outs, err
}

// errRetry marks a dependency error AWS clears once the dependents go
// (the provider retries those, as the terraform provider does).
type errRetry struct{ error }

func (e errRetry) Unwrap() error { return e.error }

// destroy removes a live resource; a missing one is already deleted.
func destroy(ctx context.Context, c *store.Cloud, t target, id string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := c.Update(func(st *store.State, _ *store.Control) error {
			if err := st.StackErr(t.key()); err != nil {
				return err // "already gone" would drop it from the stack's state
			}
			rec := byID(st, t.typ, id)
			if rec == nil {
				return nil
			}
			v := c.NewView(st)
			if skip, ok := v.Outputs(rec)["skipDestroy"]; ok && skip.IsBool() && skip.BoolValue() {
				// pulumi-aws only forgets a resource with skipDestroy (a
				// Lambda@Edge function CloudFront still replicates): it stays
				// in the cloud for the operator to delete later.
				rec.Abandoned = true
				st.Touch(rec.Key())
				return nil
			}
			if err := awsmodel.DeleteCheck(t.typ, t.name, v.Outputs(rec)); err != nil {
				return err
			}
			if err := checkDependents(v, t, rec); err != nil {
				return err
			}
			if err := takeFinalSnapshot(st, t, rec, v.Outputs(rec), c.Now()); err != nil {
				return err
			}
			st.Remove(rec)
			if t.typ == store.TypeFunction {
				return c.RemoveFunctionCode(rec.Region, rec.ID)
			}
			return nil
		})
		var retry errRetry
		if !errors.As(err, &retry) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// read returns the live outputs and out-of-band edited keys, or nil when
// the resource is gone.
func read(c *store.Cloud, key, typ, id string) (resource.PropertyMap, []string, string, error) {
	var outs resource.PropertyMap
	var edited []string
	var region string
	err := c.Read(func(st *store.State, _ *store.Control) error {
		if err := st.StackErr(key); err != nil {
			return err // "gone" would make refresh delete it from state
		}
		rec := byID(st, typ, id)
		if rec == nil {
			return nil
		}
		o, err := c.DecodeMap(rec.Outputs)
		if err != nil {
			return err
		}
		outs, edited, region = o, append([]string(nil), rec.Edited...), rec.Region
		return nil
	})
	return outs, edited, region, err
}

// latencyRules returns the persisted latency rules.
func latencyRules(c *store.Cloud) ([]store.Latency, error) {
	var out []store.Latency
	err := c.Read(func(_ *store.State, ctl *store.Control) error {
		out = append(out, ctl.Latency...)
		return nil
	})
	return out, err
}

// ---- cross-resource checks ----------------------------------------------

func checkRefs(v *store.View, t target, op int, inputs resource.PropertyMap) error {
	for _, ref := range awsmodel.References(t.typ, inputs) {
		if ref.Code == "" {
			continue
		}
		region := t.env.Region
		if strings.HasPrefix(ref.Value, "arn:") {
			if parts := strings.Split(ref.Value, ":"); len(parts) > 3 && parts[3] != "" {
				region = parts[3]
			}
		}
		if v.LookupTyped(ref.Target, ref.Value, region) == nil && !builtin(ref.Target, ref.Value) {
			return awsmodel.NewAPIError(t.typ, op, t.name, ref.Code, fmt.Sprintf(ref.Message, ref.Value))
		}
	}
	return nil
}

// builtin reports resources every AWS account has.
func builtin(typ, ref string) bool {
	switch typ {
	case "aws:elasticache/user:User":
		return ref == "default"
	case "aws:ecs/cluster:Cluster":
		return false
	}
	return false
}

func recordsOf(v *store.View, typ string) []*store.Record {
	var out []*store.Record
	for _, r := range v.State.Resources {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// checkCross applies AWS rules that involve other resources.
func checkCross(v *store.View, t target, op int, outs resource.PropertyMap, self *store.Record) error {
	fail := func(code, format string, args ...any) error {
		return awsmodel.NewAPIError(t.typ, op, t.name, code, fmt.Sprintf(format, args...))
	}
	s := func(k string) string { v, _ := outs[resource.PropertyKey(k)]; return pvString(v) }
	switch t.typ {
	case "aws:rds/subnetGroup:SubnetGroup", "aws:lb/loadBalancer:LoadBalancer":
		if t.typ == "aws:lb/loadBalancer:LoadBalancer" && s("loadBalancerType") != "application" {
			return nil
		}
		ids := stringsAt(outs, "subnetIds")
		if t.typ == "aws:lb/loadBalancer:LoadBalancer" {
			ids = stringsAt(outs, "subnets")
		}
		azs, vpcs := map[string]bool{}, map[string]bool{}
		for _, id := range ids {
			if sn := v.LookupTyped("aws:ec2/subnet:Subnet", id, t.env.Region); sn != nil {
				azs[store.Str(sn.Outputs["availabilityZone"])] = true
				vpcs[store.Str(sn.Outputs["vpcId"])] = true
			}
		}
		if len(vpcs) > 1 {
			return fail("InvalidParameterValue", "The subnets must all be in the same VPC")
		}
		if len(ids) > 0 && len(azs) < 2 {
			if t.typ == "aws:rds/subnetGroup:SubnetGroup" {
				return fail("DBSubnetGroupDoesNotCoverEnoughAZs", "The DB subnet group doesn't meet Availability Zone (AZ) coverage requirement. Current AZ coverage: %s. Add subnets to cover at least 2 AZs.", strings.Join(slices.Sorted(maps.Keys(azs)), ", "))
			}
			return fail("ValidationError", "At least two subnets in two different Availability Zones must be specified")
		}
	case "aws:ec2/natGateway:NatGateway":
		alloc := s("allocationId")
		for _, o := range recordsOf(v, t.typ) {
			if o != self && alloc != "" && store.Str(o.Outputs["allocationId"]) == alloc {
				return fail("Resource.AlreadyAssociated", "Elastic IP address [%s] is already associated", alloc)
			}
		}
	case "aws:elasticache/userGroup:UserGroup":
		if strings.EqualFold(s("engine"), "redis") {
			ok := false
			for _, id := range stringsAt(outs, "userIds") {
				if id == "default" {
					ok = true
				} else if u := v.LookupTyped("aws:elasticache/user:User", id, t.env.Region); u != nil && store.Str(u.Outputs["userName"]) == "default" {
					ok = true
				}
			}
			if !ok {
				return fail("DefaultUserRequired", "User group needs to contain a user with the user name default.")
			}
		}
	case "aws:ecs/service:Service":
		for _, tg := range stringsAtPath(outs, "loadBalancers.targetGroupArn") {
			if !targetGroupAttached(v, tg) {
				return fail("InvalidParameterException", "The target group with targetGroupArn %s does not have an associated load balancer.", tg)
			}
		}
	}
	return nil
}

func targetGroupAttached(v *store.View, tg string) bool {
	for _, r := range v.State.Resources {
		var refs []string
		switch r.Type {
		case "aws:lb/listener:Listener":
			refs = stringsAtPath(v.Outputs(r), "defaultActions.targetGroupArn")
			refs = append(refs, stringsAtPath(v.Outputs(r), "defaultActions.forward.targetGroups.arn")...)
		case "aws:lb/listenerRule:ListenerRule":
			refs = stringsAtPath(v.Outputs(r), "actions.targetGroupArn")
			refs = append(refs, stringsAtPath(v.Outputs(r), "actions.forward.targetGroups.arn")...)
		}
		if slices.Contains(refs, tg) {
			return true
		}
	}
	return false
}

func checkUnique(v *store.View, t target, op int, id string, outs resource.PropertyMap, self *store.Record) error {
	mine := awsmodel.UniqueNames(t.typ, t.env, outs)
	if len(mine) == 0 {
		return nil
	}
	for _, r := range v.State.Resources {
		if r == self || r.Type != t.typ {
			continue
		}
		for _, theirs := range v.UniqueNames(r) {
			for _, u := range mine {
				if u.Key == theirs.Key {
					return awsmodel.NewAPIError(t.typ, op, t.name, u.Code, u.Message)
				}
			}
		}
	}
	return nil
}

func checkQuotas(v *store.View, ctl *store.Control, t target, op int, outs resource.PropertyMap, self *store.Record) error {
	mine := awsmodel.QuotaUsage(t.typ, t.env, outs, v)
	if len(mine) == 0 {
		return nil
	}
	var before []awsmodel.Consumption
	if self != nil {
		before = v.Consumption(self)
	}
	for _, u := range mine {
		q, ok := awsmodel.QuotaDefByCode(u.Code)
		if !ok || u.Implied {
			continue // an implied use counts below, never refuses its creator
		}
		prior := 0.0
		for _, b := range before {
			if b.Code == u.Code && b.Scope == u.Scope {
				prior = b.Amount
			}
		}
		if u.Amount <= prior {
			continue // an update that does not grow
		}
		used := 0.0
		// The region's default VPC, internet gateway and security group
		// count as on AWS (store.View.Defaults).
		for _, r := range append(v.Defaults(t.env.Region), v.State.Resources...) {
			if r == self {
				continue
			}
			for _, c := range v.Consumption(r) {
				if c.Code == u.Code && c.Scope == u.Scope {
					used += c.Amount
				}
			}
		}
		if limit := ctl.QuotaValue(t.env.Region, q); used+u.Amount > limit {
			return awsmodel.NewAPIError(t.typ, op, t.name, q.ErrorCode,
				fmt.Sprintf("%s (quota %s %q: %g of %g used in %s)", q.ErrorMessage, q.Code, q.Name, used, limit, u.Scope))
		}
	}
	return nil
}

// blocker: a live dependent that keeps AWS from deleting a resource.
type blocker struct {
	target, dependent, path string
	code, message           string // message has one %s: the target's id
	retry                   bool
}

var blockers = []blocker{
	{"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "vpcId", "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/vpc:Vpc", "aws:ec2/securityGroup:SecurityGroup", "vpcId", "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/vpc:Vpc", "aws:ec2/internetGateway:InternetGateway", "vpcId", "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/vpc:Vpc", "aws:ec2/routeTable:RouteTable", "vpcId", "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/vpc:Vpc", "aws:ec2/vpcEndpoint:VpcEndpoint", "vpcId", "DependencyViolation", "The vpc '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/subnet:Subnet", "aws:ec2/natGateway:NatGateway", "subnetId", "DependencyViolation", "The subnet '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/subnet:Subnet", "aws:lb/loadBalancer:LoadBalancer", "subnets", "DependencyViolation", "The subnet '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/subnet:Subnet", "aws:ecs/service:Service", "networkConfiguration.subnets", "DependencyViolation", "The subnet '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/subnet:Subnet", "aws:ec2/vpcEndpoint:VpcEndpoint", "subnetIds", "DependencyViolation", "The subnet '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/routeTable:RouteTable", "aws:ec2/routeTableAssociation:RouteTableAssociation", "routeTableId", "DependencyViolation", "The routeTable '%s' has dependencies and cannot be deleted.", true},
	{"aws:ec2/eip:Eip", "aws:ec2/natGateway:NatGateway", "allocationId", "InvalidIPAddress.InUse", "Address %s is in use.", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "referencedSecurityGroupId", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "referencedSecurityGroupId", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:lb/loadBalancer:LoadBalancer", "securityGroups", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:ecs/service:Service", "networkConfiguration.securityGroups", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:rds/cluster:Cluster", "vpcSecurityGroupIds", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:elasticache/replicationGroup:ReplicationGroup", "securityGroupIds", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:ec2/securityGroup:SecurityGroup", "aws:ec2/vpcEndpoint:VpcEndpoint", "securityGroupIds", "DependencyViolation", "resource %s has a dependent object", true},
	{"aws:iam/role:Role", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "role", "DeleteConflict", "Cannot delete entity, must detach all policies first. (role %s)", false},
	{"aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy", "role", "DeleteConflict", "Cannot delete entity, must delete policies first. (role %s)", false},
	{"aws:ecs/cluster:Cluster", "aws:ecs/service:Service", "cluster", "ClusterContainsServicesException", "The Cluster cannot be deleted while Services are active. (%s)", true},
	{"aws:lb/targetGroup:TargetGroup", "aws:lb/listener:Listener", "defaultActions.targetGroupArn", "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", true},
	{"aws:lb/targetGroup:TargetGroup", "aws:lb/listenerRule:ListenerRule", "actions.targetGroupArn", "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", true},
	{"aws:rds/cluster:Cluster", "aws:rds/clusterInstance:ClusterInstance", "clusterIdentifier", "InvalidDBClusterStateFault", "Cluster %s cannot be deleted, it still contains DB instances in non-deleting state.", true},
	{"aws:rds/subnetGroup:SubnetGroup", "aws:rds/cluster:Cluster", "dbSubnetGroupName", "InvalidDBSubnetGroupStateFault", "Cannot delete the subnet group '%s' because at least one database cluster is still using it.", true},
	{"aws:elasticache/subnetGroup:SubnetGroup", "aws:elasticache/replicationGroup:ReplicationGroup", "subnetGroupName", "CacheSubnetGroupInUse", "Cache subnet group %s is currently in use by a cache cluster.", true},
	{"aws:elasticache/userGroup:UserGroup", "aws:elasticache/replicationGroup:ReplicationGroup", "userGroupIds", "InvalidUserGroupState", "User group %s is associated with a replication group.", true},
	{"aws:elasticache/user:User", "aws:elasticache/userGroup:UserGroup", "userIds", "InvalidUserState", "User %s is a member of a user group.", true},
	{"aws:cloudfront/cachePolicy:CachePolicy", "aws:cloudfront/distribution:Distribution", "defaultCacheBehavior.cachePolicyId", "CachePolicyInUse", "Cannot delete the cache policy %s, it is attached to one or more cache behaviors.", true},
	{"aws:cloudfront/cachePolicy:CachePolicy", "aws:cloudfront/distribution:Distribution", "orderedCacheBehaviors.cachePolicyId", "CachePolicyInUse", "Cannot delete the cache policy %s, it is attached to one or more cache behaviors.", true},
	{"aws:cloudfront/originRequestPolicy:OriginRequestPolicy", "aws:cloudfront/distribution:Distribution", "defaultCacheBehavior.originRequestPolicyId", "OriginRequestPolicyInUse", "Cannot delete the origin request policy %s, it is attached to one or more cache behaviors.", true},
	{"aws:lambda/function:Function", "aws:cloudfront/distribution:Distribution", "defaultCacheBehavior.lambdaFunctionAssociations.lambdaArn", "InvalidParameterValueException", "Lambda was unable to delete %s because it is a replicated function.", true},
}

func checkDependents(v *store.View, t target, rec *store.Record) error {
	for _, b := range blockers {
		if b.target != rec.Type || b.code == "" {
			continue
		}
		for _, d := range recordsOf(v, b.dependent) {
			if d == rec {
				continue
			}
			for _, val := range stringsAtPath(v.Outputs(d), b.path) {
				if store.Refers(rec, val) {
					err := awsmodel.NewAPIError(t.typ, awsmodel.OpDelete, t.name, b.code, fmt.Sprintf(b.message, rec.ID)+fmt.Sprintf(" (in use by %s %q in stack %s)", d.Type, d.Name, d.Key()))
					if b.retry {
						return errRetry{err}
					}
					return err
				}
			}
		}
	}
	if rec.Type == "aws:ec2/internetGateway:InternetGateway" {
		vpc := store.Str(rec.Outputs["vpcId"])
		for _, nat := range recordsOf(v, "aws:ec2/natGateway:NatGateway") {
			if sn := v.LookupTyped("aws:ec2/subnet:Subnet", store.Str(nat.Outputs["subnetId"]), rec.Region); vpc != "" && sn != nil && store.Str(sn.Outputs["vpcId"]) == vpc && store.Str(nat.Outputs["publicIp"]) != "" {
				return errRetry{awsmodel.NewAPIError(t.typ, awsmodel.OpDelete, t.name, "DependencyViolation",
					fmt.Sprintf("Network %s has some mapped public address(es). Please unmap those public address(es) before detaching the gateway.", vpc))}
			}
		}
	}
	return nil
}

// ---- small helpers --------------------------------------------------------

func pvString(v resource.PropertyValue) string {
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	if v.IsString() {
		return v.StringValue()
	}
	return ""
}

func stringsAt(m resource.PropertyMap, k string) []string {
	return stringsAtPath(m, k)
}

// stringsAtPath collects the strings at a dotted path, fanning out over
// arrays.
func stringsAtPath(m resource.PropertyMap, path string) []string {
	var out []string
	var walk func(v resource.PropertyValue, parts []string)
	walk = func(v resource.PropertyValue, parts []string) {
		for v.IsSecret() {
			v = v.SecretValue().Element
		}
		switch {
		case v.IsArray():
			for _, e := range v.ArrayValue() {
				walk(e, parts)
			}
		case len(parts) == 0:
			if v.IsString() {
				out = append(out, v.StringValue())
			}
		case v.IsObject():
			if next, ok := v.ObjectValue()[resource.PropertyKey(parts[0])]; ok {
				walk(next, parts[1:])
			}
		}
	}
	walk(resource.NewObjectProperty(m), strings.Split(path, "."))
	return out
}

// takeFinalSnapshot records the final snapshot of a deleted Aurora cluster.
// Snapshot identifiers are unique per account and region and outlive the
// cluster: a second delete naming the same one fails, as in AWS.
func takeFinalSnapshot(st *store.State, t target, rec *store.Record, outs resource.PropertyMap, now time.Time) error {
	if rec.Type != "aws:rds/cluster:Cluster" {
		return nil
	}
	if skip, ok := outs["skipFinalSnapshot"]; ok && skip.IsBool() && skip.BoolValue() {
		return nil
	}
	id := pvString(outs["finalSnapshotIdentifier"])
	if id == "" {
		return nil
	}
	key := rec.Region + "/" + id
	if _, exists := st.Snapshots[key]; exists {
		return awsmodel.NewAPIError(t.typ, awsmodel.OpDelete, t.name, "DBClusterSnapshotAlreadyExistsFault",
			fmt.Sprintf("Cannot create the cluster snapshot because one with the identifier %s already exists.", id))
	}
	if st.Snapshots == nil {
		st.Snapshots = map[string]store.Snapshot{}
	}
	st.Snapshots[key] = store.Snapshot{Identifier: id, Region: rec.Region, Cluster: rec.ID, Project: rec.Project, Stack: rec.Stack, Created: now}
	st.TouchMeta()
	return nil
}
