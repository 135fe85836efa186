package canary

import (
	"strings"
	"testing"
)

func TestValidateRefusesWhatCloudFrontRefuses(t *testing.T) {
	p := "arn:aws:lambda:us-east-1:123456789012:function:router-edge:3"
	cases := []struct {
		t    Traffic
		want string // "" = valid
	}{
		{Traffic{Phase: Stable}, ""},
		{Traffic{Phase: Header, PrimaryFunctionArn: p, HeaderValue: "abc"}, ""},
		{Traffic{Phase: Header, HeaderValue: "abc"}, "primary's current function version"},
		{Traffic{Phase: Header, PrimaryFunctionArn: p}, "header value"},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0.15}, ""},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0.16}, "at most 0.15"},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0}, "more than 0"},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0.05, IdleTTL: 300, MaximumTTL: 600}, ""},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0.05, IdleTTL: 299, MaximumTTL: 600}, "allowed 300–3600"},
		{Traffic{Phase: Weight, PrimaryFunctionArn: p, Weight: 0.05, IdleTTL: 900, MaximumTTL: 600}, "exceeds the maximum"},
		{Traffic{Phase: "blue"}, "unknown phase"},
	}
	for _, c := range cases {
		err := c.t.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.t, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.t, err, c.want)
		}
	}
	if !strings.HasPrefix(DefaultHeader, HeaderPrefix) {
		t.Fatalf("DefaultHeader %q lacks the %q prefix CloudFront requires", DefaultHeader, HeaderPrefix)
	}
}
