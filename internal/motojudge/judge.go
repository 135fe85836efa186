package motojudge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/elasticache"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

// Outcome is moto's answer to the create call(s) of one resource.
type Outcome struct {
	// Judged is false when no call was made: the type is not translated
	// (NotJudged says why) or moto could not answer (it crashed, or does
	// not speak the protocol), which is no verdict either way.
	Judged    bool
	NotJudged string
	// Code and Message are moto's refusal ("" when it accepted).
	Code, Message string
	// Call is the API operation that answered (the refusing one).
	Call string
	// ID and ARN are what moto assigned on acceptance.
	ID, ARN string
}

// Refused reports a judged refusal.
func (o Outcome) Refused() bool { return o.Judged && o.Code != "" }

func (o Outcome) String() string {
	switch {
	case !o.Judged:
		return "not judged (" + o.NotJudged + ")"
	case o.Code != "":
		return fmt.Sprintf("refused by %s: %s: %s", o.Call, o.Code, o.Message)
	}
	return "accepted"
}

// Judge sends resources' create calls to one moto, remembering which
// moto id stands for which rendered id so later resources reference
// moto's own (a subnet's vpcId is the VPC moto created).
type Judge struct {
	url  string
	ids  map[string]string
	arns []string
	cfgs map[string]aws.Config
}

// NewJudge starts a judge on s. Use one judge per moto state (after
// Reset, a new one).
func (s *Server) NewJudge() *Judge {
	return &Judge{url: s.URL, ids: map[string]string{}, cfgs: map[string]aws.Config{}}
}

// DefaultAccount is moto's own account, where credentials moto never
// issued act.
const DefaultAccount = "123456789012"

// cfg is the SDK configuration for account and region: moto's default
// account with any static keys; another account through moto's STS
// (AssumeRole issues keys moto then places in the role's account, as
// cellctl's deploy role does for a cell in another account).
func (j *Judge) cfg(ctx context.Context, account, region string) (aws.Config, error) {
	key := account + "/" + region
	if c, ok := j.cfgs[key]; ok {
		return c, nil
	}
	c := aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		BaseEndpoint: aws.String(j.url),
		// A refusal is the answer; retrying it only costs time.
		RetryMaxAttempts: 1,
		HTTPClient:       http.DefaultClient,
	}
	if account != "" && account != DefaultAccount {
		out, err := sts.NewFromConfig(c).AssumeRole(ctx, &sts.AssumeRoleInput{
			RoleArn:         aws.String("arn:aws:iam::" + account + ":role/motojudge"),
			RoleSessionName: aws.String("motojudge")})
		if err != nil {
			return aws.Config{}, fmt.Errorf("assuming a role in %s: %w", account, err)
		}
		cr := out.Credentials
		c.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))
		// A judge that silently created a cell's resources in the
		// default account would judge a fleet that is not the one
		// rendered.
		id, err := sts.NewFromConfig(c).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil || aws.ToString(id.Account) != account {
			return aws.Config{}, fmt.Errorf("moto did not place the assumed role's keys in %s (%v)", account, err)
		}
	}
	j.cfgs[key] = c
	return c, nil
}

// Remember records that the rendered id (or ARN) stands for moto's.
func (j *Judge) Remember(rendered, moto string) {
	if rendered == "" || moto == "" || rendered == moto {
		return
	}
	if _, seen := j.ids[rendered]; !seen && strings.HasPrefix(rendered, "arn:") {
		j.arns = append(j.arns, rendered)
		// Longest first: an ARN that prefixes another must not replace
		// a piece of it.
		sort.Slice(j.arns, func(a, b int) bool { return len(j.arns[a]) > len(j.arns[b]) })
	}
	j.ids[rendered] = moto
}

// NotTranslated says why a type is not sent, for the test's listing.
func NotTranslated(typ string) string {
	if why, ok := untranslated[typ]; ok {
		return why
	}
	return "no translation written"
}

// untranslated are the types the judge knowingly does not send, with why.
var untranslated = map[string]string{
	"aws:cloudwatch/metricAlarm:MetricAlarm":                               "the Go SDK speaks CBOR to CloudWatch, which moto cannot decode",
	"aws:cloudwatch/dashboard:Dashboard":                                   "the Go SDK speaks CBOR to CloudWatch, which moto cannot decode",
	"aws:ecs/service:Service":                                              "moto 5.2.1 crashes on some ECS request shapes (RunTask); not translated yet",
	"aws:ecs/taskDefinition:TaskDefinition":                                "moto 5.2.1 crashes on some ECS request shapes (RunTask); not translated yet",
	"aws:lambda/function:Function":                                         "needs the function's zip; no Lambda client in go.mod",
	"aws:acm/certificateValidation:CertificateValidation":                  "a waiter, not a create call",
	"aws:cloudfront/distribution:Distribution":                             "no CloudFront client in go.mod",
	"aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy": "no CloudFront client in go.mod",
	"aws:elasticache/userGroup:UserGroup":                                  "moto 5.2.1 does not implement CreateUserGroup (it answers 500)",
	"aws:route53/record:Record":                                            "the fleet's hosted zone is not in moto",
}

