// Package provider is the simulated AWS's Pulumi resource provider
// (package "aws", answering as pulumi-aws 6.83.4) over the cloud in
// internal/sim/store, served on a loopback port (Start) for the real
// pulumi engine to attach to with PULUMI_DEBUG_PROVIDERS=aws:<port>.
//
// What the provider checks beyond awsmodel's per-resource validation:
// references to resources that do not exist (InvalidVpcID.NotFound…), a
// subnet outside its VPC or overlapping a sibling, names AWS keeps unique
// (queues and load balancers per region, roles and buckets per account…),
// zone coverage of DB subnet groups and ALBs, an ECS service on a target
// group no listener uses, quotas (Service Quotas codes, settable per
// region), and deletes AWS refuses while dependents exist
// (DependencyViolation…), retried for a while as the terraform provider
// does. VPCs with overlapping CIDRs are allowed, as in AWS. Faults and
// latency rules recorded in the store apply to its operations.
package provider
