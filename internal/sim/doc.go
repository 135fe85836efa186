// Package sim is cellctl's simulated AWS: a Pulumi resource provider
// (package "aws", answering as pulumi-aws 6.83.4) that cellctl serves
// itself and attaches to the real pulumi engine with
// PULUMI_DEBUG_PROVIDERS=aws:<port> (`--cloud sim`). It is a rehearsal and
// test cloud: it gives realistic ids, ARNs and endpoints (from
// internal/awsmodel), enforces what AWS enforces where it can tell, and
// lets people inject faults, latency, quota limits, alarm states and
// out-of-band edits. Nothing ever reaches AWS.
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
//
// The cloud lives in a directory of JSON files (see store.go) shared by
// every cellctl process: one exclusive flock per change, atomic renames,
// one resource file per stack. Secret values are encrypted with the key
// in secret.key (AES-256-GCM) so that Read can return them, as secrets,
// unchanged: a hashed value would read back as drift.
//
// What the provider checks beyond awsmodel's per-resource validation:
// references to resources that do not exist (InvalidVpcID.NotFound…), a
// subnet outside its VPC or overlapping a sibling, names AWS keeps unique
// (queues and load balancers per region, roles and buckets per account…),
// zone coverage of DB subnet groups and ALBs, an ECS service on a target
// group no listener uses, quotas (Service Quotas codes, settable per
// region), and deletes AWS refuses while dependents exist
// (DependencyViolation…), retried for a while as the terraform provider
// does. VPCs with overlapping CIDRs are allowed, as in AWS.
package sim
