package awsmodel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tECSCluster   = "aws:ecs/cluster:Cluster"
	tTaskDef      = "aws:ecs/taskDefinition:TaskDefinition"
	tECSService   = "aws:ecs/service:Service"
	tLB           = "aws:lb/loadBalancer:LoadBalancer"
	tTargetGroup  = "aws:lb/targetGroup:TargetGroup"
	tListener     = "aws:lb/listener:Listener"
	tListenerRule = "aws:lb/listenerRule:ListenerRule"
)

// fargateMemory lists the memory sizes (MiB) Fargate allows per CPU units.
var fargateMemory = map[int]func(int) bool{
	256:   func(m int) bool { return m == 512 || m == 1024 || m == 2048 },
	512:   func(m int) bool { return m >= 1024 && m <= 4096 && m%1024 == 0 },
	1024:  func(m int) bool { return m >= 2048 && m <= 8192 && m%1024 == 0 },
	2048:  func(m int) bool { return m >= 4096 && m <= 16384 && m%1024 == 0 },
	4096:  func(m int) bool { return m >= 8192 && m <= 30720 && m%1024 == 0 },
	8192:  func(m int) bool { return m >= 16384 && m <= 61440 && m%4096 == 0 },
	16384: func(m int) bool { return m >= 32768 && m <= 122880 && m%8192 == 0 },
}

var (
	reLBName       = regexp_(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)
	lbProtocols    = []string{"HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE"}
	lbActionTypes  = []string{"forward", "redirect", "fixed-response", "authenticate-cognito", "authenticate-oidc"}
	refTargetGroup = func(prop string) Reference {
		return Reference{Property: prop, Target: tTargetGroup, Code: "TargetGroupNotFound", Message: "Target groups '%s' not found"}
	}
)

func lbKind(arnOrType string) string {
	switch {
	case strings.Contains(arnOrType, "/net/") || arnOrType == "network":
		return "net"
	case strings.Contains(arnOrType, "/gwy/") || arnOrType == "gateway":
		return "gwy"
	}
	return "app"
}

// lbPath extracts "app/name/hex" from a load balancer ARN.
func lbPath(arn string) string {
	if i := strings.Index(arn, ":loadbalancer/"); i >= 0 {
		return arn[i+len(":loadbalancer/"):]
	}
	return "app/unknown/" + newRand([]byte(arn)).Hex("lb", 16)
}

var reFixedStatus = regexp_(`^(2|4|5)\d\d$`)

func validateActions(v *validator, prop string) {
	for i, a := range objects(v.in, prop) {
		p := fmt.Sprintf("%s[%d]", prop, i)
		typ := str(a, "type")
		v.enumValue(p+".type", typ, lbActionTypes...)
		switch typ {
		case "forward":
			if !known(a, "targetGroupArn") && !unknown(a, "targetGroupArn") && object(a, "forward") == nil {
				v.fail(p+".targetGroupArn", "a forward action requires targetGroupArn or forward")
			}
		case "fixed-response":
			fr := object(a, "fixedResponse")
			if fr == nil {
				v.fail(p+".fixedResponse", "a fixed-response action requires fixedResponse")
			} else {
				v.enumValue(p+".fixedResponse.contentType", str(fr, "contentType"), "text/plain", "text/css", "text/html", "application/javascript", "application/json")
				// Elastic Load Balancing API Reference,
				// FixedResponseActionConfig: StatusCode, pattern
				// ^(2|4|5)\d\d$ (pulumi-aws validates it the same way).
				if code := str(fr, "statusCode"); known(fr, "statusCode") && !reFixedStatus.MatchString(code) {
					v.fail(p+".fixedResponse.statusCode", "invalid value for statusCode (must match ^(2|4|5)\\d\\d$), got %q", code)
				}
			}
		case "redirect":
			if object(a, "redirect") == nil {
				v.fail(p+".redirect", "a redirect action requires redirect")
			}
		}
	}
}

