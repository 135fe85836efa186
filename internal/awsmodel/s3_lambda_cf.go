package awsmodel

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tBucket              = "aws:s3/bucketV2:BucketV2"
	tBucketVersioning    = "aws:s3/bucketVersioningV2:BucketVersioningV2"
	tBucketSSE           = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
	tBucketPAB           = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
	tBucketOwnership     = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
	tBucketPolicy        = "aws:s3/bucketPolicy:BucketPolicy"
	tFunction            = "aws:lambda/function:Function"
	tDistribution        = "aws:cloudfront/distribution:Distribution"
	tCachePolicy         = "aws:cloudfront/cachePolicy:CachePolicy"
	tOriginRequestPolicy = "aws:cloudfront/originRequestPolicy:OriginRequestPolicy"

	// CloudFrontHostedZoneID is the Route 53 zone of every distribution.
	CloudFrontHostedZoneID = "Z2FDTNDATAQYW2"
)

var (
	refBucket = Reference{Property: "bucket", Target: tBucket, Code: "NoSuchBucket", Message: "The specified bucket does not exist: %s"}
)

func validBucketName(n string) string {
	switch {
	case len(n) < 3 || len(n) > 63:
		return "bucket names must be between 3 and 63 characters long"
	case !regexp_(`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`).MatchString(n):
		return "only lowercase alphanumeric characters, periods and hyphens allowed; must begin and end with a letter or number"
	case strings.Contains(n, ".."):
		return "bucket names must not contain two adjacent periods"
	case strings.HasPrefix(n, "xn--") || strings.HasPrefix(n, "sthree-") || strings.HasSuffix(n, "-s3alias") || strings.HasSuffix(n, "--ol-s3"):
		return "bucket name uses a reserved prefix or suffix"
	}
	if _, err := netip.ParseAddr(n); err == nil {
		return "bucket names must not be formatted as an IP address"
	}
	return ""
}

func bucketSub(token, noun, create string, required []string, replace []string, validate func(v *validator)) *typeSpec {
	return &typeSpec{
		token:    token,
		api:      apiInfo{"S3", noun, ops(create, create, strings.Replace(create, "Put", "Delete", 1), strings.Replace(create, "Put", "Get", 1))},
		required: required,
		replace:  replace,
		refs:     []Reference{refBucket},
		compute: func(c *calc) error {
			c.id = c.s("bucket")
			if o := c.s("expectedBucketOwner"); o != "" {
				c.id += "," + o
			}
			return nil
		},
		validate: validate,
	}
}

// CodeHash is the base64 SHA-256 Lambda reports for a deployment package.
func CodeHash(code resource.PropertyValue) (hash string, size int) {
	code = unwrap(code)
	var data []byte
	switch {
	case code.IsArchive():
		if b, err := code.ArchiveValue().Bytes(resource.ZIPArchive); err == nil {
			data = b
		} else {
			data = []byte(code.ArchiveValue().Hash)
		}
	case code.IsAsset():
		if b, err := code.AssetValue().Bytes(); err == nil {
			data = b
		} else {
			data = []byte(code.AssetValue().Hash)
		}
	default:
		return "", 0
	}
	sum := sha256.Sum256(data)
	return base64.StdEncoding.EncodeToString(sum[:]), len(data)
}

// lambdaPublishes lists the inputs whose change publishes a new version.
var lambdaPublishes = []string{"code", "handler", "runtime", "role", "memorySize", "timeout", "environment", "description",
	"layers", "architectures", "ephemeralStorage", "imageUri", "s3Key", "s3ObjectVersion", "vpcConfig", "tracingConfig",
	"kmsKeyArn", "deadLetterConfig", "fileSystemConfig", "loggingConfig", "snapStart", "sourceCodeHash"}

