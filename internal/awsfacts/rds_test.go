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

// T classes have no Data API (Aurora User Guide, Limitations for the
// Amazon RDS Data API); every other class, Serverless v2 included, has.
func TestDataAPIInstanceClassProblem(t *testing.T) {
	for class, refused := range map[string]bool{
		"db.t3.medium": true, "db.t4g.medium": true, "db.t4g.large": true, "db.t3.small": true,
		"db.r6g.large": false, "db.r7g.xlarge": false, "db.x2g.large": false, "db.serverless": false, "db.m6gd.large": false,
	} {
		err := DataAPIInstanceClassProblem(class)
		if refused != (err != nil) || refused && !strings.Contains(err.Error(), "T DB instance classes") {
			t.Errorf("%s: %v, want refused %v", class, err, refused)
		}
	}
}
