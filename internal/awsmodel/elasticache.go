package awsmodel

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

const (
	tCacheSubnetGroup = "aws:elasticache/subnetGroup:SubnetGroup"
	tCacheUser        = "aws:elasticache/user:User"
	tCacheUserGroup   = "aws:elasticache/userGroup:UserGroup"
	tReplicationGroup = "aws:elasticache/replicationGroup:ReplicationGroup"
)

func cacheVersion(engine, v string) (version, actual, paramGroup string) {
	if engine == "valkey" {
		if v == "" {
			v = "8.0"
		}
		return v, cachePatch(v, "8.0.1"), "default.valkey" + strings.SplitN(v, ".", 2)[0]
	}
	if v == "" {
		v = "7.1"
	}
	return v, cachePatch(v, "7.1.0"), "default.redis" + strings.SplitN(v, ".", 2)[0]
}

func cachePatch(v, def string) string {
	switch strings.Count(v, ".") {
	case 0:
		return v + ".0.0"
	case 1:
		if strings.HasSuffix(v, ".x") {
			return strings.TrimSuffix(v, ".x") + ".0.0"
		}
		return v + ".0"
	}
	if v == "" {
		return def
	}
	return v
}

func init() {
	ecOps := func(verb string) [4]string {
		return ops("Create"+verb, "Modify"+verb, "Delete"+verb, "Describe"+verb+"s")
	}

	register(&typeSpec{
		token:    tCacheSubnetGroup,
		api:      apiInfo{"ElastiCache", "ElastiCache Subnet Group", ecOps("CacheSubnetGroup")},
		required: []string{"subnetIds"},
		name:     &autoName{prop: "name", maxLen: 255, lower: true, unique: true},
		defaults: map[string]any{"description": "Managed by Pulumi"},
		replace:  []string{"name"},
		refs:     []Reference{refSubnet("subnetIds")},
		unique:   []uniqueRule{{key: regionScoped("name"), code: "CacheSubnetGroupAlreadyExists", message: "Cache subnet group %s already exists."}},
		compute: func(c *calc) error {
			c.id = c.outStr("name")
			c.set("arn", c.env.regional("elasticache", "subnetgroup:"+c.id))
			c.setVPCFromSubnets(strings_(c.in, "subnetIds"))
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 255, regexp_(`^[a-z0-9-]+$`), "only lowercase alphanumeric characters and hyphens allowed")
		},
	})

	register(&typeSpec{
		token:       tCacheUser,
		api:         apiInfo{"ElastiCache", "ElastiCache User", ecOps("User")},
		required:    []string{"accessString", "engine", "userId", "userName"},
		replace:     []string{"userId", "userName"},
		unique:      []uniqueRule{{key: regionScoped("userId"), code: "UserAlreadyExists", message: "User %s already exists."}},
		outDefaults: map[string]any{"noPasswordRequired": false},
		compute: func(c *calc) error {
			c.id = c.s("userId")
			c.set("arn", c.env.regional("elasticache", "user:"+c.id))
			mode := object(c.in, "authenticationMode")
			typ := str(mode, "type")
			n := len(array(c.in, "passwords"))
			if pw := array(mode, "passwords"); len(pw) > 0 {
				n = len(pw)
			}
			if typ == "" {
				switch {
				case n > 0:
					typ = "password"
				case func() bool { b, _ := boolean(c.in, "noPasswordRequired"); return b }():
					typ = "no-password-required"
				default:
					typ = "no-password-required"
				}
			}
			c.set("authenticationMode", resourceMap{
				"type":          pv(typ),
				"passwordCount": pv(n),
			})
			return nil
		},
		validate: func(v *validator) {
			v.enumValue("engine", strings.ToLower(v.s("engine")), "redis", "valkey")
			v.name("userId", 40, regexp_(`^[a-zA-Z][a-zA-Z0-9-]*$`), "must begin with a letter and contain only alphanumeric characters and hyphens")
			for i, p := range strings_(v.in, "passwords") {
				if len(p) < 16 || len(p) > 128 {
					v.fail(fmt.Sprintf("passwords[%d]", i), "passwords must be between 16 and 128 characters")
				}
			}
		},
	})

	register(&typeSpec{
		token:    tCacheUserGroup,
		api:      apiInfo{"ElastiCache", "ElastiCache User Group", ecOps("UserGroup")},
		required: []string{"engine", "userGroupId"},
		replace:  []string{"userGroupId", "engine"},
		refs:     []Reference{{Property: "userIds", Target: tCacheUser, Code: "UserNotFound", Message: "User %s not found."}},
		unique:   []uniqueRule{{key: regionScoped("userGroupId"), code: "UserGroupAlreadyExists", message: "User Group %s already exists."}},
		compute: func(c *calc) error {
			c.id = c.s("userGroupId")
			c.set("arn", c.env.regional("elasticache", "usergroup:"+c.id))
			return nil
		},
		validate: func(v *validator) {
			v.enumValue("engine", strings.ToLower(v.s("engine")), "redis", "valkey")
			v.name("userGroupId", 40, regexp_(`^[a-zA-Z][a-zA-Z0-9-]*$`), "must begin with a letter and contain only alphanumeric characters and hyphens")
		},
	})

	register(&typeSpec{
		token:    tReplicationGroup,
		api:      apiInfo{"ElastiCache", "ElastiCache Replication Group", ecOps("ReplicationGroup")},
		required: []string{"description"},
		name:     &autoName{prop: "replicationGroupId", maxLen: 40, lower: true, unique: true},
		replace: []string{"replicationGroupId", "atRestEncryptionEnabled", "subnetGroupName", "kmsKeyId", "port", "snapshotArns",
			"snapshotName", "preferredCacheClusterAzs", "dataTieringEnabled", "securityGroupNames", "globalReplicationGroupId"},
		recompute: []string{"memberClusters", "engineVersionActual", "clusterEnabled", "transitEncryptionMode"},
		refs: []Reference{
			{Property: "subnetGroupName", Target: tCacheSubnetGroup, Code: "CacheSubnetGroupNotFoundFault", Message: "Cache subnet group %s not found."},
			refSG("securityGroupIds"),
			{Property: "userGroupIds", Target: tCacheUserGroup, Code: "UserGroupNotFound", Message: "User group %s not found."},
		},
		unique: []uniqueRule{{key: regionScoped("replicationGroupId"), code: "ReplicationGroupAlreadyExists", message: "Replication group %s already exists."}},
		outDefaults: map[string]any{
			"engine": "redis", "port": 6379, "atRestEncryptionEnabled": false, "transitEncryptionEnabled": false,
			"multiAzEnabled": false, "automaticFailoverEnabled": false, "autoMinorVersionUpgrade": true,
			"maintenanceWindow": "sun:05:00-sun:06:00", "snapshotWindow": "06:30-07:30", "snapshotRetentionLimit": 0,
			"networkType": "ipv4", "ipDiscovery": "ipv4", "dataTieringEnabled": false, "globalReplicationGroupId": "",
			"securityGroupNames": []string{}, "securityGroupIds": []string{}, "applyImmediately": false,
			"clusterMode": "disabled", "subnetGroupName": "default", "userGroupIds": []string{},
			"logDeliveryConfigurations": []string{}, "snapshotArns": []string{},
		},
		compute: func(c *calc) error {
			id := c.outStr("replicationGroupId")
			c.id = id
			if c.s("nodeType") == "" && c.s("globalReplicationGroupId") == "" {
				return c.apiErr(OpCreate, "InvalidParameterValue", "The parameter CacheNodeType must be provided and must not be blank.")
			}
			engine := c.s("engine")
			if engine == "" {
				engine = "redis"
			}
			version, actual, pg := cacheVersion(engine, c.s("engineVersion"))
			c.def("engineVersion", version)
			c.set("engineVersionActual", actual)
			c.def("parameterGroupName", pg)
			c.set("arn", c.env.regional("elasticache", "replicationgroup:"+id))
			groups, hasGroups := number(c.in, "numNodeGroups")
			clusterOn := c.s("clusterMode") == "enabled" || (hasGroups && groups > 1)
			c.set("clusterEnabled", clusterOn)
			tls, _ := boolean(c.in, "transitEncryptionEnabled")
			if tls {
				c.def("transitEncryptionMode", "required")
			} else {
				c.def("transitEncryptionMode", "")
			}
			hash := newRand([]byte("cache-endpoint:"+c.env.Account+c.env.Region)).Chars("h", 6, lowerAlnum)
			suffix := fmt.Sprintf("%s.%s.cache.%s", hash, shortRegion(c.env.Region), c.env.DNSSuffix())
			var members []string
			if clusterOn {
				replicas, _ := number(c.in, "replicasPerNodeGroup")
				if !hasGroups {
					groups = 1
				}
				c.def("numNodeGroups", groups)
				c.def("replicasPerNodeGroup", replicas)
				c.def("numCacheClusters", groups*(replicas+1))
				for g := 1; g <= int(groups); g++ {
					for n := 1; n <= int(replicas)+1; n++ {
						members = append(members, fmt.Sprintf("%s-%04d-%03d", id, g, n))
					}
				}
				c.set("configurationEndpointAddress", "clustercfg."+id+"."+suffix)
				c.set("primaryEndpointAddress", "")
				c.set("readerEndpointAddress", "")
			} else {
				n, ok := number(c.in, "numCacheClusters")
				if !ok {
					n = 1
				}
				c.def("numCacheClusters", n)
				c.def("numNodeGroups", 1)
				c.def("replicasPerNodeGroup", n-1)
				for i := 1; i <= int(n); i++ {
					members = append(members, fmt.Sprintf("%s-%03d", id, i))
				}
				c.set("configurationEndpointAddress", "")
				if tls {
					c.set("primaryEndpointAddress", "master."+id+"."+suffix)
					c.set("readerEndpointAddress", "replica."+id+"."+suffix)
				} else {
					c.set("primaryEndpointAddress", id+"."+hash+".ng.0001."+shortRegion(c.env.Region)+".cache."+c.env.DNSSuffix())
					c.set("readerEndpointAddress", id+"-ro."+hash+".ng.0001."+shortRegion(c.env.Region)+".cache."+c.env.DNSSuffix())
				}
			}
			c.set("memberClusters", members)
			if c.s("authToken") != "" && !tls {
				return c.apiErr(OpCreate, "InvalidParameterValue", "The AUTH token is only supported when encryption-in-transit is enabled")
			}
			if enc, _ := boolean(c.in, "atRestEncryptionEnabled"); enc {
				c.def("kmsKeyId", "")
			}
			return nil
		},
		validate: func(v *validator) {
			v.enum("engine", "redis", "valkey")
			v.name("replicationGroupId", 40, regexp_(`^[a-zA-Z][a-zA-Z0-9-]*$`), "must begin with a letter and contain only alphanumeric characters and hyphens")
			if strings.Contains(v.s("replicationGroupId"), "--") || strings.HasSuffix(v.s("replicationGroupId"), "-") {
				v.fail("replicationGroupId", "replicationGroupId cannot contain two consecutive hyphens or end with a hyphen")
			}
			v.intRange("numCacheClusters", 1, 6)
			failover, _ := boolean(v.in, "automaticFailoverEnabled")
			if n, ok := number(v.in, "numCacheClusters"); ok && failover && n < 2 && !v.has("numNodeGroups") {
				v.fail("numCacheClusters", "\"numCacheClusters\": must be at least 2 if automaticFailoverEnabled is true")
			}
			if multiAZ, _ := boolean(v.in, "multiAzEnabled"); multiAZ && !failover {
				v.fail("multiAzEnabled", "automaticFailoverEnabled must be true if multiAzEnabled is true")
			}
			if v.known("authToken") {
				if n := len(v.s("authToken")); n < 16 || n > 128 {
					v.fail("authToken", "authToken must contain from 16 to 128 alphanumeric characters or symbols (excluding @, \", and /)")
				}
			}
			v.enum("clusterMode", "enabled", "disabled", "compatible")
			v.enum("networkType", "ipv4", "ipv6", "dual_stack")
			v.enum("transitEncryptionMode", "preferred", "required")
		},
	})
}