func init() {
	register(&typeSpec{
		token:   tBucket,
		api:     apiInfo{"S3", "S3 Bucket", ops("CreateBucket", "PutBucketTagging", "DeleteBucket", "HeadBucket")},
		name:    &autoName{prop: "bucket", maxLen: 63, lower: true, unique: true},
		replace: []string{"bucket", "bucketPrefix", "objectLockEnabled"},
		unique:  []uniqueRule{{key: globalScoped("bucket"), code: "BucketAlreadyOwnedByYou", message: "Your previous request to create the named bucket (%s) succeeded and you already own it."}},
		outDefaults: map[string]any{
			"accelerationStatus": "", "acl": "", "requestPayer": "BucketOwner", "objectLockEnabled": false,
			"forceDestroy": false, "policy": "", "corsRules": []string{}, "lifecycleRules": []string{}, "loggings": []string{},
			"replicationConfigurations": []string{}, "websites": []string{}, "websiteDomain": "", "websiteEndpoint": "",
			"bucketPrefix": "",
			"versionings":  []resource.PropertyMap{{"enabled": pv(false), "mfaDelete": pv(false)}},
			"serverSideEncryptionConfigurations": []resource.PropertyMap{{"rules": pv([]resource.PropertyMap{{
				"bucketKeyEnabled":                    pv(false),
				"applyServerSideEncryptionByDefaults": pv([]resource.PropertyMap{{"kmsMasterKeyId": pv(""), "sseAlgorithm": pv("AES256")}}),
			}})}},
		},
		compute: func(c *calc) error {
			b := c.outStr("bucket")
			c.id = b
			c.set("arn", c.env.ARN("s3", "", "", b))
			c.set("bucketDomainName", b+".s3."+c.env.DNSSuffix())
			c.set("bucketRegionalDomainName", b+".s3."+c.env.Region+"."+c.env.DNSSuffix())
			c.set("region", c.env.Region)
			c.set("hostedZoneId", regionOf(c.env.Region).s3Zone)
			c.def("grants", []resource.PropertyMap{{
				"id":          pv(newRand([]byte("canonical:"+c.env.Account)).Hex("canonical-user", 64)),
				"permissions": pv([]string{"FULL_CONTROL"}), "type": pv("CanonicalUser"), "uri": pv(""),
			}})
			return nil
		},
		validate: func(v *validator) {
			if v.known("bucket") {
				if reason := validBucketName(v.s("bucket")); reason != "" {
					v.fail("bucket", "validating S3 Bucket (%s) name: %s", v.s("bucket"), reason)
				}
			}
			v.enum("acl", "private", "public-read", "public-read-write", "aws-exec-read", "authenticated-read", "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write")
		},
	})

	register(bucketSub(tBucketVersioning, "S3 Bucket Versioning", "PutBucketVersioning", []string{"bucket", "versioningConfiguration"},
		[]string{"bucket", "expectedBucketOwner"}, func(v *validator) {
			vc := object(v.in, "versioningConfiguration")
			v.enumValue("versioningConfiguration.status", str(vc, "status"), "Enabled", "Suspended", "Disabled")
			v.enumValue("versioningConfiguration.mfaDelete", str(vc, "mfaDelete"), "Enabled", "Disabled")
		}))
	register(bucketSub(tBucketSSE, "S3 Bucket Server-side Encryption Configuration", "PutBucketEncryption", []string{"bucket", "rules"},
		[]string{"bucket", "expectedBucketOwner"}, func(v *validator) {
			for i, r := range objects(v.in, "rules") {
				d := object(r, "applyServerSideEncryptionByDefault")
				alg := str(d, "sseAlgorithm")
				v.enumValue(fmt.Sprintf("rules[%d].applyServerSideEncryptionByDefault.sseAlgorithm", i), alg, "AES256", "aws:kms", "aws:kms:dsse")
				if alg == "AES256" && str(d, "kmsMasterKeyId") != "" {
					v.fail(fmt.Sprintf("rules[%d].applyServerSideEncryptionByDefault.kmsMasterKeyId", i), "kmsMasterKeyId can only be set with sseAlgorithm aws:kms or aws:kms:dsse")
				}
			}
		}))
	pab := bucketSub(tBucketPAB, "S3 Bucket Public Access Block", "PutPublicAccessBlock", []string{"bucket"}, []string{"bucket"}, nil)
	pab.outDefaults = map[string]any{"blockPublicAcls": false, "blockPublicPolicy": false, "ignorePublicAcls": false, "restrictPublicBuckets": false}
	register(pab)
	register(bucketSub(tBucketOwnership, "S3 Bucket Ownership Controls", "PutBucketOwnershipControls", []string{"bucket", "rule"},
		[]string{"bucket"}, func(v *validator) {
			v.enumValue("rule.objectOwnership", str(object(v.in, "rule"), "objectOwnership"), "BucketOwnerPreferred", "ObjectWriter", "BucketOwnerEnforced")
		}))
	register(bucketSub(tBucketPolicy, "S3 Bucket Policy", "PutBucketPolicy", []string{"bucket", "policy"}, []string{"bucket"},
		func(v *validator) { validPolicyDoc(v, "policy") }))

	register(&typeSpec{
		token:     tFunction,
		api:       apiInfo{"Lambda", "Lambda Function", ops("CreateFunction", "UpdateFunctionCode", "DeleteFunction", "GetFunction")},
		required:  []string{"role"},
		name:      &autoName{prop: "name", maxLen: 64, unique: true},
		replace:   []string{"name", "packageType"},
		recompute: []string{"version", "qualifiedArn", "qualifiedInvokeArn", "codeSha256", "sourceCodeSize", "lastModified"},
		refs: []Reference{{Property: "role", Target: tRole, Code: "InvalidParameterValueException",
			Message: "The role defined for the function cannot be assumed by Lambda. (%s)"}},
		unique: []uniqueRule{{key: regionScoped("name"), code: "ResourceConflictException", message: "Function already exist: %s"}},
		outDefaults: map[string]any{
			"packageType": "Zip", "architectures": []string{"x86_64"}, "memorySize": 128, "timeout": 3,
			"description": "", "layers": []string{}, "reservedConcurrentExecutions": -1, "signingJobArn": "",
			"signingProfileVersionArn": "", "skipDestroy": false, "publish": false, "kmsKeyArn": "", "imageUri": "",
			"codeSigningConfigArn": "", "replaceSecurityGroupsOnDestroy": false,
			"ephemeralStorage": map[string]any{"size": 512},
			"tracingConfig":    map[string]any{"mode": "PassThrough"},
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			if c.s("packageType") != "Image" && c.s("handler") == "" {
				return c.apiErr(OpCreate, "InvalidParameterValueException", "Handler is required when PackageType is Zip.")
			}
			c.id = name
			arn := c.env.regional("lambda", "function:"+name)
			c.set("arn", arn)
			invoke := func(a string) string {
				return fmt.Sprintf("arn:%s:apigateway:%s:lambda:path/2015-03-31/functions/%s/invocations", c.env.Partition, c.env.Region, a)
			}
			c.set("invokeArn", invoke(arn))
			hash, size := CodeHash(c.in["code"])
			c.set("codeSha256", hash)
			c.set("sourceCodeSize", size)
			c.def("sourceCodeHash", hash)
			version := "$LATEST"
			if publish, _ := boolean(c.in, "publish"); publish {
				switch {
				case c.old == nil:
					version = "1"
				default:
					old := str(c.old, "version")
					n, _ := strconv.Atoi(old)
					if lambdaChanged(c.old, c.in) || n == 0 {
						n++
					}
					version = strconv.Itoa(n)
				}
			}
			c.set("version", version)
			c.set("qualifiedArn", arn+":"+version)
			c.set("qualifiedInvokeArn", invoke(arn+":"+version))
			c.set("lastModified", c.now.UTC().Format("2006-01-02T15:04:05.000+0000"))
			c.def("loggingConfig", map[string]any{"logFormat": "Text", "logGroup": "/aws/lambda/" + name, "applicationLogLevel": "", "systemLogLevel": ""})
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 64, regexp_(`^[a-zA-Z0-9_-]+$`), "letters, numbers, hyphens and underscores")
			v.enum("runtime", LambdaRuntimeIDs()...)
			v.enum("packageType", "Zip", "Image")
			v.intRange("memorySize", 128, 10240)
			v.intRange("timeout", 1, 900)
			// Lambda API Reference, CreateFunction / UpdateFunctionConfiguration:
			// Description, "Length Constraints: Minimum length of 0. Maximum
			// length of 256." (the router's names its routing table).
			v.name("description", 256, nil, "")
			if !v.has("code") && !v.has("imageUri") && !v.has("s3Bucket") {
				v.fail("code", "one of `code,imageUri,s3Bucket` must be specified")
			}
			if v.known("role") && !strings.HasPrefix(v.s("role"), "arn:") {
				v.fail("role", "invalid ARN (%s): the role must be an IAM role ARN", v.s("role"))
			}
		},
	})

	register(&typeSpec{
		token:     tDistribution,
		api:       apiInfo{"CloudFront", "CloudFront Distribution", ops("CreateDistributionWithTags", "UpdateDistribution", "DeleteDistribution", "GetDistribution")},
		required:  []string{"defaultCacheBehavior", "enabled", "origins", "restrictions", "viewerCertificate"},
		recompute: []string{"etag", "lastModifiedTime", "status", "inProgressValidationBatches"},
		refs: []Reference{
			{Property: "defaultCacheBehavior.cachePolicyId", Target: tCachePolicy, Code: "NoSuchCachePolicy", Message: "The cache policy does not exist: %s", Skip: managedPolicy},
			{Property: "defaultCacheBehavior.originRequestPolicyId", Target: tOriginRequestPolicy, Code: "NoSuchOriginRequestPolicy", Message: "The origin request policy does not exist: %s", Skip: managedPolicy},
			{Property: "orderedCacheBehaviors.cachePolicyId", Target: tCachePolicy, Code: "NoSuchCachePolicy", Message: "The cache policy does not exist: %s", Skip: managedPolicy},
			{Property: "orderedCacheBehaviors.originRequestPolicyId", Target: tOriginRequestPolicy, Code: "NoSuchOriginRequestPolicy", Message: "The origin request policy does not exist: %s", Skip: managedPolicy},
			{Property: "defaultCacheBehavior.lambdaFunctionAssociations.lambdaArn", Target: tFunction, Code: "InvalidLambdaFunctionAssociation", Message: "The function does not exist: %s"},
			{Property: "orderedCacheBehaviors.lambdaFunctionAssociations.lambdaArn", Target: tFunction, Code: "InvalidLambdaFunctionAssociation", Message: "The function does not exist: %s"},
			{Property: "viewerCertificate.acmCertificateArn", Target: tCertificate, Code: "InvalidViewerCertificate",
				Message: "The specified SSL certificate doesn't exist, isn't in us-east-1 region, isn't valid, or doesn't include a valid certificate chain: %s"},
		},
		outDefaults: map[string]any{
			"inProgressValidationBatches": 0, "continuousDeploymentPolicyId": "", "staging": false, "retainOnDelete": false,
			"waitForDeployment": true, "isIpv6Enabled": false, "httpVersion": "http2", "priceClass": "PriceClass_All",
			"comment": "", "defaultRootObject": "", "aliases": []string{}, "webAclId": "", "customErrorResponses": []string{},
			"orderedCacheBehaviors": []string{}, "originGroups": []string{},
			"trustedKeyGroups": []resource.PropertyMap{{"enabled": pv(false), "items": pv([]string{})}},
			"trustedSigners":   []resource.PropertyMap{{"enabled": pv(false), "items": pv([]string{})}},
		},
		compute: func(c *calc) error {
			// Lambda@Edge association rules: see the lambda.edge-function rule.
			c.id = "E" + c.r.Chars("distribution-id", 13, upperAlnum)
			c.set("arn", c.env.ARN("cloudfront", "", c.env.Account, "distribution/"+c.id))
			c.set("domainName", "d"+c.r.Chars("domain", 13, lowerAlnum)+".cloudfront.net")
			c.set("hostedZoneId", CloudFrontHostedZoneID)
			c.set("callerReference", "terraform-"+tfUniqueID(c.r, c.now, "caller-reference"))
			c.set("etag", "E"+newRand([]byte(c.now.String()+c.id)).Chars("etag", 13, upperAlnum))
			c.set("lastModifiedTime", c.now.UTC().Format("2006-01-02 15:04:05.999999999 -0700 MST"))
			if wait, set := boolean(c.in, "waitForDeployment"); set && !wait {
				c.set("status", "InProgress")
			} else {
				c.set("status", "Deployed")
			}
			return nil
		},
		validate: validateDistribution,
	})

	policy := func(token, noun, create string, required []string, validate func(v *validator), code string) *typeSpec {
		return &typeSpec{
			token:     token,
			api:       apiInfo{"CloudFront", noun, ops(create, strings.Replace(create, "Create", "Update", 1), strings.Replace(create, "Create", "Delete", 1), strings.Replace(create, "Create", "Get", 1))},
			required:  required,
			name:      &autoName{prop: "name", maxLen: 128, unique: true},
			recompute: []string{"etag"},
			unique:    []uniqueRule{{key: globalScoped("name"), code: code, message: "A policy with this name (%s) already exists."}},
			compute: func(c *calc) error {
				c.id = c.r.UUID("policy-id")
				kind := map[string]string{tCachePolicy: "cache-policy", tOriginRequestPolicy: "origin-request-policy"}[token]
				c.set("arn", c.env.ARN("cloudfront", "", c.env.Account, kind+"/"+c.id))
				c.set("etag", "E"+newRand([]byte(c.now.String()+c.id)).Chars("etag", 13, upperAlnum))
				c.def("comment", "")
				return nil
			},
			validate: func(v *validator) {
				v.name("name", 128, regexp_(`^[a-zA-Z0-9_-]+$`), "letters, numbers, hyphens and underscores")
				validate(v)
			},
		}
	}
	cp := policy(tCachePolicy, "CloudFront Cache Policy", "CreateCachePolicy", []string{"parametersInCacheKeyAndForwardedToOrigin"}, func(v *validator) {
		p := object(v.in, "parametersInCacheKeyAndForwardedToOrigin")
		v.enumValue("cookieBehavior", str(object(p, "cookiesConfig"), "cookieBehavior"), "none", "whitelist", "allExcept", "all")
		v.enumValue("headerBehavior", str(object(p, "headersConfig"), "headerBehavior"), "none", "whitelist")
		v.enumValue("queryStringBehavior", str(object(p, "queryStringsConfig"), "queryStringBehavior"), "none", "whitelist", "allExcept", "all")
		minT, _ := number(v.in, "minTtl")
		def, okD := number(v.in, "defaultTtl")
		maxT, okM := number(v.in, "maxTtl")
		if okD && def < minT || okM && okD && def > maxT {
			v.fail("defaultTtl", "defaultTtl must lie between minTtl and maxTtl")
		}
	}, "CachePolicyAlreadyExists")
	cp.outDefaults = map[string]any{"defaultTtl": 86400, "maxTtl": 31536000, "minTtl": 0}
	register(cp)
	register(policy(tOriginRequestPolicy, "CloudFront Origin Request Policy", "CreateOriginRequestPolicy", []string{"cookiesConfig", "headersConfig", "queryStringsConfig"}, func(v *validator) {
		v.enumValue("cookiesConfig.cookieBehavior", str(object(v.in, "cookiesConfig"), "cookieBehavior"), "none", "whitelist", "all", "allExcept")
		v.enumValue("headersConfig.headerBehavior", str(object(v.in, "headersConfig"), "headerBehavior"), "none", "whitelist", "allViewer", "allViewerAndWhitelistCloudFront", "allExcept")
		v.enumValue("queryStringsConfig.queryStringBehavior", str(object(v.in, "queryStringsConfig"), "queryStringBehavior"), "none", "whitelist", "all", "allExcept")
	}, "OriginRequestPolicyAlreadyExists"))
}

