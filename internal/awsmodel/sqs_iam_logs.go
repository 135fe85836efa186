package awsmodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

const (
	tQueue       = "aws:sqs/queue:Queue"
	tQueuePolicy = "aws:sqs/queuePolicy:QueuePolicy"
	tRedriveAP   = "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy"
	tRole        = "aws:iam/role:Role"
	tRolePolicy  = "aws:iam/rolePolicy:RolePolicy"
	tRolePA      = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
	tLogGroup    = "aws:cloudwatch/logGroup:LogGroup"
	tAlarm       = "aws:cloudwatch/metricAlarm:MetricAlarm"
)

// QueueURL is the URL SQS gives a queue.
func QueueURL(env Env, name string) string {
	env = env.normalized()
	return fmt.Sprintf("https://sqs.%s.%s/%s/%s", env.Region, env.DNSSuffix(), env.Account, name)
}

var (
	refQueueURL = Reference{Property: "queueUrl", Target: tQueue, Code: "AWS.SimpleQueueService.NonExistentQueue", Message: "The specified queue does not exist: %s"}
	refRoleName = Reference{Property: "role", Target: tRole, Code: "NoSuchEntity", Message: "The role with name %s cannot be found."}
)

func validPolicyDoc(v *validator, k string) {
	if !v.known(k) {
		return
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(v.s(k)), &doc); err != nil {
		v.fail(k, "%q contains an invalid JSON policy: %v", k, err)
		return
	}
	if _, ok := doc["Statement"]; !ok {
		v.fail(k, "%q contains an invalid JSON policy: missing Statement", k)
	}
}

