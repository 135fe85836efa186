package cellmodule

import (
	"reflect"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/offline"
)

// While `cellctl secret rotate` runs, the cell's ALB rule accepts the
// current and the next origin-verify value — both secrets — in the one
// X-Origin-Verify condition; the modelled AWS rules (3 values per
// condition, 5 per rule) accept it.
func TestRuleAcceptsTheNextOriginSecretDuringARotation(t *testing.T) {
	s := testCells()[0]
	const next = "the-next-origin-verify-value-0123456789abcdef"
	rec, _, err := offline.Run(offline.Options{Project: "cells", Stack: s.ID}, newTestModel(s.Region), func(ctx *pulumi.Context) error {
		_, err := NewCell(ctx, s.ID, &CellArgs{Spec: s,
			OriginVerifySecret: pulumi.ToSecret(pulumi.String(testSecret)).(pulumi.StringOutput),
			OriginVerifyNext:   pulumi.ToSecret(pulumi.String(next)).(pulumi.StringOutput)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &cellRun{spec: s, rec: rec}
	conds, _ := in(r.one(t, "forward-own-cell"))["conditions"].([]any)
	var got any
	for _, c := range conds {
		if str(get(c, "httpHeader", "httpHeaderName")) == OriginVerifyHeader {
			got = get(c, "httpHeader", "values")
		}
	}
	want := []any{secretValue{testSecret}, secretValue{next}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("X-Origin-Verify values %v, want the current and the next value as secrets", got)
	}
	for _, res := range rec.Resources() {
		if containsString(in(res), next) {
			t.Errorf("%s holds the next value in plaintext", res.Name)
		}
	}
}