func init() {
	register(&typeSpec{
		token:   tECSCluster,
		api:     apiInfo{"ECS", "ECS Cluster", ops("CreateCluster", "UpdateCluster", "DeleteCluster", "DescribeClusters")},
		name:    &autoName{prop: "name", maxLen: 255},
		replace: []string{"name"},
		compute: func(c *calc) error {
			c.id = c.env.regional("ecs", "cluster/"+c.outStr("name"))
			c.set("arn", c.id)
			c.def("settings", []resource.PropertyMap{{"name": pv("containerInsights"), "value": pv("disabled")}})
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 255, regexp_(`^[a-zA-Z0-9_-]+$`), "letters, numbers, hyphens and underscores")
		},
	})

	register(&typeSpec{
		token:            tTaskDef,
		api:              apiInfo{"ECS", "ECS Task Definition", ops("RegisterTaskDefinition", "RegisterTaskDefinition", "DeregisterTaskDefinition", "DescribeTaskDefinition")},
		required:         []string{"containerDefinitions", "family"},
		replaceAllExcept: []string{"tags", "tagsAll", "skipDestroy", "trackLatest"},
		outDefaults: map[string]any{
			"networkMode": "bridge", "enableFaultInjection": false, "placementConstraints": []string{}, "volumes": []string{},
			"requiresCompatibilities": []string{}, "inferenceAccelerators": []string{}, "skipDestroy": false, "trackLatest": false,
		},
		compute: func(c *calc) error {
			family := c.s("family")
			fargate := strings.Contains(strings.Join(strings_(c.in, "requiresCompatibilities"), ","), "FARGATE")
			if fargate {
				if nm := c.s("networkMode"); nm != "awsvpc" {
					return c.apiErr(OpCreate, "ClientException", "Fargate only supports network mode ‘awsvpc’.")
				}
				cpu, mem := 0, 0
				fmt.Sscan(c.s("cpu"), &cpu)
				fmt.Sscan(c.s("memory"), &mem)
				if ok := fargateMemory[cpu]; ok == nil || !ok(mem) {
					return c.apiErr(OpCreate, "ClientException", "No Fargate configuration exists for given values: %s CPU, %s memory. See the Amazon ECS documentation for the valid values.", c.s("cpu"), c.s("memory"))
				}
			}
			rev := max(1, c.next("ecs-task-definition:"+c.env.Region+":"+family))
			c.id = family
			c.set("revision", rev)
			c.set("arnWithoutRevision", c.env.regional("ecs", "task-definition/"+family))
			c.set("arn", fmt.Sprintf("%s:%d", c.env.regional("ecs", "task-definition/"+family), rev))
			return nil
		},
		validate: func(v *validator) {
			v.name("family", 255, regexp_(`^[a-zA-Z0-9_-]+$`), "letters, numbers, hyphens and underscores")
			v.enum("networkMode", "bridge", "host", "awsvpc", "none")
			for i, rc := range strings_(v.in, "requiresCompatibilities") {
				v.enumValue(fmt.Sprintf("requiresCompatibilities[%d]", i), rc, "EC2", "FARGATE", "EXTERNAL")
			}
			if v.known("containerDefinitions") {
				var defs []map[string]any
				if err := json.Unmarshal([]byte(v.s("containerDefinitions")), &defs); err != nil {
					v.fail("containerDefinitions", "ECS Task Definition container_definitions is invalid: %v", err)
				} else {
					for i, d := range defs {
						if d["name"] == nil || d["image"] == nil {
							v.fail("containerDefinitions", "ECS Task Definition container_definitions is invalid: container %d needs a name and an image", i)
						}
					}
				}
			}
		},
	})

	register(&typeSpec{
		token:   tECSService,
		api:     apiInfo{"ECS", "ECS Service", ops("CreateService", "UpdateService", "DeleteService", "DescribeServices")},
		name:    &autoName{prop: "name", maxLen: 255},
		replace: []string{"name", "cluster", "iamRole", "launchType", "schedulingStrategy", "deploymentController"},
		refs: []Reference{
			{Property: "cluster", Target: tECSCluster, Code: "ClusterNotFoundException", Message: "Cluster not found: %s"},
			{Property: "taskDefinition", Target: tTaskDef, Code: "ClientException", Message: "TaskDefinition not found: %s"},
			refTargetGroup("loadBalancers.targetGroupArn"),
			refSubnet("networkConfiguration.subnets"),
			refSG("networkConfiguration.securityGroups"),
		},
		unique: []uniqueRule{{key: func(_ Env, out resourceMap) (string, string) { return str(out, "cluster"), str(out, "name") },
			code: "InvalidParameterException", message: "Creation of service %s was not idempotent."}},
		outDefaults: map[string]any{
			"schedulingStrategy": "REPLICA", "deploymentMaximumPercent": 200, "deploymentMinimumHealthyPercent": 100,
			"enableEcsManagedTags": false, "enableExecuteCommand": false, "propagateTags": "NONE",
			"healthCheckGracePeriodSeconds": 0, "availabilityZoneRebalancing": "DISABLED", "waitForSteadyState": false,
			"iamRole": "", "desiredCount": 0, "capacityProviderStrategies": []string{}, "loadBalancers": []string{},
			"orderedPlacementStrategies": []string{}, "placementConstraints": []string{}, "triggers": map[string]string{},
			"deploymentController":     map[string]any{"type": "ECS"},
			"deploymentCircuitBreaker": map[string]any{"enable": false, "rollback": false},
		},
		compute: func(c *calc) error {
			cluster := c.s("cluster")
			if cluster == "" {
				cluster = c.env.regional("ecs", "cluster/default")
				c.set("cluster", cluster)
			}
			clusterName := cluster
			if i := strings.LastIndex(cluster, "/"); i >= 0 {
				clusterName = cluster[i+1:]
			}
			if _, td, ok := c.lookup(c.s("taskDefinition")); ok && str(td, "networkMode") == "awsvpc" && object(c.in, "networkConfiguration") == nil {
				return c.apiErr(OpCreate, "InvalidParameterException", "Network Configuration must be provided when networkMode 'awsvpc' is specified.")
			}
			c.id = c.env.regional("ecs", "service/"+clusterName+"/"+c.outStr("name"))
			if len(array(c.in, "capacityProviderStrategies")) == 0 {
				c.def("launchType", "EC2")
			} else {
				c.def("launchType", "")
			}
			if c.outStr("launchType") == "FARGATE" {
				c.def("platformVersion", "LATEST")
			} else {
				c.def("platformVersion", "")
			}
			return nil
		},
		validate: func(v *validator) {
			v.enum("launchType", "EC2", "FARGATE", "EXTERNAL")
			v.enum("schedulingStrategy", "REPLICA", "DAEMON")
			v.enum("propagateTags", "NONE", "SERVICE", "TASK_DEFINITION")
			v.intRange("desiredCount", 0, 1e6)
			if v.has("launchType") && v.has("capacityProviderStrategies") {
				v.fail("launchType", "\"launchType\": conflicts with capacityProviderStrategies")
			}
		},
	})

	register(&typeSpec{
		token:   tLB,
		api:     apiInfo{"ElasticLoadBalancingV2", "ELBv2 Load Balancer", ops("CreateLoadBalancer", "ModifyLoadBalancerAttributes", "DeleteLoadBalancer", "DescribeLoadBalancers")},
		name:    &autoName{prop: "name", maxLen: 32, unique: true},
		replace: []string{"name", "namePrefix", "internal", "loadBalancerType", "customerOwnedIpv4Pool"},
		refs:    []Reference{refSubnet("subnets"), refSubnet("subnetMappings.subnetId"), refSG("securityGroups")},
		unique: []uniqueRule{{key: regionScoped("name"), code: "DuplicateLoadBalancerName",
			message: "A load balancer with the same name '%s' exists, but with different settings"}},
		outDefaults: map[string]any{
			"loadBalancerType": "application", "internal": false, "ipAddressType": "ipv4", "idleTimeout": 60,
			"enableHttp2": true, "enableDeletionProtection": false, "dropInvalidHeaderFields": false,
			"desyncMitigationMode": "defensive", "preserveHostHeader": false, "enableWafFailOpen": false,
			"enableXffClientPort": false, "xffHeaderProcessingMode": "append", "enableTlsVersionAndCipherSuiteHeaders": false,
			"clientKeepAlive": 3600, "enableZonalShift": false, "namePrefix": "", "securityGroups": []string{},
			"enforceSecurityGroupInboundRulesOnPrivateLinkTraffic": "",
			"accessLogs":     map[string]any{"enabled": false, "bucket": "", "prefix": ""},
			"connectionLogs": map[string]any{"enabled": false, "bucket": "", "prefix": ""},
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			kind := lbKind(c.s("loadBalancerType"))
			hex := c.r.Hex("lb-id", 16)
			c.id = c.env.regional("elasticloadbalancing", fmt.Sprintf("loadbalancer/%s/%s/%s", kind, name, hex))
			c.set("arn", c.id)
			c.set("arnSuffix", fmt.Sprintf("%s/%s/%s", kind, name, hex))
			internal, _ := boolean(c.in, "internal")
			prefix := ""
			if internal {
				prefix = "internal-"
			}
			ri := regionOf(c.env.Region)
			if kind == "net" {
				c.set("dnsName", fmt.Sprintf("%s%s-%s.elb.%s.%s", prefix, name, c.r.Hex("dns", 16), c.env.Region, c.env.DNSSuffix()))
				c.set("zoneId", ri.nlbZone)
				c.def("enableCrossZoneLoadBalancing", false)
				c.def("dnsRecordClientRoutingPolicy", "any_availability_zone")
			} else {
				c.set("dnsName", fmt.Sprintf("%s%s-%d.%s.elb.%s", prefix, name, 100000000+c.r.Intn("dns", 1900000000), c.env.Region, c.env.DNSSuffix()))
				c.set("zoneId", ri.albZone)
				c.def("enableCrossZoneLoadBalancing", true)
				c.def("dnsRecordClientRoutingPolicy", "")
			}
			subnets := strings_(c.in, "subnets")
			var mappings []resource.PropertyMap
			for _, m := range objects(c.in, "subnetMappings") {
				subnets = append(subnets, str(m, "subnetId"))
			}
			for _, s := range subnets {
				mappings = append(mappings, resource.PropertyMap{
					"subnetId": pv(s), "allocationId": pv(""), "privateIpv4Address": pv(""), "ipv6Address": pv(""), "outpostId": pv(""),
				})
			}
			c.def("subnets", subnets)
			c.def("subnetMappings", mappings)
			c.setVPCFromSubnets(subnets)
			return nil
		},
		validate: func(v *validator) {
			v.elbName(true)
			v.enum("loadBalancerType", "application", "network", "gateway")
			v.enum("ipAddressType", "ipv4", "dualstack", "dualstack-without-public-ipv4")
			v.enum("desyncMitigationMode", "monitor", "defensive", "strictest")
			v.intRange("idleTimeout", 1, 4000)
		},
	})

	register(&typeSpec{
		token:   tTargetGroup,
		api:     apiInfo{"ElasticLoadBalancingV2", "ELBv2 Target Group", ops("CreateTargetGroup", "ModifyTargetGroup", "DeleteTargetGroup", "DescribeTargetGroups")},
		name:    &autoName{prop: "name", maxLen: 32, unique: true},
		replace: []string{"name", "namePrefix", "port", "protocol", "vpcId", "targetType", "protocolVersion", "ipAddressType"},
		refs:    []Reference{refVpc},
		unique: []uniqueRule{{key: regionScoped("name"), code: "DuplicateTargetGroupName",
			message: "A target group with the same name '%s' exists, but with different settings"}},
		outDefaults: map[string]any{
			"targetType": "instance", "ipAddressType": "ipv4", "deregistrationDelay": 300, "slowStart": 0,
			"proxyProtocolV2": false, "lambdaMultiValueHeadersEnabled": false, "connectionTermination": false,
			"loadBalancingAlgorithmType": "round_robin", "loadBalancingAnomalyMitigation": "off",
			"loadBalancingCrossZoneEnabled": "use_load_balancer_configuration", "preserveClientIp": "",
			"loadBalancerArns": []string{}, "namePrefix": "", "targetFailovers": []string{}, "targetHealthStates": []string{},
			"stickiness": map[string]any{"enabled": false, "type": "lb_cookie", "cookieDuration": 86400, "cookieName": ""},
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			hex := c.r.Hex("tg-id", 16)
			c.id = c.env.regional("elasticloadbalancing", "targetgroup/"+name+"/"+hex)
			c.set("arn", c.id)
			c.set("arnSuffix", "targetgroup/"+name+"/"+hex)
			proto := c.s("protocol")
			if proto == "HTTP" || proto == "HTTPS" {
				c.def("protocolVersion", "HTTP1")
			} else {
				c.def("protocolVersion", "")
			}
			hc := resource.PropertyMap{
				"enabled": pv(true), "healthyThreshold": pv(5), "interval": pv(30), "matcher": pv("200"),
				"path": pv("/"), "port": pv("traffic-port"), "protocol": pv("HTTP"), "timeout": pv(5), "unhealthyThreshold": pv(2),
			}
			if proto != "HTTP" && proto != "HTTPS" && c.s("targetType") != "lambda" {
				hc["protocol"], hc["path"], hc["matcher"] = pv("TCP"), pv(""), pv("")
				hc["healthyThreshold"], hc["timeout"], hc["unhealthyThreshold"] = pv(3), pv(10), pv(3)
			}
			for k, val := range object(c.in, "healthCheck") {
				hc[k] = val
			}
			c.set("healthCheck", hc)
			return nil
		},
		validate: func(v *validator) {
			v.elbName(false)
			v.enum("protocol", lbProtocols...)
			v.enum("targetType", "instance", "ip", "lambda", "alb")
			v.enum("protocolVersion", "HTTP1", "HTTP2", "GRPC")
			v.intRange("port", 1, 65535)
			v.intRange("deregistrationDelay", 0, 3600)
			if v.s("targetType") != "lambda" && v.known("targetType") || !v.has("targetType") {
				for _, k := range []string{"port", "protocol", "vpcId"} {
					if !v.has(k) {
						v.fail(k, "%s is required for a target group with target type other than lambda", k)
					}
				}
			}
			if hc := object(v.in, "healthCheck"); hc != nil {
				for k, r := range map[string][2]float64{"interval": {5, 300}, "timeout": {2, 120}, "healthyThreshold": {2, 10}, "unhealthyThreshold": {2, 10}} {
					if n, ok := number(hc, k); ok && (n < r[0] || n > r[1]) {
						v.fail("healthCheck."+k, "expected healthCheck.%s to be in the range (%g - %g), got %g", k, r[0], r[1], n)
					}
				}
			}
		},
	})

	register(&typeSpec{
		token:    tListener,
		api:      apiInfo{"ElasticLoadBalancingV2", "ELBv2 Listener", ops("CreateListener", "ModifyListener", "DeleteListener", "DescribeListeners")},
		required: []string{"defaultActions", "loadBalancerArn"},
		replace:  []string{"loadBalancerArn"},
		refs: []Reference{
			{Property: "loadBalancerArn", Target: tLB, Code: "LoadBalancerNotFound", Message: "One or more load balancers not found: %s"},
			refTargetGroup("defaultActions.targetGroupArn"),
			{Property: "certificateArn", Target: tCertificate, Code: "CertificateNotFound", Message: "Certificate '%s' not found"},
		},
		unique: []uniqueRule{{key: func(_ Env, out resourceMap) (string, string) {
			p, _ := number(out, "port")
			return str(out, "loadBalancerArn"), fmt.Sprintf("%g", p)
		}, code: "DuplicateListener", message: "A listener already exists on port %s of load balancer %s"}},
		outDefaults: map[string]any{
			"routingHttpRequestXAmznMtlsClientcertHeaderName":             "X-Amzn-Mtls-Clientcert",
			"routingHttpRequestXAmznMtlsClientcertIssuerHeaderName":       "X-Amzn-Mtls-Clientcert-Issuer",
			"routingHttpRequestXAmznMtlsClientcertLeafHeaderName":         "X-Amzn-Mtls-Clientcert-Leaf",
			"routingHttpRequestXAmznMtlsClientcertSerialNumberHeaderName": "X-Amzn-Mtls-Clientcert-Serial-Number",
			"routingHttpRequestXAmznMtlsClientcertSubjectHeaderName":      "X-Amzn-Mtls-Clientcert-Subject",
			"routingHttpRequestXAmznMtlsClientcertValidityHeaderName":     "X-Amzn-Mtls-Clientcert-Validity",
			"routingHttpRequestXAmznTlsCipherSuiteHeaderName":             "X-Amzn-Tls-Cipher-Suite",
			"routingHttpRequestXAmznTlsVersionHeaderName":                 "X-Amzn-Tls-Version",
			"routingHttpResponseServerEnabled":                            true,
			"alpnPolicy":                                                  "",
			"certificateArn":                                              "",
			"mutualAuthentication":                                        map[string]any{"mode": "off"},
		},
		compute: func(c *calc) error {
			lbArn := c.s("loadBalancerArn")
			kind := lbKind(lbArn)
			proto := c.s("protocol")
			if proto == "" {
				proto = map[string]string{"app": "HTTP", "net": "TCP", "gwy": ""}[kind]
				c.set("protocol", proto)
			}
			if kind == "app" && !known(c.in, "port") {
				return c.apiErr(OpCreate, "ValidationError", "A port must be specified")
			}
			if proto == "HTTPS" || proto == "TLS" {
				if c.s("certificateArn") == "" {
					return c.apiErr(OpCreate, "ValidationError", "A certificate must be specified for HTTPS listeners")
				}
				c.def("sslPolicy", "ELBSecurityPolicy-2016-08")
			} else {
				c.def("sslPolicy", "")
			}
			if kind == "net" {
				c.def("tcpIdleTimeoutSeconds", 350)
			} else {
				c.def("tcpIdleTimeoutSeconds", 0)
			}
			for _, k := range []string{"AccessControlAllowCredentials", "AccessControlAllowHeaders", "AccessControlAllowMethods",
				"AccessControlAllowOrigin", "AccessControlExposeHeaders", "AccessControlMaxAge", "ContentSecurityPolicy",
				"StrictTransportSecurity", "XContentTypeOptions", "XFrameOptions"} {
				c.def("routingHttpResponse"+k+"HeaderValue", "")
			}
			c.id = c.env.regional("elasticloadbalancing", "listener/"+lbPath(lbArn)+"/"+c.r.Hex("listener-id", 16))
			c.set("arn", c.id)
			return nil
		},
		validate: func(v *validator) {
			v.enum("protocol", lbProtocols...)
			v.intRange("port", 1, 65535)
			validateActions(v, "defaultActions")
		},
	})

	register(&typeSpec{
		token:    tListenerRule,
		api:      apiInfo{"ElasticLoadBalancingV2", "ELBv2 Listener Rule", ops("CreateRule", "ModifyRule", "DeleteRule", "DescribeRules")},
		required: []string{"actions", "conditions", "listenerArn"},
		replace:  []string{"listenerArn"},
		refs: []Reference{
			{Property: "listenerArn", Target: tListener, Code: "ListenerNotFound", Message: "One or more listeners not found: %s"},
			refTargetGroup("actions.targetGroupArn"),
		},
		unique: []uniqueRule{{key: func(_ Env, out resourceMap) (string, string) {
			p, _ := number(out, "priority")
			return str(out, "listenerArn"), fmt.Sprintf("%g", p)
		}, code: "PriorityInUse", message: "Priority '%s' is currently in use"}},
		compute: func(c *calc) error {
			listener := c.s("listenerArn")
			if !known(c.in, "priority") {
				c.set("priority", max(1, c.next("elbv2-rule-priority:"+listener)))
			}
			suffix := strings.TrimPrefix(listener[strings.Index(listener, ":listener/")+1:], "listener/")
			c.id = c.env.regional("elasticloadbalancing", "listener-rule/"+suffix+"/"+c.r.Hex("rule-id", 16))
			c.set("arn", c.id)
			return nil
		},
		validate: func(v *validator) {
			v.intRange("priority", 1, 50000)
			validateActions(v, "actions")
			conds := objects(v.in, "conditions")
			if len(conds) > 5 {
				v.fail("conditions", "a rule can have at most 5 conditions, got %d", len(conds))
			}
			for i, cond := range conds {
				n := 0
				for _, k := range []string{"hostHeader", "httpHeader", "httpRequestMethod", "pathPattern", "queryStrings", "sourceIp"} {
					if _, ok := get(cond, k); ok {
						n++
					}
				}
				if n != 1 {
					v.fail(fmt.Sprintf("conditions[%d]", i), "each condition must set exactly one of hostHeader, httpHeader, httpRequestMethod, pathPattern, queryStrings, sourceIp")
				}
				if h := object(cond, "httpHeader"); h != nil && known(h, "httpHeaderName") && !regexp_(`^[A-Za-z0-9!#$%&'*+.^_`+"`"+`|~-]{1,40}$`).MatchString(str(h, "httpHeaderName")) {
					v.fail(fmt.Sprintf("conditions[%d].httpHeader.httpHeaderName", i), "invalid HTTP header name %q", str(h, "httpHeaderName"))
				}
			}
		},
	})
}

// elbName checks the name rules load balancers and target groups share:
// at most 32 alphanumerics and inner hyphens; a load balancer's name may
// not start with "internal-" (AWS uses it for internal DNS names).
func (v *validator) elbName(loadBalancer bool) {
	if !v.known("name") {
		return
	}
	n := v.s("name")
	switch {
	case len(n) > 32:
		v.fail("name", "\"name\" cannot be longer than 32 characters: %q", n)
	case !reLBName.MatchString(n):
		v.fail("name", "only alphanumeric characters and hyphens allowed in \"name\", and it cannot begin or end with a hyphen: %q", n)
	case loadBalancer && strings.HasPrefix(n, "internal-"):
		v.fail("name", "\"name\" cannot begin with \"internal-\": %q", n)
	}
}