// managedPolicy reports AWS-managed CloudFront policy ids (which always
// exist): the well-known ones, e.g. CachingDisabled.
func managedPolicy(id string) bool {
	return slices.Contains([]string{
		"4135ea2d-6df8-44a3-9df3-4b5a84be39ad", // CachingDisabled
		"658327ea-f89d-4fab-a63d-7e88639e58f6", // CachingOptimized
		"b2884449-e4de-46a7-ac36-70bc7f1ddd6d", // CachingOptimizedForUncompressedObjects
		"216adef6-5c7f-47e4-b989-5492eafa07d3", // AllViewer
		"b689b0a8-53d0-40ab-baf2-68738e2966ac", // AllViewerExceptHostHeader
		"88a5eaf4-2fd4-4709-b370-b4c650ea3fcf", // CORS-S3Origin
		"33f36d7e-f396-46d9-90e0-52428a34d9dc", // AllViewerAndCloudFrontHeaders-2022-06
		"59781a5b-3903-41f3-afcb-af62929ccde1", // CORS-CustomOrigin
		"acba4595-bd28-49b8-b9fe-13317c0390fa", // UserAgentRefererHeaders
	}, id)
}

var cfForbiddenHeaders = []string{"cache-control", "connection", "content-length", "cookie", "host", "if-match", "if-modified-since",
	"if-none-match", "if-range", "if-unmodified-since", "max-forwards", "pragma", "proxy-authorization", "proxy-connection",
	"range", "request-range", "te", "trailer", "transfer-encoding", "upgrade", "via", "x-real-ip"}

