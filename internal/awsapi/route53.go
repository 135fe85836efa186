package awsapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
)

// Route53 reads the account's Route 53 hosted zones (REST-XML,
// service/route53). Route 53 is a global service: its one endpoint is
// signed for us-east-1, whatever region the target names.
type Route53 struct {
	c *route53.Client
}

// NewRoute53 builds the Route 53 reader for a target, with the same
// endpoint, credentials and adaptive retry as every other reader.
func NewRoute53(ctx context.Context, t Target) (*Route53, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &Route53{c: route53.NewFromConfig(cfg, func(o *route53.Options) {
		// The aws partition's one Route 53 endpoint signs for us-east-1;
		// the China and GovCloud partitions keep their own region.
		if !strings.HasPrefix(o.Region, "cn-") && !strings.HasPrefix(o.Region, "us-gov-") {
			o.Region = "us-east-1"
		}
	})}, nil
}

// HostedZone is what GetHostedZone says about a zone.
type HostedZone struct {
	// ID is the bare zone id ("Z…", without "/hostedzone/").
	ID string
	// Name is the zone's domain, lower case, without the trailing dot
	// Route 53 answers with.
	Name string
	// Private is true for a private hosted zone (answers only inside its
	// VPCs: no public resolver, CloudFront or ACM sees its records).
	Private bool
}

// HostedZone reads zone id with GetHostedZone (Amazon Route 53 API
// Reference, GetHostedZone: GET /2013-04-01/hostedzone/{Id}). A zone the
// account does not hold is AWS's NoSuchHostedZone (404), returned as an
// error wrapping *types.NoSuchHostedZone.
func (r *Route53) HostedZone(ctx context.Context, id string) (HostedZone, error) {
	bare := strings.TrimPrefix(strings.TrimSpace(id), "/hostedzone/")
	out, err := r.c.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(bare)})
	if err != nil {
		return HostedZone{}, fmt.Errorf("Route 53 GetHostedZone (%s): %w", bare, err)
	}
	if out.HostedZone == nil || aws.ToString(out.HostedZone.Name) == "" {
		return HostedZone{}, fmt.Errorf("Route 53 GetHostedZone (%s): the answer names no zone", bare)
	}
	z := HostedZone{
		ID:   strings.TrimPrefix(aws.ToString(out.HostedZone.Id), "/hostedzone/"),
		Name: strings.ToLower(strings.TrimSuffix(aws.ToString(out.HostedZone.Name), ".")),
	}
	if out.HostedZone.Config != nil {
		z.Private = out.HostedZone.Config.PrivateZone
	}
	return z, nil
}
