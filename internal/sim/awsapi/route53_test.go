package awsapi

import (
	"context"
	"errors"
	"testing"
	"time"

	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// TestGetHostedZoneAnswersFromTheAccountsZones: the real Route 53 reader
// against the simulator's API reads the name sim zone add gave a zone,
// and a zone the account does not hold is NoSuchHostedZone, as on AWS.
func TestGetHostedZoneAnswersFromTheAccountsZones(t *testing.T) {
	c, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddZone("Z0123456789ABCDEFGHIJ", "Cells.Example.com."); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	endpoint, stop, err := Serve(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tg := readers.Sim(endpoint, "eu-west-1")
	tg.MaxBackoff = time.Millisecond
	r53, err := readers.NewRoute53(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	z, err := r53.HostedZone(ctx, "Z0123456789ABCDEFGHIJ")
	if err != nil || z != (readers.HostedZone{ID: "Z0123456789ABCDEFGHIJ", Name: "cells.example.com"}) {
		t.Fatalf("zone = %+v, %v", z, err)
	}
	_, err = r53.HostedZone(ctx, "Z0987654321ZYXWVUTSRQ")
	var nsz *r53types.NoSuchHostedZone
	if !errors.As(err, &nsz) {
		t.Fatalf("unknown zone: %v, want NoSuchHostedZone", err)
	}
}
