package awsfacts

import (
	"fmt"
	"strconv"
	"strings"
)

// DataAPIDoc is where the Data API's availability comes from.
const DataAPIDoc = `Amazon Aurora User Guide, "Using the Amazon RDS Data API", Region and version availability ` +
	`("Supported Regions and Aurora DB engines for RDS Data API": Aurora PostgreSQL Serverless v2 and provisioned ` +
	`13.11, 14.8, 15.3, 16.1, 17.4, 18.3 and higher; not available in Asia Pacific (Hyderabad), (Melbourne) and (New Zealand))`

// DataAPIMinimum is, per Aurora PostgreSQL major, the first minor whose
// provisioned (and Serverless v2) clusters serve the RDS Data API. Majors
// before 13 have none; a major after the newest listed here is taken to
// have it from its first release (every major since 13 has).
var DataAPIMinimum = map[int]int{13: 11, 14: 8, 15: 3, 16: 1, 17: 4, 18: 3}

// DataAPIUnavailableRegions are the commercial regions whose Aurora
// PostgreSQL clusters have no Data API at any version (the table's "Not
// available" rows for Aurora PostgreSQL Serverless v2 and provisioned).
var DataAPIUnavailableRegions = map[string]string{
	"ap-south-2":     "Asia Pacific (Hyderabad)",
	"ap-southeast-4": "Asia Pacific (Melbourne)",
	"ap-southeast-6": "Asia Pacific (New Zealand)",
}

// DataAPIProblem says why an Aurora PostgreSQL cluster of engineVersion
// ("16": AWS picks the newest minor, or an exact "16.4") in region cannot
// serve the RDS Data API, or nil. An unparseable version is a problem: a
// check that cannot read the version must not pass it.
func DataAPIProblem(region, engineVersion string) error {
	if name, ok := DataAPIUnavailableRegions[region]; ok {
		return fmt.Errorf("the RDS Data API is not available for Aurora PostgreSQL in %s (%s) (%s)", region, name, DataAPIDoc)
	}
	majorText, minorText, pinned := strings.Cut(engineVersion, ".")
	major, err := strconv.Atoi(majorText)
	if err != nil {
		return fmt.Errorf("Aurora PostgreSQL version %q is not a version the RDS Data API can be checked against", engineVersion)
	}
	if major < 13 {
		return fmt.Errorf("the RDS Data API needs Aurora PostgreSQL 13.11, 14.8, 15.3, 16.1 or later, but the cluster runs %s (%s)", engineVersion, DataAPIDoc)
	}
	min, listed := DataAPIMinimum[major]
	if !pinned || !listed {
		// A major pin runs AWS's newest minor, which has the Data API;
		// a major after the newest listed has it from its first release.
		return nil
	}
	minorText, _, _ = strings.Cut(minorText, ".")
	minor, err := strconv.Atoi(minorText)
	if err != nil {
		return fmt.Errorf("Aurora PostgreSQL version %q is not a version the RDS Data API can be checked against", engineVersion)
	}
	if minor < min {
		return fmt.Errorf("the RDS Data API needs Aurora PostgreSQL %d.%d or later, but the cluster runs %s (%s)", major, min, engineVersion, DataAPIDoc)
	}
	return nil
}

// DataAPIInstanceClassDoc is where the Data API's instance-class limit
// comes from.
const DataAPIInstanceClassDoc = `Amazon Aurora User Guide, "Limitations for the Amazon RDS Data API": "Data API isn't supported on T DB instance classes"`

// BurstableInstanceClass reports whether class is one of RDS's T
// (burstable) DB instance classes: db.t3.medium, db.t4g.large, …
func BurstableInstanceClass(class string) bool {
	family, _, _ := strings.Cut(strings.TrimPrefix(class, "db."), ".")
	return strings.HasPrefix(class, "db.") && strings.HasPrefix(family, "t")
}

// DataAPIInstanceClassProblem says why a cluster whose instances are of
// class cannot serve the RDS Data API, or nil. The limitation is the
// User Guide's for every engine; Serverless v2 (db.serverless) and the
// other provisioned classes serve it.
func DataAPIInstanceClassProblem(class string) error {
	if BurstableInstanceClass(class) {
		return fmt.Errorf("the RDS Data API isn't supported on T DB instance classes, and the cluster's instances are %s (%s)", class, DataAPIInstanceClassDoc)
	}
	return nil
}
