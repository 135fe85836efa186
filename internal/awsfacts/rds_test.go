package awsfacts

import (
	"strings"
	"testing"
)

func TestDataAPIProblem(t *testing.T) {
	for _, tc := range []struct {
		region, version string
		want            string // "" when the Data API is there
	}{
		{"us-east-1", "16", ""},
		{"us-east-1", "16.1", ""},
		{"eu-west-1", "15.3", ""},
		{"eu-west-1", "15.2", "needs Aurora PostgreSQL 15.3 or later"},
		{"eu-west-1", "13.9", "needs Aurora PostgreSQL 13.11 or later"},
		{"eu-west-1", "13.11", ""},
		{"eu-west-1", "14.7", "14.8"},
		{"eu-west-1", "17.4", ""},
		{"eu-west-1", "17.2", "17.4"},
		{"eu-west-1", "19", ""},
		{"eu-west-1", "12.22", "13.11, 14.8, 15.3, 16.1 or later"},
		{"eu-west-1", "x", "cannot"},
		{"ap-south-2", "16", "not available for Aurora PostgreSQL in ap-south-2 (Asia Pacific (Hyderabad))"},
		{"ap-southeast-4", "16.6", "Melbourne"},
		{"ap-southeast-6", "17", "New Zealand"},
	} {
		err := DataAPIProblem(tc.region, tc.version)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.region, tc.version, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "cannot"))):
			t.Errorf("%s %s: %v, want %q", tc.region, tc.version, err, tc.want)
		}
	}
}
