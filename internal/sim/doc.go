// Package sim is cellctl's simulated AWS: a rehearsal and test cloud that
// cellctl serves itself, attached to the real pulumi engine with
// PULUMI_DEBUG_PROVIDERS=aws:<port> (`--cloud sim`) and reached by
// cellctl's aws-sdk-go-v2 clients on a loopback endpoint. It gives
// realistic ids, ARNs and endpoints (from internal/awsmodel), enforces what
// AWS enforces where it can tell, and lets people inject faults, latency,
// quota limits, alarm states and out-of-band edits. Nothing ever reaches
// AWS.
//
// This package is the small facade the rest of cellctl uses (only the
// packages internal/layers.SimulatorUsers names may import the
// simulator). The simulator itself is four packages, one idea each:
//
//   - store: the on-disk cloud — resources, faults, latency rules, quota
//     overrides, alarm states, out-of-band edits, zones, KMS keys and
//     Lambda code in a directory of JSON files shared by every cellctl
//     process, with secret values encrypted by the directory's key;
//   - provider: the Pulumi resource provider (package "aws", answering as
//     pulumi-aws 6.83.4) over the store — CRUD, AWS's cross-resource
//     checks, quotas, dependency violations — served over gRPC;
//   - health: the health model — each cell's traffic over time from the
//     image it runs and the profiles set, its metric alarms evaluated
//     (metric math included), the edge's CloudFront metrics;
//   - awsapi: the AWS HTTP APIs on loopback (CloudWatch, Service Quotas,
//     Route 53, KMS, the EC2/RDS/ElastiCache/ELBv2/IAM describe calls),
//     answered from the store and the health model.
//
// simtest drives the provider the way the engine does, for their tests.
//
// Start serves one provider per stack; Open gives the Go API the
// `cellctl sim …` commands and the audits use:
//
//	srv, _ := sim.Start(ctx, sim.Options{Dir: ".cellctl/sim", Stack: "cell-a"})
//	defer srv.Stop()
//	env["PULUMI_DEBUG_PROVIDERS"] = srv.DebugProviders() // this stack's workspace only
//
//	cloud, _ := sim.Open(".cellctl/sim")
//	cloud.AddFault(sim.Fault{Stack: "a", Op: sim.OpCreate, Type: "rds/cluster"})
//	cloud.SetAlarm("a", "cell-a-5xx", sim.AlarmAlarm, "rehearsal")
//	cloud.Edit("a", "cell-a-vpc", "tags.owner", `"someone"`) // drift
package sim
