package cloud

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
)

func TestEndpointNote(t *testing.T) {
	if n := EndpointNote([]string{"HOME=/root", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="}, nil); n != "" {
		t.Errorf("no endpoint set: %q", n)
	}
	n := EndpointNote([]string{"AWS_ENDPOINT_URL_S3=http://127.0.0.1:4566", "PATH=/bin", "AWS_ENDPOINT_URL=http://127.0.0.1:5000"},
		[]fleet.Endpoint{{Service: "sts", URL: "http://localhost:4566", File: "Pulumi.yaml", Line: 14}})
	for _, want := range []string{"instead of AWS's own", "AWS_ENDPOINT_URL=http://127.0.0.1:5000", "AWS_ENDPOINT_URL_S3=http://127.0.0.1:4566",
		"sts → http://localhost:4566 (aws:endpoints, Pulumi.yaml:14"} {
		if !strings.Contains(n, want) {
			t.Errorf("note lacks %q:\n%s", want, n)
		}
	}
	if strings.Index(n, "AWS_ENDPOINT_URL=") > strings.Index(n, "AWS_ENDPOINT_URL_S3") {
		t.Errorf("the environment's variables are listed in order:\n%s", n)
	}
}
