package awsfacts

// CloudFront continuous deployment's limits on a staging distribution's
// traffic. Sources:
//   - weight: CloudFront API Reference, ContinuousDeploymentSingleWeightConfig
//     ("a decimal number between 0 and 0.15");
//   - header prefix: CloudFront Developer Guide, Learn how continuous
//     deployment works ("Headers routed to your staging distribution must
//     contain the prefix aws-cf-cd-");
//   - stickiness: CloudFront Developer Guide, Quotas and other
//     considerations for continuous deployment (idle 300–3600 s), and the
//     SessionStickinessConfig reference (maximum 300–3600 s, ≥ idle).
const (
	CloudFrontCDMaxWeight    = 0.15
	CloudFrontCDHeaderPrefix = "aws-cf-cd-"
	CloudFrontCDMinStickyTTL = 300
	CloudFrontCDMaxStickyTTL = 3600
)
