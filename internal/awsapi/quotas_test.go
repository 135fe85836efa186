package awsapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// splitQuotas splits the documented ListServiceQuotas body into one page
// per quota (same members), adding NextToken to all but the last.
func splitQuotas(t *testing.T) [][]byte {
	var doc struct{ Quotas []json.RawMessage }
	if err := json.Unmarshal(documented(t, "servicequotas/list-service-quotas.json"), &doc); err != nil {
		t.Fatal(err)
	}
	var pages [][]byte
	for i, q := range doc.Quotas {
		page := map[string]any{"Quotas": []json.RawMessage{q}}
		if i < len(doc.Quotas)-1 {
			page["NextToken"] = "after-" + string(rune('0'+i))
		}
		b, _ := json.Marshal(page)
		pages = append(pages, b)
	}
	return pages
}

func jsonError(typ, msg string) reply {
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	return reply{status: 400, body: b}
}

func TestQuotasListFollowsNextTokenAndRetriesThrottling(t *testing.T) {
	pages := splitQuotas(t)
	throttled := jsonError("TooManyRequestsException", "Rate exceeded")
	throttled.op = "ListServiceQuotas"
	tg, r := start(t,
		reply{op: "ListServiceQuotas", check: func(in any) {
			if field(in, "ServiceCode") != "cloudformation" || field(in, "NextToken") != nil {
				t.Errorf("first request = %v", in)
			}
		}, body: pages[0]},
		throttled,
		reply{op: "ListServiceQuotas", check: func(in any) {
			if field(in, "NextToken") != "after-0" {
				t.Errorf("second request = %v", in)
			}
		}, body: pages[1]},
	)
	q, err := NewQuotas(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.List(ctx, "cloudformation")
	if err != nil {
		t.Fatal(err)
	}
	r.done()
	want := []Quota{
		{ServiceCode: "cloudformation", QuotaCode: "L-87D14FB7", Name: "Output count in CloudFormation template", Value: 60, Unit: "None"},
		{ServiceCode: "cloudformation", QuotaCode: "L-0485CB21", Name: "Stack count", Value: 200, Unit: "None", Adjustable: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("quotas =\n%+v, want\n%+v", got, want)
	}
}

func TestQuotaGetFallsBackToTheDefault(t *testing.T) {
	body := documented(t, "servicequotas/get-service-quota.json")
	tg, r := start(t, reply{op: "GetServiceQuota", body: body})
	q, _ := NewQuotas(ctx, tg)
	got, err := q.Get(ctx, "cloudformation", "L-0485CB21")
	r.done()
	if err != nil || got.Value != 200 || got.Default || got.Name != "Stack count" {
		t.Fatalf("applied quota = %+v, %v", got, err)
	}

	// No applied value: GetServiceQuota answers NoSuchResourceException
	// and the default (same Quota shape) is read instead.
	missing := jsonError("NoSuchResourceException", "The request failed because the specified resource does not exist.")
	missing.op = "GetServiceQuota"
	tg, r = start(t, missing, reply{op: "GetAWSDefaultServiceQuota", check: func(in any) {
		if field(in, "QuotaCode") != "L-0485CB21" {
			t.Errorf("default request = %v", in)
		}
	}, body: body})
	q, _ = NewQuotas(ctx, tg)
	got, err = q.Get(ctx, "cloudformation", "L-0485CB21")
	r.done()
	if err != nil || got.Value != 200 || !got.Default {
		t.Fatalf("default quota = %+v, %v", got, err)
	}

	// Any other error is returned, never replaced by the default.
	denied := jsonError("AccessDeniedException", "You do not have sufficient access to perform this action.")
	denied.op = "GetServiceQuota"
	tg, _ = start(t, denied)
	q, _ = NewQuotas(ctx, tg)
	if _, err := q.Get(ctx, "cloudformation", "L-0485CB21"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("AccessDenied")) {
		t.Fatalf("error = %v", err)
	}
}
