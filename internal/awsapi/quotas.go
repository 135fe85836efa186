package awsapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas/types"
)

// Quotas reads Service Quotas.
type Quotas struct {
	api *servicequotas.Client
	// PageSize, when set, asks ListServiceQuotas for smaller pages (tests).
	PageSize int32
}

// NewQuotas builds the Service Quotas reader for a target.
func NewQuotas(ctx context.Context, t Target) (*Quotas, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &Quotas{api: servicequotas.NewFromConfig(cfg)}, nil
}

// Quota is one quota's value.
type Quota struct {
	ServiceCode string  `json:"serviceCode"`
	QuotaCode   string  `json:"quotaCode"`
	Name        string  `json:"name"`
	Value       float64 `json:"value"`
	Unit        string  `json:"unit,omitempty"`
	Adjustable  bool    `json:"adjustable"`
	Global      bool    `json:"global"`
	// Default is true when Value is AWS's default because the account has
	// no applied value for the quota.
	Default bool `json:"default"`
	// Usage names the AWS/Usage CloudWatch metric that counts what the
	// account uses of this quota, when AWS publishes one.
	Usage *UsageMetric `json:"usage,omitempty"`
}

// UsageMetric is where CloudWatch publishes a quota's usage.
type UsageMetric struct {
	Namespace  string            `json:"namespace"`
	Metric     string            `json:"metric"`
	Dimensions map[string]string `json:"dimensions,omitempty"`
	Stat       string            `json:"stat,omitempty"` // the statistic AWS recommends
}

// List returns every quota of a service with an applied value in the
// region (ListServiceQuotas, all pages).
func (q *Quotas) List(ctx context.Context, serviceCode string) ([]Quota, error) {
	in := &servicequotas.ListServiceQuotasInput{ServiceCode: aws.String(serviceCode)}
	if q.PageSize > 0 {
		in.MaxResults = aws.Int32(q.PageSize)
	}
	var out []Quota
	p := servicequotas.NewListServiceQuotasPaginator(q.api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("Service Quotas ListServiceQuotas %s: %w", serviceCode, err)
		}
		for _, sq := range page.Quotas {
			out = append(out, quotaOf(sq, false))
		}
	}
	return out, nil
}

// Get returns a quota's applied value (GetServiceQuota) or, when the
// account has none (NoSuchResourceException), AWS's default
// (GetAWSDefaultServiceQuota) with Default set.
func (q *Quotas) Get(ctx context.Context, serviceCode, quotaCode string) (Quota, error) {
	out, err := q.api.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String(serviceCode), QuotaCode: aws.String(quotaCode)})
	if err == nil && out.Quota != nil && out.Quota.Value != nil {
		return quotaOf(*out.Quota, false), nil
	}
	var missing *types.NoSuchResourceException
	if err != nil && !errors.As(err, &missing) {
		return Quota{}, fmt.Errorf("Service Quotas GetServiceQuota %s/%s: %w", serviceCode, quotaCode, err)
	}
	return q.Default(ctx, serviceCode, quotaCode)
}

// Default returns AWS's default value of a quota.
func (q *Quotas) Default(ctx context.Context, serviceCode, quotaCode string) (Quota, error) {
	out, err := q.api.GetAWSDefaultServiceQuota(ctx, &servicequotas.GetAWSDefaultServiceQuotaInput{ServiceCode: aws.String(serviceCode), QuotaCode: aws.String(quotaCode)})
	if err != nil {
		return Quota{}, fmt.Errorf("Service Quotas GetAWSDefaultServiceQuota %s/%s: %w", serviceCode, quotaCode, err)
	}
	if out.Quota == nil || out.Quota.Value == nil {
		return Quota{}, fmt.Errorf("Service Quotas GetAWSDefaultServiceQuota %s/%s: no value returned", serviceCode, quotaCode)
	}
	return quotaOf(*out.Quota, true), nil
}

func quotaOf(sq types.ServiceQuota, isDefault bool) Quota {
	q := Quota{
		ServiceCode: aws.ToString(sq.ServiceCode), QuotaCode: aws.ToString(sq.QuotaCode), Name: aws.ToString(sq.QuotaName),
		Value: aws.ToFloat64(sq.Value), Unit: aws.ToString(sq.Unit), Adjustable: sq.Adjustable, Global: sq.GlobalQuota, Default: isDefault,
	}
	if m := sq.UsageMetric; m != nil && m.MetricName != nil {
		q.Usage = &UsageMetric{Namespace: aws.ToString(m.MetricNamespace), Metric: aws.ToString(m.MetricName),
			Dimensions: m.MetricDimensions, Stat: aws.ToString(m.MetricStatisticRecommendation)}
	}
	return q
}
