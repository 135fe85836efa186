// Package awsapi serves the simulated AWS's HTTP APIs on a loopback port,
// answered from the cloud in internal/sim/store and its health model
// (internal/sim/health), so cellctl's aws-sdk-go-v2 readers
// (internal/awsapi) run unchanged against it with BaseEndpoint and static
// credentials: CloudWatch (awsapi.go), Service Quotas (awsapi.go), the
// EC2, RDS, ElastiCache, ELBv2 and IAM describe calls (query.go), Route 53
// (route53.go), KMS (kms.go), ECS tasks (ecs.go), CloudWatch Logs
// GetLogEvents (logs.go) and the RDS Data API (rdsdata.go).
package awsapi
