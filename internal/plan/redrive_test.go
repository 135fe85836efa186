package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/props"
)

// Each cell's queue dead-letters to its own DLQ: same account, Region and
// type, admitted by the DLQ's redrive allow policy. A DLQ that would not
// take the queue's failed messages is a finding the apply path refuses.
func TestTheQueueRedrivesToItsDeadLetterQueue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, rep *Report)
		want   string // "" for no finding
	}{
		{"as rendered", func(*testing.T, *Report) {}, ""},
		{"denyAll", func(t *testing.T, rep *Report) {
			allow := recordedNamed(t, rep, "cell-a", "cell-a-dlq-redrive-allow")
			allow.Inputs["redriveAllowPolicy"] = resource.NewStringProperty(`{"redrivePermission":"denyAll"}`)
		}, "cell-a/queue's dead-letter queue"},
		{"byQueue naming another queue", func(t *testing.T, rep *Report) {
			other, _ := props.Plain(recordedNamed(t, rep, "cell-b", "cell-b-queue").Outputs)["arn"].(string)
			allow := recordedNamed(t, rep, "cell-a", "cell-a-dlq-redrive-allow")
			allow.Inputs["redriveAllowPolicy"] = resource.NewStringProperty(`{"redrivePermission":"byQueue","sourceQueueArns":["` + other + `"]}`)
		}, "admits only " + "arn:aws:sqs:"},
		{"a FIFO dead-letter queue", func(t *testing.T, rep *Report) {
			recordedNamed(t, rep, "cell-a", "cell-a-dlq").Inputs["fifoQueue"] = resource.NewBoolProperty(true)
		}, "is FIFO, the queue standard"},
		{"a dead-letter queue under a customer managed key", func(t *testing.T, rep *Report) {
			recordedNamed(t, rep, "cell-a", "cell-a-dlq").Inputs["kmsMasterKeyId"] = resource.NewStringProperty("1234abcd-12ab-34cd-56ef-1234567890ab")
		}, "is encrypted with the customer managed key arn:aws:kms:us-east-1:"},
		{"a dead-letter queue under aws/sqs", func(t *testing.T, rep *Report) {
			recordedNamed(t, rep, "cell-a", "cell-a-dlq").Inputs["kmsMasterKeyId"] = resource.NewStringProperty("alias/aws/sqs")
		}, ""},
		{"another cell's DLQ in another Region", func(t *testing.T, rep *Report) {
			dlq, _ := props.Plain(recordedNamed(t, rep, "cell-d", "cell-d-dlq").Outputs)["arn"].(string)
			recordedNamed(t, rep, "cell-a", "cell-a-queue").Inputs["redrivePolicy"] =
				resource.NewStringProperty(`{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":5}`)
		}, "is in us-west-2, the queue in us-east-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problemCase(t, tc.change, func(r access.Report) []string { return r.Redrives }, "redrive", tc.want)
		})
	}
}

// problemCase renders the demo fleet, changes the render, and checks the
// report's problems of one kind (list: its redrives, its edge findings):
// one contains want, or there are none when want is "", and the apply
// path's gate refuses the render (exit 2, naming it) exactly then.
func problemCase(t *testing.T, change func(*testing.T, *Report), list func(access.Report) []string, what, want string) {
	t.Helper()
	f := fleettest.Load(t, fleettest.Demo(t))
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	change(t, rep)
	paths, _, err := rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(list(paths), "\n")
	if (want == "") != (got == "") || !strings.Contains(got, want) {
		t.Fatalf("%s findings %q, want one containing %q", what, got, want)
	}
	err = RefuseBrokenPaths(rep, f)
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), want) {
		t.Fatalf("the apply path's gate: %v", err)
	}
}
