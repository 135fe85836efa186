package fleet

import (
	"testing"

	"golang.org/x/tools/txtar"
)

// TestLoaderAcceptsLocalEmulatorSettings: what a LocalStack or moto user
// sets — aws:endpoints, aws:s3UsePathStyle and the skip flags, credentials
// left to the environment — loads (aws:s3UsePathStyle was refused as an
// unknown provider key), and Endpoints gives each stack's: cell-b's own,
// the fleet's for the others.
func TestLoaderAcceptsLocalEmulatorSettings(t *testing.T) {
	c := txtar.Parse([]byte(`-- Pulumi.yaml --
name: cells
runtime: go
main: cmd/cells
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: test-fleet-bucket
  cells:fleetDomain: cells.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:certificateArn: arn:aws:acm:us-east-1:123456789012:certificate/abc-123
  aws:region: us-east-1
  aws:s3UsePathStyle: true
  aws:skipCredentialsValidation: true
  aws:skipRequestingAccountId: "true"
  aws:skipMetadataApiCheck: true
  aws:skipRegionValidation: false
  aws:endpoints:
    value:
      - s3: http://localhost:4566
        sts: http://localhost:4566
-- stacks/Pulumi.cell-b.yaml --
config:
  cells:index: 2
  aws:endpoints:
    - ec2: http://127.0.0.1:5000
`))
	f, err := LoadFS(caseFS(t, c), "FLEET")
	if err != nil {
		t.Fatalf("a local emulator's settings must load: %v", err)
	}
	got := map[string]string{}
	for _, e := range f.Endpoints() {
		got[e.Service] = e.URL + " " + e.File
	}
	want := map[string]string{"s3": "http://localhost:4566 Pulumi.yaml", "sts": "http://localhost:4566 Pulumi.yaml", "ec2": "http://127.0.0.1:5000 stacks/Pulumi.cell-b.yaml"}
	if len(got) != len(want) {
		t.Fatalf("endpoints %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("endpoint %s = %q, want %q", k, got[k], v)
		}
	}
	if eps := f.Cell("cell-b").Endpoints; len(eps) != 1 || eps[0].Line != 4 {
		t.Errorf("cell-b's own endpoints %+v, want ec2 at line 4", eps)
	}
}