func validateDistribution(v *validator) {
	v.enum("priceClass", "PriceClass_All", "PriceClass_200", "PriceClass_100")
	v.enum("httpVersion", "http1.1", "http2", "http2and3", "http3")
	origins := objects(v.in, "origins")
	ids := map[string]bool{}
	for i, o := range origins {
		id := str(o, "originId")
		if known(o, "originId") && ids[id] {
			v.fail(fmt.Sprintf("origins[%d].originId", i), "duplicate originId %q", id)
		}
		ids[id] = true
		if co := object(o, "customOriginConfig"); co != nil {
			v.enumValue(fmt.Sprintf("origins[%d].customOriginConfig.originProtocolPolicy", i), str(co, "originProtocolPolicy"), "http-only", "https-only", "match-viewer")
		}
		for j, h := range objects(o, "customHeaders") {
			if slices.Contains(cfForbiddenHeaders, strings.ToLower(str(h, "name"))) {
				v.fail(fmt.Sprintf("origins[%d].customHeaders[%d].name", i, j), "CloudFront does not allow the custom origin header %q", str(h, "name"))
			}
		}
	}
	if len(origins) == 0 && !unknown(v.in, "origins") {
		v.fail("origins", "at least one origin is required")
	}
	behaviors := append(objects(v.in, "defaultCacheBehavior"), objects(v.in, "orderedCacheBehaviors")...)
	for i, b := range behaviors {
		path := "defaultCacheBehavior"
		if i > 0 {
			path = fmt.Sprintf("orderedCacheBehaviors[%d]", i-1)
		}
		v.enumValue(path+".viewerProtocolPolicy", str(b, "viewerProtocolPolicy"), "allow-all", "https-only", "redirect-to-https")
		if t := str(b, "targetOriginId"); known(b, "targetOriginId") && len(origins) > 0 && !ids[t] && len(objects(v.in, "originGroups")) == 0 {
			v.fail(path+".targetOriginId", "NoSuchOrigin: One or more of your origins or origin groups do not exist (%s)", t)
		}
		if _, hasFV := get(b, "forwardedValues"); hasFV && known(b, "cachePolicyId") {
			v.fail(path+".forwardedValues", "InvalidArgument: The parameter ForwardedValues cannot be used when a cache policy is associated to the cache behavior.")
		}
		for j, a := range objects(b, "lambdaFunctionAssociations") {
			v.enumValue(fmt.Sprintf("%s.lambdaFunctionAssociations[%d].eventType", path, j), str(a, "eventType"), "viewer-request", "viewer-response", "origin-request", "origin-response")
		}
	}
	vc := object(v.in, "viewerCertificate")
	if vc != nil {
		def, _ := boolean(vc, "cloudfrontDefaultCertificate")
		if !def && str(vc, "acmCertificateArn") == "" && str(vc, "iamCertificateId") == "" && !unknown(vc, "acmCertificateArn") {
			v.fail("viewerCertificate", "one of cloudfrontDefaultCertificate, acmCertificateArn or iamCertificateId must be set")
		}
		if arn := str(vc, "acmCertificateArn"); arn != "" && !strings.Contains(arn, ":us-east-1:") {
			v.fail("viewerCertificate.acmCertificateArn", "InvalidViewerCertificate: The certificate must be in us-east-1")
		}
	}
	if gr := object(object(v.in, "restrictions"), "geoRestriction"); gr != nil {
		v.enumValue("restrictions.geoRestriction.restrictionType", str(gr, "restrictionType"), "none", "whitelist", "blacklist")
	}
}

func lambdaChanged(old, in resource.PropertyMap) bool {
	for _, k := range lambdaPublishes {
		ov, oOK := old[resource.PropertyKey(k)]
		nv, nOK := in[resource.PropertyKey(k)]
		if k == "code" && oOK && nOK {
			oh, _ := CodeHash(ov)
			nh, _ := CodeHash(nv)
			if oh != nh {
				return true
			}
			continue
		}
		if nOK && (!oOK || !unwrap(ov).DeepEquals(unwrap(nv))) {
			return true
		}
	}
	return false
}
