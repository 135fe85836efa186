package awsapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
)

// Lambda reads an account's Lambda code storage and a function's published
// versions, and deletes versions (REST-JSON, service/lambda). The router's
// edge function lives in us-east-1 (Lambda@Edge), so its target is that
// Region in the router's account.
type Lambda struct {
	api *lambda.Client
	// PageSize, when set, asks ListVersionsByFunction for smaller pages
	// (tests).
	PageSize int32
}

// NewLambda builds the Lambda client for a target, with the same endpoint,
// credentials and adaptive retry as every other reader.
func NewLambda(ctx context.Context, t Target) (*Lambda, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &Lambda{api: lambda.NewFromConfig(cfg)}, nil
}

// CodeStorage is what GetAccountSettings says about a Region's code
// storage: the bytes every function version and layer version uses, and
// the account's limit in bytes (AWS Lambda API Reference, AccountUsage
// and AccountLimit: TotalCodeSize).
type CodeStorage struct {
	UsedBytes  int64
	LimitBytes int64
	Functions  int64
}

// CodeStorage reads the Region's code storage (GetAccountSettings).
func (l *Lambda) CodeStorage(ctx context.Context) (CodeStorage, error) {
	out, err := l.api.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return CodeStorage{}, fmt.Errorf("Lambda GetAccountSettings: %w", err)
	}
	if out.AccountUsage == nil {
		return CodeStorage{}, errors.New("Lambda GetAccountSettings: the answer has no AccountUsage")
	}
	cs := CodeStorage{UsedBytes: out.AccountUsage.TotalCodeSize, Functions: out.AccountUsage.FunctionCount}
	if out.AccountLimit != nil {
		cs.LimitBytes = out.AccountLimit.TotalCodeSize
	}
	if cs.UsedBytes < 0 {
		return CodeStorage{}, fmt.Errorf("Lambda GetAccountSettings: TotalCodeSize %d is negative", cs.UsedBytes)
	}
	return cs, nil
}

// FunctionVersion is one published version of a function.
type FunctionVersion struct {
	// Version is the version number ("7"); $LATEST is never listed.
	Version string
	// ARN is the qualified ARN (…:function:name:7).
	ARN         string
	CodeSize    int64
	Description string
}

// Number is the version's number (0 when it is not one).
func (v FunctionVersion) Number() int {
	n, err := strconv.Atoi(v.Version)
	if err != nil {
		return 0
	}
	return n
}

// Versions lists a function's published versions (ListVersionsByFunction,
// every page), $LATEST left out: it is the function itself, never a
// version to delete.
func (l *Lambda) Versions(ctx context.Context, function string) ([]FunctionVersion, error) {
	in := &lambda.ListVersionsByFunctionInput{FunctionName: aws.String(function)}
	if l.PageSize > 0 {
		in.MaxItems = aws.Int32(l.PageSize)
	}
	var out []FunctionVersion
	p := lambda.NewListVersionsByFunctionPaginator(l.api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("Lambda ListVersionsByFunction %s: %w", function, err)
		}
		for _, v := range page.Versions {
			ver := aws.ToString(v.Version)
			if ver == "" || ver == "$LATEST" {
				continue
			}
			out = append(out, FunctionVersion{Version: ver, ARN: aws.ToString(v.FunctionArn), CodeSize: v.CodeSize, Description: aws.ToString(v.Description)})
		}
	}
	return out, nil
}

// DeleteVersion deletes one numbered version of a function (DeleteFunction
// with a Qualifier). It refuses anything but a version number: without a
// qualifier DeleteFunction deletes the function and every version.
func (l *Lambda) DeleteVersion(ctx context.Context, function, version string) error {
	if n, err := strconv.Atoi(version); err != nil || n < 1 {
		return fmt.Errorf("Lambda DeleteFunction %s: refusing to delete %q, which is not a version number", function, version)
	}
	_, err := l.api.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(function), Qualifier: aws.String(version)})
	if err != nil {
		return fmt.Errorf("Lambda DeleteFunction %s:%s: %w", function, version, err)
	}
	return nil
}

// IsReplicated reports whether err is Lambda refusing to delete a version
// CloudFront still has replicas of: InvalidParameterValueException "Lambda
// was unable to delete … because it is a replicated function" (Amazon
// CloudFront Developer Guide, "Delete Lambda@Edge functions and replicas":
// replicas are typically deleted within a few hours after the last
// association is removed; try again then).
func IsReplicated(err error) bool {
	var ip *types.InvalidParameterValueException
	if errors.As(err, &ip) {
		return strings.Contains(ip.ErrorMessage(), "replicated function")
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidParameterValueException" && strings.Contains(ae.ErrorMessage(), "replicated function")
}

// IsNotFound reports whether err is ResourceNotFoundException: the version
// is already gone (deleted by someone else, or by an earlier run whose
// answer was lost).
func IsNotFound(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}