// Create sends typ's create call(s) for inputs (outputs: the rendered
// state, for what the provider computes first, such as an autonamed
// name) in region. renderedID and renderedARN, when set, are remembered
// as standing for moto's id and ARN.
func (j *Judge) Create(ctx context.Context, region, typ string, inputs, outputs resource.PropertyMap, renderedID, renderedARN string) Outcome {
	return j.CreateIn(ctx, "", region, typ, inputs, outputs, renderedID, renderedARN)
}

// CreateIn is Create in account ("": moto's default account).
func (j *Judge) CreateIn(ctx context.Context, account, region, typ string, inputs, outputs resource.PropertyMap, renderedID, renderedARN string) Outcome {
	create, ok := creators[typ]
	if !ok {
		return Outcome{NotJudged: NotTranslated(typ)}
	}
	cfg, err := j.cfg(ctx, account, region)
	if err != nil {
		return Outcome{NotJudged: err.Error()}
	}
	p := props{in: substituteMap(inputs, j.ids, j.arns), out: outputs}
	c := &calls{ctx: ctx, cfg: cfg, region: region}
	id, arn, err := create(c, p)
	if err != nil {
		return outcomeOf(c.op, err)
	}
	j.Remember(renderedID, id)
	j.Remember(renderedARN, arn)
	return Outcome{Judged: true, ID: id, ARN: arn}
}

// awsProviderType is the aws provider's resource type (awsmodel's
// ProviderType, a layer above this test support).
const awsProviderType = "pulumi:providers:aws"

// CreateStack walks one rendered stack's resources in the order its
// program made them (a subnet after its VPC) and hands visit each custom
// AWS resource with a create function bound to where it lives: account,
// and the region of the provider that made it (an explicit provider's,
// such as the edge function's us-east-1, else region). visit decides what
// to send (nothing, the rendered inputs, or changed ones) and reads the
// outcome.
func (j *Judge) CreateStack(ctx context.Context, account, region string, recs []*offline.Resource,
	visit func(r *offline.Resource, create func(inputs resource.PropertyMap) Outcome)) {
	regions := map[string]string{}
	for _, r := range recs {
		if r.Type == awsProviderType {
			if v, ok := r.Inputs["region"]; ok && v.IsString() {
				regions[r.URN] = v.StringValue()
			}
		}
	}
	for _, r := range recs {
		if !r.Custom || !strings.HasPrefix(r.Type, "aws:") {
			continue
		}
		where := region
		if i := strings.LastIndex(r.Provider, "::"); i >= 0 && regions[r.Provider[:i]] != "" {
			where = regions[r.Provider[:i]]
		}
		arn := ""
		if v, ok := r.Outputs["arn"]; ok && v.IsString() {
			arn = v.StringValue()
		}
		visit(r, func(inputs resource.PropertyMap) Outcome {
			return j.CreateIn(ctx, account, where, r.Type, inputs, r.Outputs, r.ID, arn)
		})
	}
}

func outcomeOf(op string, err error) Outcome {
	var re *smithyhttp.ResponseError
	var se *serverError
	if errors.As(err, &se) || errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return Outcome{NotJudged: fmt.Sprintf("moto failed on %s: %v", op, err)}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() != "" {
		return Outcome{Judged: true, Call: op, Code: ae.ErrorCode(), Message: ae.ErrorMessage()}
	}
	return Outcome{NotJudged: fmt.Sprintf("moto gave no AWS answer to %s: %v", op, err)}
}

// calls carries one resource's clients; op names the call in flight.
type calls struct {
	ctx    context.Context
	cfg    aws.Config
	region string
	op     string
}

func (c *calls) ec2() *ec2.Client   { return ec2.NewFromConfig(c.cfg) }
func (c *calls) iam() *iam.Client   { return iam.NewFromConfig(c.cfg) }
func (c *calls) kms() *kms.Client   { return kms.NewFromConfig(c.cfg) }
func (c *calls) rds() *rds.Client   { return rds.NewFromConfig(c.cfg) }
func (c *calls) elb() *elbv2.Client { return elbv2.NewFromConfig(c.cfg) }
func (c *calls) ecs() *ecs.Client   { return ecs.NewFromConfig(c.cfg) }
func (c *calls) logs() *cloudwatchlogs.Client {
	return cloudwatchlogs.NewFromConfig(c.cfg)
}
func (c *calls) cache() *elasticache.Client { return elasticache.NewFromConfig(c.cfg) }
func (c *calls) s3() *s3.Client {
	return s3.NewFromConfig(c.cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

// creator sends one resource's calls and returns moto's id and ARN.
type creator func(c *calls, p props) (id, arn string, err error)
