package engine

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

func TestChangeWarningMarksLossesOnly(t *testing.T) {
	meta := func(op apitype.OpType, typ string, protect bool) apitype.StepEventMetadata {
		return apitype.StepEventMetadata{Op: op, Type: typ, Old: &apitype.StepEventStateMetadata{Protect: protect}}
	}
	for _, tc := range []struct {
		m    apitype.StepEventMetadata
		want string
	}{
		{meta(apitype.OpReplace, "aws:rds/cluster:Cluster", true), "replaces a protected resource — the database and its data"},
		{meta(apitype.OpDelete, "aws:ec2/eip:Eip", false), "deletes the Elastic IP: the cell's egress address changes"},
		{meta(apitype.OpCreateReplacement, "aws:ec2/vpc:Vpc", false), "replaces the cell's network"},
		{meta(apitype.OpReplace, "aws:cloudwatch/metricAlarm:MetricAlarm", true), "replaces a protected resource; pulumi refuses it"},
		{meta(apitype.OpReplace, "aws:cloudwatch/metricAlarm:MetricAlarm", false), ""},
		{meta(apitype.OpUpdate, "aws:rds/cluster:Cluster", true), ""},
		{meta(apitype.OpCreate, "aws:ec2/eip:Eip", false), ""},
	} {
		got := changeWarning(tc.m)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s protect=%v: %q, want %q", tc.m.Op, tc.m.Type, tc.m.Old.Protect, got, tc.want)
		}
	}
	// A create has no old state.
	if got := changeWarning(apitype.StepEventMetadata{Op: apitype.OpCreate, Type: "aws:rds/cluster:Cluster"}); got != "" {
		t.Errorf("create: %q", got)
	}
}
