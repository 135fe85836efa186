package awsmodel

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tDBSubnetGroup    = "aws:rds/subnetGroup:SubnetGroup"
	tClusterParams    = "aws:rds/clusterParameterGroup:ClusterParameterGroup"
	tCluster          = "aws:rds/cluster:Cluster"
	tClusterInstance  = "aws:rds/clusterInstance:ClusterInstance"
	rdsCACertificate  = "rds-ca-rsa2048-g1"
	rdsCAValidTillFmt = "2006-01-02T15:04:05Z"
)

var rdsEngines = []string{"aurora", "aurora-mysql", "aurora-postgresql", "mysql", "postgres"}

// rdsEngineDefaults: default version, port and parameter group family.
func rdsEngineDefaults(engine string) (version string, port int, family string) {
	switch engine {
	case "aurora-mysql", "aurora":
		return "8.0.mysql_aurora.3.08.2", 3306, "aurora-mysql8.0"
	case "mysql":
		return "8.0.41", 3306, "mysql8.0"
	case "postgres":
		return "17.4", 5432, "postgres17"
	default:
		return "16.6", 5432, "aurora-postgresql16"
	}
}

// rdsActualVersion resolves a major-only version ("16") to the minor AWS
// picks.
func rdsActualVersion(engine, v string) string {
	if strings.Contains(v, ".") || v == "" {
		if v == "" {
			v, _, _ = rdsEngineDefaults(engine)
		}
		return v
	}
	switch engine {
	case "aurora-postgresql", "postgres":
		latest := map[string]string{"13": "13.20", "14": "14.17", "15": "15.12", "16": "16.8", "17": "17.4"}
		if full, ok := latest[v]; ok {
			return full
		}
	}
	return v + ".0"
}

func rdsFamily(engine, version string) string {
	_, _, fam := rdsEngineDefaults(engine)
	if version == "" {
		return fam
	}
	major := strings.SplitN(version, ".", 2)[0]
	switch engine {
	case "aurora-postgresql":
		return "aurora-postgresql" + major
	case "postgres":
		return "postgres" + major
	}
	return fam
}

// rdsSuffix is the account+region specific part of RDS endpoints
// (cluster.<suffix>.<region>.rds.amazonaws.com).
func rdsSuffix(env Env) string {
	return newRand([]byte("rds-endpoint:"+env.Account+env.Region)).Chars("suffix", 12, lowerAlnum)
}

// rdsHost builds an RDS endpoint: prefix "db." gives an instance endpoint
// (db.<suffix>.…), prefix "db.cluster-" a cluster one (db.cluster-<suffix>.…).
func rdsHost(env Env, prefix string) string {
	if !strings.HasSuffix(prefix, "-") {
		prefix += "."
	}
	return fmt.Sprintf("%s%s.%s.rds.%s", prefix, rdsSuffix(env), env.Region, env.DNSSuffix())
}

