package access

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/policy"
	"github.com/cellctl/cellctl/internal/props"
)

// Label is how paths name a stack's resource: "<stack>/<logical name
// without the stack's prefix>", e.g. cell-a/task-role, router/bucket.
func Label(stack, logicalName string) string {
	return stack + "/" + strings.TrimPrefix(logicalName, stack+"-")
}

// Build reads the rendered stacks into an access model: roles with their
// inline and attached policies and trust, keys with their key policies,
// the bucket with its policy and default encryption, queues, secrets, the
// database users, cache users and log groups. A policy that does not parse
// is an error: an unreadable policy is never read as "allows nothing".
func Build(stacks []offline.Stack) (*Model, error) {
	m := NewModel()
	var errs []string
	fail := func(s offline.Stack, r *offline.Resource, what string, err error) {
		errs = append(errs, fmt.Sprintf("%s: %s %s: %s: %v", s.Name, r.Type, r.Name, what, err))
	}
	type pending struct {
		stack offline.Stack
		res   *offline.Resource
	}
	var later []pending
	for _, s := range stacks {
		for _, r := range s.Resources {
			if !r.Custom {
				continue
			}
			in, out := props.Plain(r.Inputs), props.Plain(r.Outputs)
			label := Label(s.Name, r.Name)
			switch r.Type {
			case "aws:iam/role:Role":
				arn := str(out, "arn")
				p := m.AddPrincipal(&Principal{ARN: arn, Account: s.Account, Owner: s.Owner, Label: label})
				p.roleName = str(out, "name")
				trust, err := parsePolicy(in["assumeRolePolicy"])
				if err != nil {
					fail(s, r, "assumeRolePolicy", err)
					continue
				}
				m.AddResource(&Resource{ARN: arn, Account: s.Account, Region: s.Region, Kind: KindRole, Owner: s.Owner, Label: label,
					Policy: &Policy{Name: label + " (trust)", Doc: trust}})
				// The services a trust policy names are principals too.
				for _, st := range trust.Statement {
					if st.Principal != nil {
						for _, svc := range st.Principal.Kinds[policy.KindService] {
							m.AddPrincipal(&Principal{ARN: svc, Service: true, Label: svc})
						}
					}
				}
			case "aws:kms/key:Key":
				doc := policy.DefaultKeyPolicy(s.Partition, s.Account)
				if raw, ok := in["policy"]; ok && raw != nil && raw != "" {
					d, err := parsePolicy(raw)
					if err != nil {
						fail(s, r, "policy", err)
						continue
					}
					doc = d
				}
				m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindKey, Owner: s.Owner, Label: label,
					Policy: &Policy{Name: label + " (key policy)", Doc: doc}, Protected: r.Protect, Retained: r.RetainOnDelete})
			case "aws:s3/bucketV2:BucketV2", "aws:s3/bucket:Bucket":
				b := m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindBucket, Owner: s.Owner, Label: label})
				b.name = firstNonEmpty(str(out, "bucket"), str(in, "bucket"))
			case "aws:sqs/queue:Queue":
				q := m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindQueue, Owner: s.Owner, Label: label})
				q.name = firstNonEmpty(str(out, "url"), r.ID)
				if k := str(in, "kmsMasterKeyId"); k != "" {
					q.Key = keyARN(k, s)
				}
				m.queueSettings(q).fifo, _ = in["fifoQueue"].(bool)
				if err := m.readRedrivePolicy(q, str(in, "redrivePolicy")); err != nil {
					fail(s, r, "redrivePolicy", err)
				}
				if err := m.readRedriveAllowPolicy(q, str(in, "redriveAllowPolicy"), label); err != nil {
					fail(s, r, "redriveAllowPolicy", err)
				}
			case "aws:secretsmanager/secret:Secret":
				sec := m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindSecret, Owner: s.Owner, Label: label})
				sec.Key = AWSManagedKey(s.Partition, s.Region, s.Account, "secretsmanager")
				if k := str(in, "kmsKeyId"); k != "" {
					sec.Key = keyARN(k, s)
				}
			case "aws:rds/cluster:Cluster":
				m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindOther, Owner: s.Owner, Label: label,
					Probes: []Probe{{Action: "rds:ModifyDBCluster"}}})
				if id := str(out, "clusterResourceId"); id != "" {
					m.dbClusters = append(m.dbClusters, dbCluster{stack: s, label: label, resourceID: id})
				}
				if secs, ok := out["masterUserSecrets"].([]any); ok {
					for _, e := range secs {
						if sm, ok := e.(map[string]any); ok && str(sm, "secretArn") != "" {
							sec := m.AddResource(&Resource{ARN: str(sm, "secretArn"), Account: s.Account, Region: s.Region, Kind: KindSecret,
								Owner: s.Owner, Label: label + "/master-secret"})
							sec.Key = AWSManagedKey(s.Partition, s.Region, s.Account, "secretsmanager")
							if k := str(sm, "kmsKeyId"); k != "" {
								sec.Key = keyARN(k, s)
							}
						}
					}
				}
			case "aws:elasticache/replicationGroup:ReplicationGroup", "aws:elasticache/user:User":
				m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindOther, Owner: s.Owner, Label: label,
					Probes: []Probe{{Action: "elasticache:Connect"}}})
			case "aws:cloudwatch/logGroup:LogGroup":
				m.AddResource(&Resource{ARN: str(out, "arn"), Account: s.Account, Region: s.Region, Kind: KindOther, Owner: s.Owner, Label: label,
					Probes: []Probe{{Action: "logs:PutLogEvents", Suffix: ":log-stream:probe"}, {Action: "logs:GetLogEvents", Suffix: ":log-stream:probe"}}})
			case "aws:route53/record:Record":
				m.addRecord(s, label, str(in, "zoneId"), str(in, "name"))
			case "aws:cloudfront/distribution:Distribution", "aws:lb/listener:Listener", "aws:acm/certificate:Certificate":
				m.edge.add(s, r.Type, label, in, out)
			case "aws:ecs/taskDefinition:TaskDefinition":
				if err := m.addImages(s, r, str(in, "containerDefinitions")); err != nil {
					fail(s, r, "containerDefinitions", err)
				}
			case "aws:iam/rolePolicy:RolePolicy", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:ecr/repositoryPolicy:RepositoryPolicy",
				"aws:s3/bucketPolicy:BucketPolicy", "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
				"aws:sqs/queuePolicy:QueuePolicy", "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy", "aws:secretsmanager/secretPolicy:SecretPolicy", "aws:s3/accessPoint:AccessPoint":
				later = append(later, pending{s, r})
			}
		}
	}
	// Policies and settings that name their role, bucket or queue, once
	// every role, bucket and queue is known.
	for _, pd := range later {
		s, r := pd.stack, pd.res
		in := props.Plain(r.Inputs)
		label := Label(s.Name, r.Name)
		switch r.Type {
		case "aws:iam/rolePolicy:RolePolicy":
			p := m.roleByName(s.Account, str(in, "role"))
			if p == nil {
				fail(s, r, "role", fmt.Errorf("no role named %q in the render", str(in, "role")))
				continue
			}
			doc, err := parsePolicy(in["policy"])
			if err != nil {
				fail(s, r, "policy", err)
				continue
			}
			p.Identity = append(p.Identity, Policy{Name: label + " (inline)", Doc: doc})
		case "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
			p := m.roleByName(s.Account, str(in, "role"))
			if p == nil {
				fail(s, r, "role", fmt.Errorf("no role named %q in the render", str(in, "role")))
				continue
			}
			arn := str(in, "policyArn")
			doc, ok := ManagedPolicy(arn)
			if !ok {
				fail(s, r, "policyArn", fmt.Errorf("%s is not a managed policy whose actions cellctl records (see internal/access/managed.go)", arn))
				continue
			}
			p.Identity = append(p.Identity, Policy{Name: arn + " (AWS managed, attached by " + label + ")", Doc: doc})
		case "aws:s3/bucketPolicy:BucketPolicy":
			b := m.bucketByName(str(in, "bucket"))
			if b == nil {
				fail(s, r, "bucket", fmt.Errorf("no bucket %q in the render", str(in, "bucket")))
				continue
			}
			doc, err := parsePolicy(in["policy"])
			if err != nil {
				fail(s, r, "policy", err)
				continue
			}
			b.Policy = &Policy{Name: label + " (bucket policy)", Doc: doc}
		case "aws:s3/accessPoint:AccessPoint":
			b := m.bucketByName(str(in, "bucket"))
			if b == nil {
				fail(s, r, "bucket", fmt.Errorf("no bucket %q in the render", str(in, "bucket")))
				continue
			}
			ap := m.AddResource(&Resource{ARN: str(props.Plain(r.Outputs), "arn"), Account: s.Account, Region: s.Region, Kind: KindAccessPoint,
				Owner: s.Owner, Label: label})
			ap.bucket = b
			// "" or "{}" is no policy (the provider deletes it for either).
			if raw := str(in, "policy"); raw != "" && raw != "{}" {
				doc, err := parsePolicy(raw)
				if err != nil {
					fail(s, r, "policy", err)
					continue
				}
				ap.Policy = &Policy{Name: label + " (access point policy)", Doc: doc}
			}
		case "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2":
			b := m.bucketByName(str(in, "bucket"))
			if b == nil {
				fail(s, r, "bucket", fmt.Errorf("no bucket %q in the render", str(in, "bucket")))
				continue
			}
			rules, _ := in["rules"].([]any)
			for _, e := range rules {
				rule, _ := e.(map[string]any)
				def, _ := rule["applyServerSideEncryptionByDefault"].(map[string]any)
				if str(def, "sseAlgorithm") != "aws:kms" && str(def, "sseAlgorithm") != "aws:kms:dsse" {
					continue // SSE-S3: no key policy takes part
				}
				b.Key = AWSManagedKey(s.Partition, s.Region, s.Account, "s3")
				if k := str(def, "kmsMasterKeyId"); k != "" {
					b.Key = keyARN(k, s)
				}
				b.BucketKey, _ = rule["bucketKeyEnabled"].(bool)
			}
		case "aws:sqs/queuePolicy:QueuePolicy":
			q := m.queueByURL(str(in, "queueUrl"))
			if q == nil {
				fail(s, r, "queueUrl", fmt.Errorf("no queue %q in the render", str(in, "queueUrl")))
				continue
			}
			doc, err := parsePolicy(in["policy"])
			if err != nil {
				fail(s, r, "policy", err)
				continue
			}
			q.Policy = &Policy{Name: label + " (queue policy)", Doc: doc}
		case "aws:ecr/repositoryPolicy:RepositoryPolicy":
			// A repository the stack owns, in its account and region.
			repo := m.repository(awsfacts.ECRImage{Partition: s.Partition, Account: s.Account, Region: s.Region, Repository: str(in, "repository")})
			doc, err := parsePolicy(in["policy"])
			if err != nil {
				fail(s, r, "policy", err)
				continue
			}
			repo.Policy = &Policy{Name: label + " (repository policy)", Doc: doc}
		case "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy":
			q := m.queueByURL(str(in, "queueUrl"))
			if q == nil {
				fail(s, r, "queueUrl", fmt.Errorf("no queue %q in the render", str(in, "queueUrl")))
				continue
			}
			if err := m.readRedriveAllowPolicy(q, str(in, "redriveAllowPolicy"), label); err != nil {
				fail(s, r, "redriveAllowPolicy", err)
			}
		case "aws:secretsmanager/secretPolicy:SecretPolicy":
			sec := m.resources[str(in, "secretArn")]
			if sec == nil {
				fail(s, r, "secretArn", fmt.Errorf("no secret %q in the render", str(in, "secretArn")))
				continue
			}
			doc, err := parsePolicy(in["policy"])
			if err != nil {
				fail(s, r, "policy", err)
				continue
			}
			sec.Policy = &Policy{Name: label + " (secret policy)", Doc: doc}
		}
	}
	// The AWS managed keys the render's resources name.
	for _, r := range m.Resources() {
		if r.Key == "" || m.resources[r.Key] != nil {
			continue
		}
		if svc := awsManagedService(r.Key); svc != "" {
			a, _ := ParseARN(r.Key)
			m.AddAWSManagedKey(a.Partition, a.Region, a.Account, svc)
		} else if a, ok := ParseARN(r.Key); ok && strings.HasPrefix(a.Resource, "alias/aws/") {
			// A program that names alias/aws/<service> means the managed key.
			r.Key = AWSManagedKey(a.Partition, a.Region, a.Account, strings.TrimPrefix(a.Resource, "alias/aws/"))
			m.AddAWSManagedKey(a.Partition, a.Region, a.Account, strings.TrimPrefix(a.Resource, "alias/aws/"))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("reading the rendered policies:\n  %s", strings.Join(errs, "\n  "))
	}
	return m, nil
}

