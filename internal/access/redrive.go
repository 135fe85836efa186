package access

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A queue's dead-letter settings, as the render declares them. SQS moves
// a message that was received maxReceiveCount times to the queue its
// RedrivePolicy names, and only when that queue is "the same type of queue
// (FIFO or standard)" and in "the same AWS account and Region as the
// source queue" (Amazon SQS Developer Guide, "Using dead-letter queues in
// Amazon SQS",
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html;
// the SDK developer guides' "Using Dead Letter Queues in Amazon SQS"
// state the restrictions in these words), and the dead-letter queue's
// RedriveAllowPolicy admits it: allowAll ("any source queues in this AWS
// account in the same Region", the default without a policy), byQueue
// (only the sourceQueueArns) or denyAll (none) ("RedriveAllowPolicy",
// CreateQueue, Amazon SQS API Reference).
type redrive struct {
	source *Resource
	// target is the deadLetterTargetArn.
	target string
}

// queueSettings are the dead-letter settings of one queue.
type queueSettings struct {
	fifo bool
	// allow is the queue's redrive allow policy: nil without one.
	allow *redriveAllow
}

type redriveAllow struct {
	Permission string   `json:"redrivePermission"`
	Sources    []string `json:"sourceQueueArns"`
	// from names where the policy was declared.
	from string
}

// readRedrivePolicy records a queue's RedrivePolicy ("" is none).
func (m *Model) readRedrivePolicy(q *Resource, raw string) error {
	if raw == "" {
		return nil
	}
	var rp struct {
		Target string `json:"deadLetterTargetArn"`
	}
	if err := json.Unmarshal([]byte(raw), &rp); err != nil {
		return fmt.Errorf("not a JSON redrive policy: %w", err)
	}
	if rp.Target == "" {
		return fmt.Errorf("names no deadLetterTargetArn")
	}
	m.redrives = append(m.redrives, redrive{source: q, target: rp.Target})
	return nil
}

// readRedriveAllowPolicy records a queue's redrive allow policy (its own
// input, or a RedriveAllowPolicy resource's; "" is none).
func (m *Model) readRedriveAllowPolicy(q *Resource, raw, from string) error {
	if raw == "" {
		return nil
	}
	var a redriveAllow
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return fmt.Errorf("not a JSON redrive allow policy: %w", err)
	}
	a.from = from
	s := m.queueSettings(q)
	s.allow = &a
	return nil
}

func (m *Model) queueSettings(q *Resource) *queueSettings {
	if m.queues == nil {
		m.queues = map[*Resource]*queueSettings{}
	}
	if m.queues[q] == nil {
		m.queues[q] = &queueSettings{}
	}
	return m.queues[q]
}

// Redrives are the queues whose dead-letter queue would not take their
// failed messages, each with why: the target is not in the render, is in
// another account or region, is of the other type, or its redrive allow
// policy does not admit the source. Such a queue keeps redelivering a
// message it cannot process until the message expires.
func (m *Model) Redrives() []string {
	var out []string
	for _, rd := range m.redrives {
		src := rd.source
		bad := func(why string) {
			out = append(out, fmt.Sprintf("%s's dead-letter queue %s would not take its failed messages: %s", src.Label, rd.target, why))
		}
		dlq := m.resources[rd.target]
		if dlq == nil || dlq.Kind != KindQueue {
			a, ok := ParseARN(rd.target)
			switch {
			case ok && a.Account != src.Account:
				bad(fmt.Sprintf("it is in account %s, the queue in %s (a dead-letter queue must be in the source queue's account and Region)", a.Account, src.Account))
			case ok && a.Region != src.Region:
				bad(fmt.Sprintf("it is in %s, the queue in %s (a dead-letter queue must be in the source queue's account and Region)", a.Region, src.Region))
			default:
				bad("it is not a queue of the render")
			}
			continue
		}
		switch {
		case dlq.Account != src.Account:
			bad(fmt.Sprintf("%s is in account %s, the queue in %s (a dead-letter queue must be in the source queue's account and Region)", dlq.Label, dlq.Account, src.Account))
			continue
		case dlq.Region != src.Region:
			bad(fmt.Sprintf("%s is in %s, the queue in %s (a dead-letter queue must be in the source queue's account and Region)", dlq.Label, dlq.Region, src.Region))
			continue
		}
		ss, ds := m.queueSettings(src), m.queueSettings(dlq)
		if ss.fifo != ds.fifo {
			bad(fmt.Sprintf("%s is %s, the queue %s (a dead-letter queue must be of the source queue's type)", dlq.Label, queueType(ds.fifo), queueType(ss.fifo)))
			continue
		}
		if customerManaged(dlq.Key) {
			// SQS moves the message itself, under the dead-letter queue's
			// key; no AWS document states what that key's policy must
			// allow for the move, so cellctl cannot decide that it works,
			// and an undecided path is a finding, never a pass.
			bad(fmt.Sprintf("%s is encrypted with the customer managed key %s, and no AWS document states what SQS needs from a key to move a message into a queue, so cellctl cannot decide that the move works; give the dead-letter queue SSE-SQS or the AWS managed key alias/aws/sqs", dlq.Label, dlq.Key))
			continue
		}
		if a := ds.allow; a != nil {
			switch {
			case strings.EqualFold(a.Permission, "denyAll"):
				bad(fmt.Sprintf("its redrive allow policy (%s) is denyAll", a.from))
			case strings.EqualFold(a.Permission, "byQueue") && !slices.Contains(a.Sources, src.ARN):
				bad(fmt.Sprintf("its redrive allow policy (%s) admits only %s", a.from, strings.Join(a.Sources, ", ")))
			case a.Permission != "" && !strings.EqualFold(a.Permission, "allowAll") && !strings.EqualFold(a.Permission, "byQueue"):
				bad(fmt.Sprintf("its redrive allow policy (%s) has redrivePermission %q, which SQS does not define", a.from, a.Permission))
			}
		}
	}
	return out
}

// customerManaged reports whether a queue's key is one the account
// manages (not SSE-SQS, which names no key, nor the AWS managed aws/sqs).
func customerManaged(key string) bool {
	return key != "" && awsManagedService(key) == "" && !strings.HasSuffix(key, ":alias/aws/sqs")
}

func queueType(fifo bool) string {
	if fifo {
		return "FIFO"
	}
	return "standard"
}
