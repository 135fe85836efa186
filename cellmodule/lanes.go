package cellmodule

import (
	"encoding/json"
	"fmt"
	iampolicy "github.com/cellctl/cellctl/internal/policy"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Per-lane queues (cells:laneQueues: true): one SQS queue per lane of the
// cell's shuffle sharding (router.Lanes), so a noisy tenant floods only
// its own r lanes. Every lane queue
//   - is named <id>-lane-<k> (k = 0…M-1, the numbers X-Cell-Lanes carries);
//   - dead-letters into the cell's one DLQ after the same receive count;
//   - has SQS-managed encryption and a TLS-only policy like the cell's
//     queue;
//   - grants exactly this cell's task role, in its own queue policy.
//
// Why the grant is on the queue, not in the task role's policy: an IAM
// role's inline policies share 10,240 characters, which about 130 lane
// ARNs fill; and a wildcard such as <id>-lane-* would also match the
// lanes of a cell whose id is <id>-lane. Within one account a queue
// policy naming the role is enough (IAM policy evaluation: an allow in
// the resource-based or the identity-based policy grants), so the role
// is allowed exactly these M queues whatever M is.

// LaneEnv is the task environment variable with the lane queue URLs,
// comma-separated in lane order: entry k is lane k's queue.
const LaneEnv = "LANE_QUEUE_URLS"

// maxRedriveSources is how many source queues a redrive allow policy
// may list by ARN; beyond it SQS only offers allowAll (see
// internal/awsmodel, SetQueueAttributes RedriveAllowPolicy).
const maxRedriveSources = 10

// laneLogicalName is lane k's queue's logical (Pulumi) name; its SQS name
// is awsname.Cell.LaneQueue, which carries the fleet's prefix.
func laneLogicalName(cellID string, k int) string { return cellID + "-lane-" + strconv.Itoa(k) }

// laneQueueArns are the ARNs the lane queues will have. They are known
// from their names before the queues exist, so the DLQ can admit the
// lanes before any lane names it as dead-letter target (SQS refuses a
// redrive policy the DLQ's allow policy does not admit).
func (b *builder) laneQueueArns() []string {
	if !b.spec.LaneQueues {
		return nil
	}
	arns := make([]string, b.spec.Lanes)
	for k := range arns {
		arns[k] = fmt.Sprintf("arn:%s:sqs:%s:%s:%s", b.partition, b.spec.Region, b.account, b.spec.Names().LaneQueue(k))
	}
	return arns
}

// redriveAllowPolicy admits exactly sources when SQS can list them (at
// most 10); more sources need allowAll, the only other setting that lets
// them in. Then the isolation audit is what keeps other cells' queues
// from naming this DLQ.
func redriveAllowPolicy(sources []string) (string, error) {
	if len(sources) > maxRedriveSources {
		j, err := json.Marshal(struct {
			RedrivePermission string `json:"redrivePermission"`
		}{"allowAll"})
		return string(j), err
	}
	j, err := json.Marshal(struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns"`
	}{"byQueue", sources})
	return string(j), err
}

// laneQueues creates the M lane queues after the DLQ admits them.
func (b *builder) laneQueues(redrive pulumi.StringOutput, admitted pulumi.Resource) error {
	ctx, s, c := b.ctx, b.spec, b.cell
	if !s.LaneQueues {
		return nil
	}
	for k := 0; k < s.Lanes; k++ {
		name := laneLogicalName(s.ID, k)
		tags := b.tags(name)
		tags["lane"] = pulumi.String(strconv.Itoa(k))
		q, err := sqs.NewQueue(ctx, name, &sqs.QueueArgs{
			// Named, not autonamed: the name is what laneQueueArns computes
			// before the queue exists, and what operators look for.
			Name:                     pulumi.String(s.Names().LaneQueue(k)),
			SqsManagedSseEnabled:     pulumi.Bool(true),
			VisibilityTimeoutSeconds: pulumi.Int(s.QueueVisibilityTimeoutSeconds),
			RedrivePolicy:            redrive,
			Tags:                     tags,
		}, b.opts(pulumi.Protect(!s.Releasing), pulumi.DependsOn([]pulumi.Resource{admitted}))...)
		if err != nil {
			return err
		}
		c.LaneQueues = append(c.LaneQueues, q)
	}
	return nil
}

// laneQueuePolicy is a lane's policy: TLS only, and this cell's task role
// may send, receive, delete and change visibility.
func laneQueuePolicy(queueArn, taskRoleArn string) PolicyDocument {
	doc := tlsOnlyQueuePolicy(queueArn)
	doc.Statement = append(doc.Statement, PolicyStatement{
		Sid:       "CellTaskRole",
		Effect:    "Allow",
		Principal: iampolicy.AWSPrincipals(taskRoleArn),
		Action: []string{
			"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage",
			"sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
		},
		Resource: []string{queueArn},
	})
	return doc
}

// lanePolicies attaches each lane's policy once the task role exists.
func (b *builder) lanePolicies() error {
	ctx, c := b.ctx, b.cell
	for k, q := range c.LaneQueues {
		doc := pulumi.All(q.Arn, c.TaskRole.Arn).ApplyT(func(v []any) (string, error) {
			return laneQueuePolicy(v[0].(string), v[1].(string)).JSON()
		}).(pulumi.StringOutput)
		p, err := sqs.NewQueuePolicy(ctx, laneLogicalName(b.spec.ID, k)+"-policy", &sqs.QueuePolicyArgs{
			QueueUrl: q.Url,
			Policy:   doc,
		}, b.opts()...)
		if err != nil {
			return err
		}
		c.LaneQueuePolicies = append(c.LaneQueuePolicies, p)
	}
	return nil
}

// laneQueueURLs is every lane queue's URL in lane order, comma-separated
// ("" without lane queues): the value of LaneEnv.
func (b *builder) laneQueueURLs() pulumi.StringOutput {
	urls := make([]any, len(b.cell.LaneQueues))
	for k, q := range b.cell.LaneQueues {
		urls[k] = q.Url
	}
	return pulumi.All(urls...).ApplyT(func(v []any) string {
		s := make([]string, len(v))
		for i, u := range v {
			s[i] = u.(string)
		}
		return strings.Join(s, ",")
	}).(pulumi.StringOutput)
}

// laneOutputs are the stack outputs of the lanes: the layout always (the
// edge and `cellctl lanes` read it from config, operators from here), the
// queue URLs when the cell has lane queues.
func (b *builder) laneOutputs() {
	s, c := b.spec, b.cell
	c.Outputs["lanes"] = pulumi.Int(s.Lanes)
	c.Outputs["laneShardSize"] = pulumi.Int(s.LaneShardSize)
	if len(c.LaneQueues) == 0 {
		return
	}
	urls := pulumi.StringArray{}
	for _, q := range c.LaneQueues {
		urls = append(urls, q.Url)
	}
	c.Outputs["laneQueueUrls"] = urls
}