var reRDSIdentifier = regexp_(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

func init() {
	register(&typeSpec{
		token:    tDBSubnetGroup,
		api:      apiInfo{"RDS", "RDS DB Subnet Group", ops("CreateDBSubnetGroup", "ModifyDBSubnetGroup", "DeleteDBSubnetGroup", "DescribeDBSubnetGroups")},
		required: []string{"subnetIds"},
		name:     &autoName{prop: "name", maxLen: 255, lower: true, unique: true},
		defaults: map[string]any{"description": "Managed by Pulumi"},
		replace:  []string{"name", "namePrefix"},
		refs:     []Reference{refSubnet("subnetIds")},
		unique: []uniqueRule{{key: regionScoped("name"), code: "DBSubnetGroupAlreadyExists",
			message: "The DB subnet group '%s' already exists."}},
		outDefaults: map[string]any{"namePrefix": "", "supportedNetworkTypes": []string{"IPV4"}},
		compute: func(c *calc) error {
			c.id = c.outStr("name")
			c.set("arn", c.env.regional("rds", "subgrp:"+c.id))
			c.setVPCFromSubnets(strings_(c.in, "subnetIds"))
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 255, regexp_(`^[ a-z0-9_.-]+$`), "only lowercase alphanumeric characters, hyphens, underscores, periods, and spaces allowed")
			if v.s("name") == "default" {
				v.fail("name", "name cannot be 'default'")
			}
		},
	})

	register(&typeSpec{
		token:       tClusterParams,
		api:         apiInfo{"RDS", "RDS Cluster Parameter Group", ops("CreateDBClusterParameterGroup", "ModifyDBClusterParameterGroup", "DeleteDBClusterParameterGroup", "DescribeDBClusterParameterGroups")},
		required:    []string{"family"},
		name:        &autoName{prop: "name", maxLen: 255, lower: true, unique: true},
		defaults:    map[string]any{"description": "Managed by Pulumi"},
		replace:     []string{"name", "namePrefix", "family", "description"},
		unique:      []uniqueRule{{key: regionScoped("name"), code: "DBParameterGroupAlreadyExists", message: "Parameter group %s already exists"}},
		outDefaults: map[string]any{"namePrefix": "", "parameters": []string{}},
		compute: func(c *calc) error {
			c.id = c.outStr("name")
			c.set("arn", c.env.regional("rds", "cluster-pg:"+c.id))
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 255, regexp_(`^[a-z][a-z0-9-]*$`), "only lowercase alphanumeric characters and hyphens allowed, first character must be a letter")
			for i, p := range objects(v.in, "parameters") {
				v.enumValue(fmt.Sprintf("parameters[%d].applyMethod", i), str(p, "applyMethod"), "immediate", "pending-reboot")
			}
		},
	})

	register(&typeSpec{
		token:    tCluster,
		api:      apiInfo{"RDS", "RDS Cluster", ops("CreateDBCluster", "ModifyDBCluster", "DeleteDBCluster", "DescribeDBClusters")},
		required: []string{"engine"},
		replace: []string{"availabilityZones", "clusterIdentifier", "clusterIdentifierPrefix", "databaseName", "dbSubnetGroupName",
			"engine", "engineMode", "kmsKeyId", "masterUsername", "snapshotIdentifier", "sourceRegion", "storageEncrypted",
			"restoreToPointInTime", "s3Import", "dbClusterInstanceClass"},
		recompute: []string{"engineVersionActual", "masterUserSecrets", "masterUserSecretKmsKeyId"},
		refs: []Reference{
			{Property: "dbSubnetGroupName", Target: tDBSubnetGroup, Code: "DBSubnetGroupNotFoundFault", Message: "DBSubnetGroup '%s' not found."},
			{Property: "dbClusterParameterGroupName", Target: tClusterParams, Code: "DBClusterParameterGroupNotFound", Message: "DBClusterParameterGroup not found: %s",
				Skip: func(v string) bool { return strings.HasPrefix(v, "default.") }},
			refSG("vpcSecurityGroupIds"),
		},
		unique: []uniqueRule{{key: regionScoped("clusterIdentifier"), code: "DBClusterAlreadyExistsFault", message: "DB Cluster already exists"}},
		outDefaults: map[string]any{
			"backupRetentionPeriod": 1, "preferredBackupWindow": "07:06-07:36", "preferredMaintenanceWindow": "sun:05:39-sun:06:09",
			"caCertificateIdentifier": rdsCACertificate, "clusterMembers": []string{}, "iamRoles": []string{},
			"enabledCloudwatchLogsExports": []string{}, "engineMode": "provisioned", "networkType": "IPV4",
			"storageType": "aurora", "allocatedStorage": 1, "iops": 0, "monitoringInterval": 0, "monitoringRoleArn": "",
			"performanceInsightsEnabled": false, "performanceInsightsKmsKeyId": "", "performanceInsightsRetentionPeriod": 0,
			"databaseInsightsMode": "standard", "engineLifecycleSupport": "open-source-rds-extended-support",
			"clusterScalabilityType": "standard", "dbSystemId": "", "storageEncrypted": false, "deletionProtection": false,
			"skipFinalSnapshot": false, "copyTagsToSnapshot": false, "iamDatabaseAuthenticationEnabled": false,
			"applyImmediately": false, "dbSubnetGroupName": "default", "clusterIdentifierPrefix": "",
			"masterUserSecretKmsKeyId": "", "masterUserSecrets": []string{}, "databaseName": "",
			"enableHttpEndpoint": false,
		},
		compute: func(c *calc) error {
			engine := c.s("engine")
			if c.s("masterUsername") == "" && c.s("snapshotIdentifier") == "" && c.s("replicationSourceIdentifier") == "" && c.s("globalClusterIdentifier") == "" {
				return c.apiErr(OpCreate, "InvalidParameterValue", "The parameter MasterUsername must be provided and must not be blank.")
			}
			manage, _ := boolean(c.in, "manageMasterUserPassword")
			if !manage && c.s("masterPassword") == "" && c.s("snapshotIdentifier") == "" && c.s("replicationSourceIdentifier") == "" {
				return c.apiErr(OpCreate, "InvalidParameterValue", "The parameter MasterUserPassword must be provided and must not be blank.")
			}
			id := c.s("clusterIdentifier")
			if id == "" {
				if p := c.s("clusterIdentifierPrefix"); p != "" {
					id = p + tfUniqueID(c.r, c.now, "cluster-id")
				} else {
					id = "tf-" + tfUniqueID(c.r, c.now, "cluster-id")
				}
				c.set("clusterIdentifier", id)
			}
			c.id = id
			version, port, _ := rdsEngineDefaults(engine)
			if v := c.s("engineVersion"); v != "" {
				version = v
			}
			if v := c.s("engineVersion"); v != "" && (!c.update || str(c.old, "engineVersion") != v) && EngineVersionRetired(c.cloud, engine, v) {
				op := OpCreate
				if c.update {
					op = OpUpdate
				}
				return c.apiErr(op, "InvalidParameterCombination", "Cannot find version %s for %s", v, engine)
			}
			c.def("engineVersion", version)
			c.set("engineVersionActual", rdsActualVersion(engine, version))
			c.def("port", port)
			c.def("dbClusterParameterGroupName", "default."+rdsFamily(engine, version))
			c.set("arn", c.env.regional("rds", "cluster:"+id))
			c.set("endpoint", rdsHost(c.env, id+".cluster-"))
			c.set("readerEndpoint", rdsHost(c.env, id+".cluster-ro-"))
			c.set("clusterResourceId", "cluster-"+c.r.Chars("resource-id", 26, upperAlnum))
			c.set("hostedZoneId", regionOf(c.env.Region).rdsZone)
			c.set("caCertificateValidTill", c.now.AddDate(1, 0, 0).UTC().Format(rdsCAValidTillFmt))
			var azs []string
			for _, z := range Zones(c.env.Region)[:min(3, len(Zones(c.env.Region)))] {
				azs = append(azs, z.Name)
			}
			c.def("availabilityZones", azs)
			kmsKey := c.env.regional("kms", "key/"+newRand([]byte("aws/rds:"+c.env.Account+c.env.Region)).UUID("key"))
			if enc, _ := boolean(c.in, "storageEncrypted"); enc {
				c.def("kmsKeyId", kmsKey)
			} else {
				c.def("kmsKeyId", "")
			}
			if manage {
				secretKey := c.s("masterUserSecretKmsKeyId")
				if secretKey == "" {
					secretKey = c.env.regional("kms", "key/"+newRand([]byte("aws/secretsmanager:"+c.env.Account+c.env.Region)).UUID("key"))
				}
				c.set("masterUserSecretKmsKeyId", secretKey)
				secretARN := c.env.regional("secretsmanager", "secret:rds!cluster-"+c.r.UUID("master-secret")+"-"+c.r.Chars("master-secret-suffix", 6, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
				c.set("masterUserSecrets", []resource.PropertyMap{{
					"kmsKeyId":     resource.NewStringProperty(secretKey),
					"secretArn":    resource.NewStringProperty(secretARN),
					"secretStatus": resource.NewStringProperty("active"),
				}})
			}
			return nil
		},
		validate: func(v *validator) {
			v.enum("engine", rdsEngines...)
			v.enum("engineMode", "provisioned", "serverless", "parallelquery", "global", "multimaster")
			v.name("clusterIdentifier", 63, reRDSIdentifier, "first character must be a letter, only lowercase alphanumeric characters and hyphens allowed, no two consecutive hyphens, cannot end with a hyphen")
			if manage, _ := boolean(v.in, "manageMasterUserPassword"); manage && v.has("masterPassword") {
				v.fail("masterPassword", "\"masterPassword\": conflicts with manageMasterUserPassword")
			}
			if v.known("masterPassword") && len(v.s("masterPassword")) < 8 {
				v.fail("masterPassword", "masterPassword must be at least 8 characters")
			}
			v.name("masterUsername", 63, regexp_(`^[a-zA-Z][a-zA-Z0-9_]*$`), "must begin with a letter and contain only alphanumeric characters and underscores")
			v.intRange("backupRetentionPeriod", 1, 35)
			v.intRange("port", 1150, 65535)
		},
		deleteCheck: func(out resource.PropertyMap) error {
			s := specs[tCluster]
			if dp, _ := boolean(out, "deletionProtection"); dp {
				return s.apiError(OpDelete, "", "InvalidParameterCombination", "Cannot delete protected Cluster, please disable deletion protection and try again.")
			}
			if skip, _ := boolean(out, "skipFinalSnapshot"); !skip && str(out, "finalSnapshotIdentifier") == "" {
				return fmt.Errorf("RDS Cluster final_snapshot_identifier is required when skip_final_snapshot is false")
			}
			return nil
		},
	})

	register(&typeSpec{
		token:    tClusterInstance,
		api:      apiInfo{"RDS", "RDS Cluster Instance", ops("CreateDBInstance", "ModifyDBInstance", "DeleteDBInstance", "DescribeDBInstances")},
		required: []string{"clusterIdentifier", "engine", "instanceClass"},
		name:     &autoName{prop: "identifier", maxLen: 63, lower: true, unique: true},
		replace: []string{"clusterIdentifier", "engine", "identifier", "identifierPrefix", "dbSubnetGroupName",
			"availabilityZone", "customIamInstanceProfile"},
		recompute: []string{"engineVersionActual"},
		refs:      []Reference{{Property: "clusterIdentifier", Target: tCluster, Code: "DBClusterNotFoundFault", Message: "DBCluster %s not found."}},
		unique:    []uniqueRule{{key: regionScoped("identifier"), code: "DBInstanceAlreadyExists", message: "DB instance already exists"}},
		outDefaults: map[string]any{
			"networkType": "IPV4", "caCertIdentifier": rdsCACertificate, "monitoringInterval": 0, "monitoringRoleArn": "",
			"performanceInsightsEnabled": false, "performanceInsightsKmsKeyId": "", "performanceInsightsRetentionPeriod": 0,
			"promotionTier": 0, "publiclyAccessible": false, "autoMinorVersionUpgrade": true, "copyTagsToSnapshot": false,
			"applyImmediately": false, "identifierPrefix": "", "forceDestroy": false,
		},
		compute: func(c *calc) error {
			id := c.outStr("identifier")
			c.id = id
			engine := c.s("engine")
			version, port, _ := rdsEngineDefaults(engine)
			clusterID := c.s("clusterIdentifier")
			_, cl, hasCluster := c.lookup(clusterID)
			if hasCluster {
				if v := str(cl, "engineVersion"); v != "" {
					version = v
				}
				if p, ok := number(cl, "port"); ok {
					port = int(p)
				}
			}
			if v := c.s("engineVersion"); v != "" {
				version = v
			}
			c.def("engineVersion", version)
			c.set("engineVersionActual", rdsActualVersion(engine, version))
			c.set("port", port)
			c.set("arn", c.env.regional("rds", "db:"+id))
			c.set("endpoint", rdsHost(c.env, id))
			c.set("dbiResourceId", "db-"+c.r.Chars("dbi-resource-id", 26, upperAlnum))
			member := max(1, c.next("rds-cluster-members:"+c.env.Region+":"+clusterID))
			c.set("writer", member == 1)
			zones := Zones(c.env.Region)
			c.def("availabilityZone", zones[(member-1)%len(zones)].Name)
			c.def("dbParameterGroupName", "default."+rdsFamily(engine, version))
			enc, kms, subnets := false, "", "default"
			if hasCluster {
				enc, _ = boolean(cl, "storageEncrypted")
				kms = str(cl, "kmsKeyId")
				if s := str(cl, "dbSubnetGroupName"); s != "" {
					subnets = s
				}
				c.def("preferredBackupWindow", str(cl, "preferredBackupWindow"))
			}
			c.set("storageEncrypted", enc)
			c.set("kmsKeyId", kms)
			c.def("dbSubnetGroupName", subnets)
			c.def("preferredBackupWindow", "07:06-07:36")
			c.def("preferredMaintenanceWindow", "sat:08:41-sat:09:11")
			return nil
		},
		validate: func(v *validator) {
			v.enum("engine", rdsEngines...)
			if v.known("instanceClass") && !strings.HasPrefix(v.s("instanceClass"), "db.") {
				v.fail("instanceClass", "expected instanceClass to start with \"db.\", got %s", v.s("instanceClass"))
			}
			v.name("identifier", 63, reRDSIdentifier, "first character must be a letter, only lowercase alphanumeric characters and hyphens allowed")
			v.intRange("promotionTier", 0, 15)
		},
	})
}

// setVPCFromSubnets sets vpcId from the first known subnet (subnet groups
// and load balancers report the VPC their subnets are in), or a stable
// made-up one when none is known.
func (c *calc) setVPCFromSubnets(subnets []string) {
	for _, sn := range subnets {
		if _, s, ok := c.lookup(sn); ok {
			c.set("vpcId", str(s, "vpcId"))
			return
		}
	}
	c.def("vpcId", newRand([]byte("vpc-of:"+strings.Join(subnets, ","))).ResourceID("vpc"))
}

// EngineVersionLookupKey is the Cloud.Lookup key that asks whether AWS
// still offers engine at version for new resources. A cloud that knows
// (the simulator) answers with outputs {"status": "retired"} for a version
// it no longer offers; the mocks know nothing and refuse nothing.
//
// AWS stops offering an old minor of Aurora PostgreSQL for new clusters
// ahead of its end of standard support: CreateDBCluster then fails with
// InvalidParameterCombination "Cannot find version 15.8 for
// aurora-postgresql", and DescribeDBEngineVersions (Engine, EngineVersion)
// returns no DBEngineVersion for it. A running cluster keeps its version
// until it is upgraded. (Amazon Aurora User Guide, "Amazon Aurora
// PostgreSQL updates" / "Aurora PostgreSQL release calendar"; Amazon RDS
// API Reference, DescribeDBEngineVersions and CreateDBCluster errors.)
func EngineVersionLookupKey(engine, version string) string {
	return "rds-engine-version:" + engine + ":" + version
}

// EngineVersionRetired reports whether the cloud says AWS no longer
// offers engine at version for new resources.
func EngineVersionRetired(cloud Cloud, engine, version string) bool {
	if cloud == nil {
		return false
	}
	_, out, ok := cloud.Lookup(EngineVersionLookupKey(engine, version))
	return ok && str(out, "status") == "retired"
}
