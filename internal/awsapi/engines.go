package awsapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rds"
)

// EngineVersionOffered reports whether RDS in the target's region still
// offers engine at version for new clusters (DescribeDBEngineVersions, all
// pages). An exact minor ("15.8") must be listed itself; a major ("16")
// is offered while any minor of its parameter-group family is (AWS picks
// the default minor). AWS retires old minors ahead of their end of
// support: a retired one is simply absent from the answer, and
// CreateDBCluster fails with InvalidParameterCombination "Cannot find
// version 15.8 for aurora-postgresql" (Amazon RDS API Reference,
// DescribeDBEngineVersions).
func (i *Inventory) EngineVersionOffered(ctx context.Context, engine, version string) (bool, error) {
	in := &rds.DescribeDBEngineVersionsInput{Engine: aws.String(engine), MaxRecords: i.page(100)}
	if strings.Contains(version, ".") {
		in.EngineVersion = aws.String(version)
	} else {
		in.DBParameterGroupFamily = aws.String(engine + version)
	}
	p := rds.NewDescribeDBEngineVersionsPaginator(i.rds, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return false, fmt.Errorf("RDS DescribeDBEngineVersions (%s %s): %w", engine, version, err)
		}
		for _, v := range page.DBEngineVersions {
			if aws.ToString(v.Engine) == engine && (in.EngineVersion == nil || aws.ToString(v.EngineVersion) == version) {
				return true, nil
			}
		}
	}
	return false, nil
}
