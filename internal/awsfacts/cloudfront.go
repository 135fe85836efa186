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

// CloudFrontCDLockedFields are the distribution settings (Pulumi's input
// names of DistributionConfig) CloudFront refuses to change while a
// continuous deployment policy links the distribution: the primary with
// its policy attached, and its staging distribution. The Developer Guide
// lists what may change on a linked pair — cache behaviors (their
// function associations included), origins and origin groups, custom
// error responses, geographic restrictions, the default root object,
// logging and the comment ("Update primary and staging distributions",
// https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-continuous-deployment.html);
// everything else is refused ("One or more fields updated are not
// supported for continuous deployment", IllegalUpdate), and
// aws/aws-cli#10446 reports the viewer certificate and minimum TLS
// version (viewerCertificate) refused until the policy is detached
// (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/continuous-deployment-workflow.html
// is the workflow the detach-update-attach sequence of the router
// follows). awsmodel judges updates with it (cloudfront.cd-linked-locked-fields)
// and the router holds these fields of a linked distribution.
var CloudFrontCDLockedFields = []string{"aliases", "enabled", "httpVersion", "isIpv6Enabled", "priceClass", "viewerCertificate", "webAclId"}
