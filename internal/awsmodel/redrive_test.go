package awsmodel

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// A redrive allow policy lists at most 10 source queues, only with
// byQueue, and byQueue needs them (SQS SetQueueAttributes).
func TestRedriveAllowPolicySources(t *testing.T) {
	sources := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("arn:aws:sqs:us-east-1:123456789012:cell-a-lane-%d", i)
		}
		return out
	}
	policy := func(perm string, arns []string) string {
		m := map[string]any{"redrivePermission": perm}
		if arns != nil {
			m["sourceQueueArns"] = arns
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct {
		policy string
		fail   string
	}{
		{policy("byQueue", sources(1)), ""},
		{policy("byQueue", sources(10)), ""},
		{policy("allowAll", nil), ""},
		{policy("denyAll", nil), ""},
		{policy("byQueue", sources(11)), "at most 10"},
		{policy("allowAll", sources(2)), "only when redrivePermission is byQueue"},
		{policy("byQueue", nil), "requires sourceQueueArns"},
		{policy("byQueue", []string{}), "requires sourceQueueArns"},
	}
	for _, c := range cases {
		for _, typ := range []string{tRedriveAP, tQueue} {
			news := map[string]any{"redriveAllowPolicy": c.policy}
			if typ == tRedriveAP {
				news["queueUrl"] = "https://sqs.us-east-1.amazonaws.com/123456789012/cell-a-dlq"
			}
			_, failures := Check(CheckRequest{Type: typ, Name: "x", News: resource.NewPropertyMapFromMap(news), RandomSeed: []byte("x")})
			var got []string
			for _, f := range failures {
				got = append(got, f.Reason)
			}
			msg := strings.Join(got, "; ")
			if c.fail == "" && len(failures) > 0 || c.fail != "" && !strings.Contains(msg, c.fail) {
				t.Errorf("%s with %s: failures %q, want %q", typ, c.policy, msg, c.fail)
			}
		}
	}
}
