package cellmodule

import (
	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/awsfacts"
)

// BucketLabel is the fleet bucket in the access model: the router stack's
// bucket (router/component names it "<router>-bucket").
const BucketLabel = "router/bucket"

// AccessPointLabel is a cell's access point of the fleet bucket in the
// access model, when the cell lives in another account than the bucket
// (router/component names it "<router>-<cell id>-access-point").
func AccessPointLabel(id string) string { return "router/" + id + "-access-point" }

// ThroughAccessPoint are a cell's paths with those to the fleet bucket
// made through its access point instead, as a cell in another account
// than the bucket's makes them (the bucket policy delegates cross-account
// access to the bucket account's access points): objects as
// <access point>/object/<key>, the listing on the access point.
func ThroughAccessPoint(id string, paths []access.Path) []access.Path {
	out := make([]access.Path, len(paths))
	for i, p := range paths {
		if p.Resource == BucketLabel {
			p.Name += " through its access point"
			p.Resource = AccessPointLabel(id)
			if p.Suffix != "" {
				p.Suffix = "/object" + p.Suffix
			}
		}
		out[i] = p
	}
	return out
}

// RequiredPaths are the requests a deployed cell must be able to make for
// its app to work, named in the access model's labels (the logical names
// this template gives its resources, access.Label): the task reads,
// writes, deletes and lists its own prefix of the fleet bucket (under the
// bucket's encryption, which the evaluator adds), uses its queue, logs in
// to its database as its user and to its cache; ECS starts it as its
// roles and writes its logs; the migrator logs in as
// cellctl_migrator; ECS pulls the image as the execution role when it is
// in an ECR private registry (a login, which takes no resource, then the
// manifest and the layers from the repository; across accounts the
// repository's policy must allow it too). An image from any other
// registry has no IAM path: the access model notes it (access.Image).
// account is the cell's account (the trust policies'
// aws:SourceAccount); migrations reports whether the cell runs them;
// image is the image its tasks run.
func RequiredPaths(id, account string, migrations bool, image string) []access.Path {
	task, exec := id+"/task-role", id+"/execution-role"
	prefix := StoragePrefix(id)
	object := "/" + prefix + "probe"
	const by = "cellmodule"
	p := func(name, principal, action, resource, suffix string, ctx map[string][]string) access.Path {
		return access.Path{Name: id + ": " + name, DeclaredBy: by, Principal: principal, Action: action, Resource: resource, Suffix: suffix, Context: ctx}
	}
	ecs := map[string][]string{"aws:SourceAccount": {account}}
	paths := []access.Path{
		p("ECS assumes the task role", "ecs-tasks.amazonaws.com", "sts:AssumeRole", task, "", ecs),
		p("ECS assumes the execution role", "ecs-tasks.amazonaws.com", "sts:AssumeRole", exec, "", ecs),
		p("the task writes its prefix", task, "s3:PutObject", BucketLabel, object, nil),
		p("the task reads its prefix", task, "s3:GetObject", BucketLabel, object, nil),
		p("the task deletes under its prefix", task, "s3:DeleteObject", BucketLabel, object, nil),
		p("the task lists its prefix", task, "s3:ListBucket", BucketLabel, "", map[string][]string{"s3:prefix": {prefix}}),
		p("the task sends to its queue", task, "sqs:SendMessage", id+"/queue", "", nil),
		p("the task receives from its queue", task, "sqs:ReceiveMessage", id+"/queue", "", nil),
		p("the task deletes from its queue", task, "sqs:DeleteMessage", id+"/queue", "", nil),
		p("the task connects to its database as "+DatabaseAppUser, task, "rds-db:connect", id+"/db/user/"+DatabaseAppUser, "", nil),
		p("the task connects to its cache", task, "elasticache:Connect", id+"/cache", "", nil),
		p("the task connects to its cache as its user", task, "elasticache:Connect", id+"/cache-user", "", nil),
		p("ECS writes the task's logs", exec, "logs:PutLogEvents", id+"/logs", ":log-stream:probe", nil),
		p("ECS creates the task's log streams", exec, "logs:CreateLogStream", id+"/logs", ":log-stream:probe", nil),
	}
	if ecr, ok := awsfacts.ParseECRImage(image); ok {
		repo := access.RepositoryLabel(ecr)
		paths = append(paths, p("ECS logs in to the image's registry", exec, awsfacts.ECRTokenAction, access.AnyResource, "", nil))
		for _, a := range awsfacts.ECRPullActions {
			paths = append(paths, p("ECS pulls the image ("+a+")", exec, a, repo, "", nil))
		}
	}
	if migrations {
		paths = append(paths,
			p("ECS assumes the migrator role", "ecs-tasks.amazonaws.com", "sts:AssumeRole", id+"/migrator-role", "", ecs),
			p("the migrator connects as "+DatabaseMigratorUser, id+"/migrator-role", "rds-db:connect", id+"/db/user/"+DatabaseMigratorUser, "", nil),
		)
	}
	return paths
}

// servingActions are the requests the app's task makes while it serves
// (ServingPaths): every request reads or writes objects under its prefix
// and enqueues or takes work from its queue. Deleting and listing its
// prefix, its database and cache logins, and ECS starting it as its roles
// are required too, but are not on every request's way.
var servingActions = map[string]bool{"s3:PutObject": true, "s3:GetObject": true, "sqs:SendMessage": true, "sqs:ReceiveMessage": true}

// ServingPaths are the required paths (RequiredPaths, the same values)
// a running task's requests take: the task writes and reads its prefix,
// sends to and receives from its queue. The simulator's health model
// decides them against the live policies, so a cell whose serving path is
// denied answers its requests with errors in a rehearsal, as it would on
// AWS.
func ServingPaths(id string) []access.Path {
	var out []access.Path
	for _, p := range RequiredPaths(id, "", false, "") {
		if p.Principal == id+"/task-role" && servingActions[p.Action] {
			out = append(out, p)
		}
	}
	return out
}

// DNSPaths are the requests a cell's DNS role (cells:dnsAssumeRole) must
// be able to make in its zone, zoneID, for the cell's records: change its
// own name, name, and its certificate's validation name (_<token>.<name>;
// "_probe" stands for the token ACM picks), each as Route 53 asks it —
// route53:ChangeResourceRecordSets carrying the name in
// route53:ChangeResourceRecordSetsNormalizedRecordNames — and read the
// zone, as the provider does before and after a change. What it must not
// change (every other cell's and the router's records) is the isolation
// claim's (access.Model.CheckForbidden tries every rendered record).
func DNSPaths(id, zoneID, name string) []access.Path {
	role, zone := access.DNSRoleLabel(id), access.HostedZoneLabel(zoneID)
	p := func(what, action string, names ...string) access.Path {
		path := access.Path{Name: id + ": " + what, DeclaredBy: "cellmodule", Principal: role, Action: action, Resource: zone}
		if len(names) > 0 {
			path.Context = map[string][]string{access.NormalizedRecordNamesKey: names}
		}
		return path
	}
	return []access.Path{
		p("the DNS role changes the cell's name", "route53:ChangeResourceRecordSets", name),
		p("the DNS role changes the certificate's validation name", "route53:ChangeResourceRecordSets", "_probe."+name),
		p("the DNS role reads the zone", "route53:GetHostedZone"),
		p("the DNS role lists the zone's records", "route53:ListResourceRecordSets"),
	}
}
