package store_test

import (
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
)

// The router's one CloudFront origin reaches every cell its edge function
// routes to: OriginVerify follows the function's config.json, with the
// header of the origin the default behavior targets, not origin ids.
func TestEdgeOriginVerifyFollowsTheFunctionsCells(t *testing.T) {
	dir := t.TempDir()
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "router", Now: simtest.NewClock().Now, DependencyTimeout: 300 * time.Millisecond}, "us-east-1")
	role := h.Create("aws:iam/role:Role", "edge-role", simtest.PM("assumeRolePolicy", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["edgelambda.amazonaws.com","lambda.amazonaws.com"]},"Action":"sts:AssumeRole"}]}`))
	code, err := simtest.NewArchive(map[string]string{"index.js": "exports.handler=async(e)=>e.Records[0].cf.request",
		"config.json": `{"format": 1, "version": 3, "origins": {"cell-a": "cell-a.cells.example.com", "cell-b": "cell-b.cells.example.com", "cell-c": "cell-c.cells.example.com"}}`})
	if err != nil {
		t.Fatal(err)
	}
	fnIn := simtest.PM("runtime", "nodejs24.x", "handler", "index.handler", "role", simtest.S(role.Out, "arn"), "publish", true, "timeout", 5)
	fnIn["code"] = code
	fn := h.Create(simtest.TFn, "edge", fnIn)
	in := simtest.DistInputs(simtest.S(fn.Out, "qualifiedArn"))
	in["origins"] = resource.NewPropertyValue([]any{map[string]any{"originId": "cells", "domainName": "cell-a.cells.example.com",
		"customOriginConfig": map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}},
		"customHeaders":      []any{map[string]any{"name": "X-Origin-Verify", "value": "v1"}}}})
	in["defaultCacheBehavior"].ObjectValue()["targetOriginId"] = resource.NewStringProperty("cells")
	h.Create(simtest.TDistribution, "cdn", in)

	v, err := h.Cloud.OriginVerify("X-Origin-Verify")
	if err != nil {
		t.Fatal(err)
	}
	want := h.Cloud.Fingerprint("v1")
	for _, c := range []string{"cell-a", "cell-b", "cell-c"} {
		if v.Sends[c] != want {
			t.Errorf("CloudFront sends %s %q, want the fleet origin's header %q (the function routes to it)", c, v.Sends[c], want)
		}
	}
	if _, ok := v.Sends["cells"]; ok || len(v.Sends) != 3 {
		t.Errorf("Sends %v: want exactly the function's three cells, not origin ids", v.Sends)
	}
}