// AddDBUsers adds the database users of every rendered cluster:
// rds-db:connect's resource, arn:…:dbuser:<cluster resource id>/<user>
// ("Creating and using an IAM policy for IAM database access", Aurora User
// Guide), labelled <cluster>/user/<user>.
func (m *Model) AddDBUsers(users ...string) {
	for _, c := range m.dbClusters {
		for _, u := range users {
			arn := fmt.Sprintf("arn:%s:rds-db:%s:%s:dbuser:%s/%s", c.stack.Partition, c.stack.Region, c.stack.Account, c.resourceID, u)
			m.AddResource(&Resource{ARN: arn, Account: c.stack.Account, Region: c.stack.Region, Kind: KindOther, Owner: c.stack.Owner,
				Label: c.label + "/user/" + u, Probes: []Probe{{Action: "rds-db:connect"}}})
		}
	}
}

type dbCluster struct {
	stack      offline.Stack
	label      string
	resourceID string
}

func (m *Model) roleByName(account, name string) *Principal {
	for _, p := range m.principals {
		if p.roleName == name && p.Account == account {
			return p
		}
	}
	return nil
}

func (m *Model) bucketByName(name string) *Resource {
	for _, r := range m.resources {
		if r.Kind == KindBucket && r.name == name {
			return r
		}
	}
	return nil
}

func (m *Model) queueByURL(url string) *Resource {
	for _, r := range m.resources {
		if r.Kind == KindQueue && r.name == url {
			return r
		}
	}
	return nil
}

// keyARN resolves a key reference as the service does: an ARN stays; a
// bare key id or alias resolves in the resource's own account and region.
func keyARN(ref string, s offline.Stack) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref
	}
	return fmt.Sprintf("arn:%s:kms:%s:%s:%s", s.Partition, s.Region, s.Account, func() string {
		if strings.HasPrefix(ref, "alias/") {
			return ref
		}
		return "key/" + ref
	}())
}

func parsePolicy(v any) (policy.Document, error) {
	s, ok := v.(string)
	if !ok || s == "" {
		return policy.Document{}, fmt.Errorf("no policy document")
	}
	return policy.Parse(s)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