func init() {
	register(&typeSpec{
		token:   tQueue,
		api:     apiInfo{"SQS", "SQS Queue", ops("CreateQueue", "SetQueueAttributes", "DeleteQueue", "GetQueueAttributes")},
		name:    &autoName{prop: "name", maxLen: 80, fifo: true, unique: true},
		replace: []string{"name", "namePrefix", "fifoQueue"},
		refs: []Reference{{Property: "redrivePolicy.deadLetterTargetArn", Target: tQueue, Code: "InvalidParameterValue",
			Message: "Value {\"deadLetterTargetArn\":\"%s\"} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."}},
		unique:    []uniqueRule{{key: regionScoped("name"), code: "QueueNameExists", message: "A queue already exists with the same name (%s) and a different value for attribute(s)"}},
		recompute: []string{"url"},
		outDefaults: map[string]any{
			"visibilityTimeoutSeconds": 30, "messageRetentionSeconds": 345600, "maxMessageSize": 262144,
			"delaySeconds": 0, "receiveWaitTimeSeconds": 0, "kmsDataKeyReusePeriodSeconds": 300, "fifoQueue": false,
			"contentBasedDeduplication": false, "policy": "", "redrivePolicy": "", "redriveAllowPolicy": "", "namePrefix": "",
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			c.id = QueueURL(c.env, name)
			c.set("url", c.id)
			c.set("arn", c.env.regional("sqs", name))
			c.def("sqsManagedSseEnabled", c.s("kmsMasterKeyId") == "")
			if fifo, _ := boolean(c.in, "fifoQueue"); fifo {
				c.def("deduplicationScope", "queue")
				c.def("fifoThroughputLimit", "perQueue")
			} else {
				c.def("deduplicationScope", "")
				c.def("fifoThroughputLimit", "")
			}
			return nil
		},
		validate: func(v *validator) {
			fifo, _ := boolean(v.in, "fifoQueue")
			if v.known("name") {
				// Queue names: up to 80 characters, alphanumerics, hyphens and
				// underscores; FIFO names end in ".fifo" — SQS API Reference,
				// CreateQueue, QueueName
				// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html).
				n := v.s("name")
				base := strings.TrimSuffix(n, ".fifo")
				if len(n) > 80 {
					v.fail("name", "invalid queue name: %s (at most 80 characters)", n)
				} else if !regexp_(`^[a-zA-Z0-9_-]+$`).MatchString(base) {
					v.fail("name", "invalid queue name: %s (alphanumeric characters, hyphens and underscores only)", n)
				}
				if fifo && !strings.HasSuffix(n, ".fifo") {
					v.fail("name", "invalid queue name: %s (FIFO queue names must end with \".fifo\")", n)
				}
				if !fifo && strings.HasSuffix(n, ".fifo") {
					v.fail("name", "invalid queue name: %s (only FIFO queue names may end with \".fifo\")", n)
				}
			}
			v.intRange("visibilityTimeoutSeconds", 0, 43200)
			v.intRange("messageRetentionSeconds", 60, 1209600)
			v.intRange("delaySeconds", 0, 900)
			v.intRange("maxMessageSize", 1024, 262144)
			v.intRange("receiveWaitTimeSeconds", 0, 20)
			v.intRange("kmsDataKeyReusePeriodSeconds", 60, 86400)
			if sse, set := boolean(v.in, "sqsManagedSseEnabled"); set && sse && v.has("kmsMasterKeyId") {
				v.fail("sqsManagedSseEnabled", "\"sqsManagedSseEnabled\": conflicts with kmsMasterKeyId")
			}
			if cbd, _ := boolean(v.in, "contentBasedDeduplication"); cbd && !fifo {
				v.fail("contentBasedDeduplication", "content-based deduplication can only be set for FIFO queue")
			}
			v.jsonDoc("policy")
			v.jsonDoc("redriveAllowPolicy")
			if v.known("redriveAllowPolicy") && v.s("redriveAllowPolicy") != "" {
				var p map[string]any
				if json.Unmarshal([]byte(v.s("redriveAllowPolicy")), &p) == nil {
					validRedriveSources(v, p)
				}
			}
			if v.known("redrivePolicy") && v.s("redrivePolicy") != "" {
				var rp map[string]any
				if err := json.Unmarshal([]byte(v.s("redrivePolicy")), &rp); err != nil {
					v.fail("redrivePolicy", "\"redrivePolicy\" contains an invalid JSON: %v", err)
				} else if rp["deadLetterTargetArn"] == nil || rp["maxReceiveCount"] == nil {
					v.fail("redrivePolicy", "redrivePolicy must contain deadLetterTargetArn and maxReceiveCount")
				}
			}
		},
	})

	register(&typeSpec{
		token:    tQueuePolicy,
		api:      apiInfo{"SQS", "SQS Queue Policy", ops("SetQueueAttributes", "SetQueueAttributes", "SetQueueAttributes", "GetQueueAttributes")},
		required: []string{"policy", "queueUrl"},
		replace:  []string{"queueUrl"},
		refs:     []Reference{refQueueURL},
		compute:  func(c *calc) error { c.id = c.s("queueUrl"); return nil },
		validate: func(v *validator) { validPolicyDoc(v, "policy") },
	})

	register(&typeSpec{
		token:    tRedriveAP,
		api:      apiInfo{"SQS", "SQS Queue Redrive Allow Policy", ops("SetQueueAttributes", "SetQueueAttributes", "SetQueueAttributes", "GetQueueAttributes")},
		required: []string{"queueUrl", "redriveAllowPolicy"},
		replace:  []string{"queueUrl"},
		refs:     []Reference{refQueueURL},
		compute:  func(c *calc) error { c.id = c.s("queueUrl"); return nil },
		validate: func(v *validator) {
			v.jsonDoc("redriveAllowPolicy")
			if v.known("redriveAllowPolicy") {
				var p map[string]any
				if json.Unmarshal([]byte(v.s("redriveAllowPolicy")), &p) == nil {
					v.enumValue("redriveAllowPolicy", fmt.Sprint(p["redrivePermission"]), "allowAll", "denyAll", "byQueue")
					validRedriveSources(v, p)
				}
			}
		},
	})

	register(&typeSpec{
		token:    tRole,
		api:      apiInfo{"IAM", "IAM Role", ops("CreateRole", "UpdateRole", "DeleteRole", "GetRole")},
		required: []string{"assumeRolePolicy"},
		name:     &autoName{prop: "name", maxLen: 64, unique: true},
		replace:  []string{"name", "namePrefix", "path"},
		unique:   []uniqueRule{{key: globalScoped("name"), code: "EntityAlreadyExists", message: "Role with name %s already exists."}},
		outDefaults: map[string]any{
			"path": "/", "maxSessionDuration": 3600, "description": "", "forceDetachPolicies": false,
			"managedPolicyArns": []string{}, "inlinePolicies": []string{}, "permissionsBoundary": "", "namePrefix": "",
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			c.id = name
			path := c.s("path")
			if path == "" {
				path = "/"
			}
			c.set("arn", c.env.ARN("iam", "", c.env.Account, "role"+path+name))
			c.set("uniqueId", "AROA"+c.r.Chars("unique-id", 17, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
			c.set("createDate", c.now.UTC().Format("2006-01-02T15:04:05Z"))
			return nil
		},
		validate: func(v *validator) {
			validPolicyDoc(v, "assumeRolePolicy")
			v.name("name", 64, reIAMName, "must match [\\w+=,.@-]")
			if v.known("path") && !regexp_(`^/([\x21-\x7E]*/)?$`).MatchString(v.s("path")) {
				v.fail("path", "path must begin and end with '/'")
			}
			v.intRange("maxSessionDuration", 3600, 43200)
			// IAM API Reference, CreateRole: Description, at most 1,000
			// characters (pulumi-aws validates its length).
			if d := v.s("description"); len(d) > 1000 {
				v.fail("description", "expected length of description to be in the range (0 - 1000), got %d", len(d))
			}
		},
	})

	register(&typeSpec{
		token:    tRolePolicy,
		api:      apiInfo{"IAM", "IAM Role Policy", ops("PutRolePolicy", "PutRolePolicy", "DeleteRolePolicy", "GetRolePolicy")},
		required: []string{"policy", "role"},
		name:     &autoName{prop: "name", maxLen: 128},
		replace:  []string{"name", "namePrefix", "role"},
		refs:     []Reference{refRoleName},
		compute: func(c *calc) error {
			c.id = c.s("role") + ":" + c.outStr("name")
			c.def("namePrefix", "")
			return nil
		},
		validate: func(v *validator) {
			validPolicyDoc(v, "policy")
			v.name("name", 128, reIAMName, "must match [\\w+=,.@-]")
		},
	})

	register(&typeSpec{
		token:               tRolePA,
		api:                 apiInfo{"IAM", "IAM Role Policy Attachment", ops("AttachRolePolicy", "AttachRolePolicy", "DetachRolePolicy", "ListAttachedRolePolicies")},
		required:            []string{"policyArn", "role"},
		replace:             []string{"policyArn", "role"},
		deleteBeforeReplace: true,
		refs:                []Reference{refRoleName},
		unique: []uniqueRule{{key: func(_ Env, out resourceMap) (string, string) {
			return str(out, "role"), str(out, "policyArn")
		}, code: "EntityAlreadyExists", message: "policy %s is already attached to role %s"}},
		compute: func(c *calc) error {
			c.id = c.s("role") + "-" + tfUniqueID(c.r, c.now, "attachment")
			return nil
		},
		validate: func(v *validator) {
			if v.known("policyArn") && !regexp_(`^arn:[\w-]+:iam::(aws|\d{12}):policy/`).MatchString(v.s("policyArn")) {
				v.fail("policyArn", "invalid ARN (%s): expected an IAM policy ARN", v.s("policyArn"))
			}
		},
	})

	retention := []float64{0, 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
	register(&typeSpec{
		token:   tLogGroup,
		api:     apiInfo{"CloudWatchLogs", "CloudWatch Logs Log Group", ops("CreateLogGroup", "PutRetentionPolicy", "DeleteLogGroup", "DescribeLogGroups")},
		name:    &autoName{prop: "name", maxLen: 512, unique: true},
		replace: []string{"name", "namePrefix", "logGroupClass"},
		unique:  []uniqueRule{{key: regionScoped("name"), code: "ResourceAlreadyExistsException", message: "The specified log group already exists"}},
		outDefaults: map[string]any{
			"retentionInDays": 0, "logGroupClass": "STANDARD", "kmsKeyId": "", "skipDestroy": false, "namePrefix": "",
		},
		compute: func(c *calc) error {
			c.id = c.outStr("name")
			c.set("arn", c.env.regional("logs", "log-group:"+c.id))
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 512, regexp_(`^[\.\-_/#A-Za-z0-9]+$`), "must match [.-_/#A-Za-z0-9]")
			v.enum("logGroupClass", "STANDARD", "INFREQUENT_ACCESS", "DELIVERY")
			if n, ok := number(v.in, "retentionInDays"); ok {
				valid := false
				for _, r := range retention {
					valid = valid || r == n
				}
				if !valid {
					v.fail("retentionInDays", "expected retentionInDays to be one of %v, got %g", retention, n)
				}
			}
		},
	})

	register(&typeSpec{
		token:    tAlarm,
		api:      apiInfo{"CloudWatch", "CloudWatch Metric Alarm", ops("PutMetricAlarm", "PutMetricAlarm", "DeleteAlarms", "DescribeAlarms")},
		required: []string{"comparisonOperator", "evaluationPeriods"},
		name:     &autoName{prop: "name", maxLen: 255},
		replace:  []string{"name"},
		// Amazon CloudWatch API Reference, PutMetricAlarm ("Creates or
		// updates an alarm"): when you update an existing alarm, the update
		// completely overwrites its previous configuration, whoever
		// created it. No error: a duplicate name is a silent takeover.
		unique: []uniqueRule{{key: regionScoped("name"), message: "alarm", silent: "PutMetricAlarm would overwrite it (the other stack's alarm would silently watch this stack's metric)"}},
		outDefaults: map[string]any{
			"actionsEnabled": true, "alarmActions": []string{}, "okActions": []string{}, "insufficientDataActions": []string{},
			"treatMissingData": "missing", "evaluateLowSampleCountPercentiles": "", "dimensions": map[string]string{},
			"metricQueries": []string{},
		},
		compute: func(c *calc) error {
			c.id = c.outStr("name")
			c.set("arn", c.env.regional("cloudwatch", "alarm:"+c.id))
			return nil
		},
		validate: func(v *validator) {
			v.enum("comparisonOperator", "GreaterThanOrEqualToThreshold", "GreaterThanThreshold", "LessThanThreshold",
				"LessThanOrEqualToThreshold", "LessThanLowerOrGreaterThanUpperThreshold", "LessThanLowerThreshold", "GreaterThanUpperThreshold")
			v.enum("statistic", "SampleCount", "Average", "Sum", "Minimum", "Maximum")
			v.enum("treatMissingData", "missing", "ignore", "breaching", "notBreaching")
			v.intRange("evaluationPeriods", 1, 1e9)
			if v.has("statistic") && v.has("extendedStatistic") {
				v.fail("statistic", "\"statistic\": conflicts with extendedStatistic")
			}
			if !v.has("metricName") && !v.has("metricQueries") {
				v.fail("metricName", "one of `metricName,metricQueries` must be specified")
			}
			if v.has("metricName") && !v.has("metricQueries") && !v.has("statistic") && !v.has("extendedStatistic") {
				v.fail("statistic", "one of `statistic,extendedStatistic` must be specified with metricName")
			}
			if p, ok := number(v.in, "period"); ok && p != 10 && p != 20 && p != 30 && (p < 60 || int(p)%60 != 0) {
				v.fail("period", "period must be 10, 20, 30 or a multiple of 60, got %g", p)
			}
			v.name("name", 255, nil, "")
		},
	})
}

// MaxRedriveSourceQueues is how many source queue ARNs a redrive allow
// policy may list: "You can specify up to 10 source queue ARNs. To allow
// more than 10 source queues to specify dead-letter queues, set the
// redrivePermission parameter to allowAll" — SQS API Reference,
// SetQueueAttributes, RedriveAllowPolicy
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html).
const MaxRedriveSourceQueues = 10

// validRedriveSources applies the sourceQueueArns rules of the same
// document: only with byQueue, required by it, at most 10.
func validRedriveSources(v *validator, p map[string]any) {
	perm := fmt.Sprint(p["redrivePermission"])
	raw, has := p["sourceQueueArns"]
	sources, _ := raw.([]any)
	switch {
	case has && perm != "byQueue":
		v.fail("redriveAllowPolicy", "Value %s for parameter RedriveAllowPolicy is invalid. Reason: sourceQueueArns can be specified only when redrivePermission is byQueue.", v.s("redriveAllowPolicy"))
	case perm == "byQueue" && len(sources) == 0:
		v.fail("redriveAllowPolicy", "Value %s for parameter RedriveAllowPolicy is invalid. Reason: redrivePermission byQueue requires sourceQueueArns.", v.s("redriveAllowPolicy"))
	case len(sources) > MaxRedriveSourceQueues:
		v.fail("redriveAllowPolicy", "Value for parameter RedriveAllowPolicy is invalid. Reason: sourceQueueArns lists %d queues; at most %d are allowed (use allowAll for more).", len(sources), MaxRedriveSourceQueues)
	}
}