// An IAM-authenticated user works only in a cache whose engine supports
// IAM authentication (Valkey 7.2+, Redis OSS 7.0+). The document gives the
// limit, not the error; ElastiCache answers incompatible parameters of a
// CreateReplicationGroup with InvalidParameterCombination, which is what
// the mocks and the simulator return.
func init() {
	rules = append(rules, Rule{
		ID:      "elasticache.iam-auth-engine-version",
		Doc:     awsfacts.CacheIAMAuthDoc,
		Code:    "InvalidParameterCombination",
		applies: types(tReplicationGroup),
		check: func(r ruleInput) string {
			if !known(r.in, "engineVersion") || !known(r.in, "userGroupIds") {
				return ""
			}
			engine := str(r.in, "engine")
			if engine == "" {
				engine = "redis"
			}
			version := str(r.in, "engineVersion")
			if version == "" {
				return "" // the engine's default, which supports IAM
			}
			for _, group := range strings_(r.in, "userGroupIds") {
				_, g, ok := r.lookup(group)
				if !ok {
					continue // a missing group is the reference rule's refusal
				}
				for _, user := range strings_(g, "userIds") {
					_, u, ok := r.lookup(user)
					if !ok || str(object(u, "authenticationMode"), "type") != "iam" {
						continue
					}
					if err := awsfacts.CacheIAMAuthProblem(engine, version); err != nil {
						return fmt.Sprintf("user %s of user group %s authenticates with IAM: %v", user, group, err)
					}
				}
			}
			return ""
		},
	})
}
