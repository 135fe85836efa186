package awsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsapi/wire"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The simulator's AWS API endpoint: the same HTTP APIs AWS serves, on a
// loopback port, answered from the simulated cloud, so cellctl's
// aws-sdk-go-v2 readers (internal/awsapi) run unchanged against it
// (BaseEndpoint + static credentials). Protocols are the ones the pinned
// clients speak:
//
//   - CloudWatch (service/cloudwatch v1.76.0): Smithy RPC v2 CBOR,
//     POST /service/GraniteServiceVersion20100801/operation/<Op>;
//     DescribeAlarms and GetMetricData.
//   - Service Quotas (service/servicequotas v1.43.12): AWS JSON 1.1,
//     POST / with X-Amz-Target: ServiceQuotasV20190624.<Op>;
//     ListServiceQuotas, GetServiceQuota, GetAWSDefaultServiceQuota.
//   - Route 53 (service/route53 v1.71.0): REST-XML, GetHostedZone
//     (route53.go).
//   - Lambda (service/lambda v1.118.0): REST-JSON, GetAccountSettings,
//     ListVersionsByFunction, DeleteFunction with a Qualifier (lambda.go).
//   - KMS (service/kms, as gocloud.dev/secrets/awskms calls it): AWS JSON
//     1.1, X-Amz-Target: TrentService.<Op>; Encrypt, Decrypt,
//     GenerateDataKey, DescribeKey (kms.go).
//   - ECS (service/ecs v1.106.0): AWS JSON 1.1, X-Amz-Target:
//     AmazonEC2ContainerServiceV20141113.<Op>; RegisterTaskDefinition,
//     DescribeTaskDefinition, DeregisterTaskDefinition, RunTask,
//     DescribeTasks, StopTask over the store's task model (ecs.go).
//   - CloudWatch Logs (service/cloudwatchlogs v1.92.2): AWS JSON 1.1,
//     X-Amz-Target: Logs_20140328.<Op>; GetLogEvents (logs.go).
//   - RDS Data API (service/rdsdata v1.33.0): REST-JSON, POST /Execute
//     (ExecuteStatement) and POST /BatchExecute (BatchExecuteStatement),
//     errors in X-Amzn-ErrorType (rdsdata.go).
//   - The EC2, RDS, ElastiCache, ELBv2 and IAM describe calls: AWS Query
//     (query.go).
//   - STS (service/sts v1.52.0): AWS Query; AssumeRole and
//     GetCallerIdentity (sts.go).
//
// Each request is answered from the store of the account that signed it
// (the access key of its SigV4 credential scope, sts.go's forCaller).
//
// Requests must be SigV4-signed (the signature itself is not checked: the
// credentials are fake by design, but the access key must be one the
// simulator knows). Errors use each protocol's shape and
// AWS's codes.

const (
	cloudWatchService = "GraniteServiceVersion20100801"
	quotasTarget      = "ServiceQuotasV20190624."
)

// Start serves the simulated cloud in dir on 127.0.0.1 at a random
// port until stop is called or ctx ends. endpoint is the base URL to give
// the clients ("http://127.0.0.1:PORT").
func Start(ctx context.Context, dir string) (endpoint string, stop func(), err error) {
	c, err := store.Open(dir)
	if err != nil {
		return "", nil, err
	}
	return Serve(ctx, c)
}

// Serve is Start over an open cloud (tests pass one with a clock).
func Serve(ctx context.Context, c *store.Cloud) (endpoint string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("starting the simulator's AWS API endpoint: %w", err)
	}
	srv := &http.Server{Handler: NewHandler(c), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			srv.Close()
		case <-done:
		}
	}()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() {
		once.Do(func() {
			close(done)
			srv.Close()
		})
	}, nil
}

// NewHandler answers the AWS APIs from c, the home account, and from
// the accounts a request's credentials were issued for (sts.go).
func NewHandler(c *store.Cloud) http.Handler { return &apiHandler{home: c, c: c} }

// apiHandler answers one account: c is the store of the account that
// signed the request, home the sim dir's (which holds the registry STS
// reads), caller who signed. ServeHTTP picks them once per request
// (forCaller), so every API serves the signing account without knowing
// accounts exist.
type apiHandler struct {
	home   *store.Cloud
	c      *store.Cloud
	caller store.Identity
}

// apiError is an AWS error: HTTP status, the modeled error shape, and
// the Query-protocol code CloudWatch (awsQueryCompatible) also sends.
type apiError struct {
	status    int
	shape     string // InvalidParameterValueException
	queryCode string // InvalidParameterValue
	message   string
}

func (e *apiError) Error() string { return e.shape + ": " + e.message }

func badParam(format string, args ...any) *apiError {
	return &apiError{400, "InvalidParameterValueException", "InvalidParameterValue", fmt.Sprintf(format, args...)}
}

func missingParam(name string) *apiError {
	return &apiError{400, "MissingRequiredParameterException", "MissingParameter", "The parameter " + name + " is required."}
}

func (h *apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	isCBOR := strings.HasPrefix(r.URL.Path, "/service/")
	if err != nil {
		h.fail(w, isCBOR, &apiError{400, "SerializationException", "SerializationException", err.Error()})
		return
	}
	if key, signed := signingKey(r); signed {
		ah, aerr := h.forCaller(key)
		if aerr != nil {
			h.failAnyProtocol(w, r, isCBOR, aerr)
			return
		}
		h = ah
	}
	if isRoute53(r) {
		h.serveRoute53(w, r)
		return
	}
	if isLambda(r) {
		h.serveLambda(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.fail(w, isCBOR, &apiError{405, "UnknownOperationException", "InvalidAction", "only POST is supported"})
		return
	}
	region, ok := signedRegion(r)
	if !ok {
		h.fail(w, isCBOR, &apiError{403, "MissingAuthenticationTokenException", "MissingAuthenticationToken", "Request is missing Authentication Token"})
		return
	}
	if isCBOR {
		h.serveCBOR(w, r, body, region)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, kmsTarget) {
		h.serveKMS(w, strings.TrimPrefix(target, kmsTarget), body, region)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, ecsTarget) {
		h.serveECS(w, strings.TrimPrefix(target, ecsTarget), body, region)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, logsTarget) {
		h.serveLogs(w, strings.TrimPrefix(target, logsTarget), body, region)
		return
	}
	if isRDSData(r) {
		h.serveRDSData(w, r, body, region)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, quotasTarget) {
		h.serveQuotas(w, strings.TrimPrefix(target, quotasTarget), body, region)
		return
	}
	if isQuery(r) {
		h.serveQuery(w, r, body, region)
		return
	}
	h.fail(w, false, &apiError{400, "UnknownOperationException", "InvalidAction", "the simulator serves CloudWatch (RPC v2 CBOR), Service Quotas, KMS, ECS and CloudWatch Logs (JSON 1.1), the RDS Data API (REST-JSON) and the describe calls of EC2, RDS, ElastiCache, ELBv2 and IAM (query) only"})
}

var credentialScope = regexp.MustCompile(`Credential=[^/]+/\d{8}/([a-z0-9-]+)/[a-z0-9-]+/aws4_request`)

// signedRegion is the region of a SigV4 Authorization header.
func signedRegion(r *http.Request) (string, bool) {
	m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization"))
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") || m == nil {
		return "", false
	}
	return m[1], true
}

func (h *apiHandler) fail(w http.ResponseWriter, isCBOR bool, e *apiError) {
	if isCBOR {
		b, _ := wire.EncodeCBOR(map[string]any{"__type": "com.amazonaws.cloudwatch#" + e.shape, "message": e.message})
		w.Header().Set("Content-Type", wire.ContentTypeCBOR)
		w.Header().Set(wire.ProtocolHeader, wire.ProtocolCBOR)
		w.Header().Set("X-Amzn-Query-Error", e.queryCode+";Sender")
		w.WriteHeader(e.status)
		w.Write(b)
		return
	}
	b, _ := json.Marshal(map[string]string{"__type": e.shape, "message": e.message})
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(e.status)
	w.Write(b)
}

func (h *apiHandler) serveCBOR(w http.ResponseWriter, r *http.Request, body []byte, region string) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/service/"+cloudWatchService+"/operation/")
	if !ok || strings.Contains(rest, "/") {
		h.fail(w, true, &apiError{404, "UnknownOperationException", "InvalidAction", "unknown service or operation path " + r.URL.Path})
		return
	}
	if r.Header.Get(wire.ProtocolHeader) != wire.ProtocolCBOR {
		h.fail(w, true, &apiError{400, "SerializationException", "SerializationException", "Smithy-Protocol must be rpc-v2-cbor"})
		return
	}
	in, err := wire.DecodeCBOR(body)
	m, isMap := in.(map[string]any)
	if err != nil || !isMap {
		h.fail(w, true, &apiError{400, "SerializationException", "SerializationException", fmt.Sprintf("request body is not a CBOR map: %v", err)})
		return
	}
	var out map[string]any
	var aerr *apiError
	switch rest {
	case "DescribeAlarms":
		out, aerr = h.describeAlarms(m, region)
	case "GetMetricData":
		out, aerr = h.getMetricData(m, region)
	default:
		aerr = &apiError{404, "UnknownOperationException", "InvalidAction", "the simulator does not serve CloudWatch operation " + rest}
	}
	if aerr != nil {
		h.fail(w, true, aerr)
		return
	}
	b, err := wire.EncodeCBOR(out)
	if err != nil {
		h.fail(w, true, &apiError{500, "InternalServiceFault", "InternalServiceError", err.Error()})
		return
	}
	w.Header().Set("Content-Type", wire.ContentTypeCBOR)
	w.Header().Set(wire.ProtocolHeader, wire.ProtocolCBOR)
	w.Write(b)
}

// internal turns a cloud error (a corrupt sim dir, a lock failure) into
// AWS's 500: the reader must see a failure, never an empty answer.
func internal(err error) *apiError {
	return &apiError{500, "InternalServiceFault", "InternalServiceError", err.Error()}
}

// ---- CloudWatch: DescribeAlarms -------------------------------------------

// pageToken encodes an offset; anything else is InvalidNextToken.
func pageToken(in map[string]any) (int, *apiError) {
	tok, _ := in["NextToken"].(string)
	if tok == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(tok, "sim-"))
	if err != nil || n < 0 || !strings.HasPrefix(tok, "sim-") {
		return 0, &apiError{400, "InvalidNextToken", "InvalidNextToken", "The service returned an invalid next token."}
	}
	return n, nil
}

func intParam(in map[string]any, name string, lo, hi, def int) (int, *apiError) {
	v, ok := in[name]
	if !ok || v == nil {
		return def, nil
	}
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) || int(f) < lo || int(f) > hi {
		return 0, badParam("The value %v for parameter %s is not valid: it must be an integer from %d to %d.", v, name, lo, hi)
	}
	return int(f), nil
}

func (h *apiHandler) describeAlarms(in map[string]any, region string) (map[string]any, *apiError) {
	names, ok := props.StringList(in["AlarmNames"])
	if !ok {
		return nil, badParam("AlarmNames must be a list of strings.")
	}
	if len(names) > 100 {
		return nil, badParam("The collection AlarmNames must not have more than 100 members.")
	}
	prefix, _ := in["AlarmNamePrefix"].(string)
	if prefix != "" && len(names) > 0 {
		return nil, &apiError{400, "InvalidParameterCombinationException", "InvalidParameterCombination", "AlarmNamePrefix and AlarmNames cannot be specified together."}
	}
	stateValue, _ := in["StateValue"].(string)
	if stateValue != "" && stateValue != store.AlarmOK && stateValue != store.AlarmAlarm && stateValue != store.AlarmInsufficientData {
		return nil, badParam("The value %s for parameter StateValue is not valid: use OK, ALARM or INSUFFICIENT_DATA.", stateValue)
	}
	types, ok := props.StringList(in["AlarmTypes"])
	if !ok {
		return nil, badParam("AlarmTypes must be a list of strings.")
	}
	wantMetric := len(types) == 0
	for _, t := range types {
		switch t {
		case "MetricAlarm":
			wantMetric = true
		case "CompositeAlarm":
		default:
			return nil, badParam("The value %s for parameter AlarmTypes is not valid: use MetricAlarm or CompositeAlarm.", t)
		}
	}
	size, aerr := intParam(in, "MaxRecords", 1, 100, 50)
	if aerr != nil {
		return nil, aerr
	}
	offset, aerr := pageToken(in)
	if aerr != nil {
		return nil, aerr
	}
	var alarms []map[string]any
	err := health.WithAdvanced(h.c, func(st *store.State) error {
		v := h.c.NewView(st)
		wanted := map[string]bool{}
		for _, n := range names {
			wanted[n] = true
		}
		for _, r := range st.Resources {
			if r.Type != store.TypeAlarm || r.Region != region || !wantMetric {
				continue
			}
			if len(names) > 0 && !wanted[r.ID] || !strings.HasPrefix(r.ID, prefix) {
				continue
			}
			a := r.CurrentAlarm()
			if stateValue != "" && a.State != stateValue {
				continue
			}
			alarms = append(alarms, metricAlarm(r, v, a))
		}
		return nil
	})
	if err != nil {
		return nil, internal(err)
	}
	sort.Slice(alarms, func(i, j int) bool { return alarms[i]["AlarmName"].(string) < alarms[j]["AlarmName"].(string) })
	out := map[string]any{"CompositeAlarms": []any{}}
	page := []any{}
	for i := offset; i < len(alarms) && i < offset+size; i++ {
		page = append(page, alarms[i])
	}
	out["MetricAlarms"] = page
	if offset+size < len(alarms) {
		out["NextToken"] = "sim-" + strconv.Itoa(offset+size)
	}
	return out, nil
}

// metricAlarm renders an alarm record as CloudWatch's MetricAlarm.
func metricAlarm(r *store.Record, v *store.View, a store.AlarmState) map[string]any {
	outs := v.Outputs(r)
	get := func(k string) any { return store.Plain(outs[resource.PropertyKey(k)]) }
	m := map[string]any{
		"AlarmName": r.ID, "AlarmArn": store.Str(r.Outputs["arn"]), "StateValue": a.State,
		"StateReason": a.Reason, "StateUpdatedTimestamp": a.Updated.UTC(), "StateTransitionedTimestamp": a.Updated.UTC(),
		"AlarmConfigurationUpdatedTimestamp": r.Updated.UTC(),
		"ActionsEnabled":                     get("actionsEnabled") != false,
	}
	if m["StateReason"] == "" {
		m["StateReason"] = "Unchecked: Initial alarm creation"
	}
	for _, k := range []string{"alarmDescription", "comparisonOperator", "treatMissingData", "metricName", "namespace", "statistic", "extendedStatistic", "evaluateLowSampleCountPercentile", "unit"} {
		if s, ok := get(k).(string); ok && s != "" {
			m[strings.ToUpper(k[:1])+k[1:]] = s
		}
	}
	for _, k := range []string{"threshold"} {
		if f, ok := get(k).(float64); ok {
			m["Threshold"] = f
		}
	}
	for _, k := range []string{"evaluationPeriods", "datapointsToAlarm", "period"} {
		if f, ok := get(k).(float64); ok && f > 0 {
			m[strings.ToUpper(k[:1])+k[1:]] = int64(f)
		}
	}
	for _, k := range []string{"alarmActions", "okActions", "insufficientDataActions"} {
		l, _ := props.StringList(get(k))
		key := strings.ToUpper(k[:1]) + k[1:]
		if k == "okActions" {
			key = "OKActions"
		}
		m[key] = anyList(l)
	}
	m["Dimensions"] = dimList(store.StrMap(get("dimensions")))
	if qs, ok := get("metricQueries").([]any); ok && len(qs) > 0 {
		var metrics []any
		for _, x := range qs {
			q, _ := x.(map[string]any)
			mq := map[string]any{"Id": store.Str(q["id"]), "ReturnData": q["returnData"] == true}
			if e := store.Str(q["expression"]); e != "" {
				mq["Expression"] = e
			}
			if l := store.Str(q["label"]); l != "" {
				mq["Label"] = l
			}
			if mm, ok := q["metric"].(map[string]any); ok {
				mq["MetricStat"] = map[string]any{
					"Metric": map[string]any{"Namespace": store.Str(mm["namespace"]), "MetricName": store.Str(mm["metricName"]), "Dimensions": dimList(store.StrMap(mm["dimensions"]))},
					"Period": int64(store.Num(mm["period"])), "Stat": store.Str(mm["stat"]),
				}
			}
			metrics = append(metrics, mq)
		}
		m["Metrics"] = metrics
	}
	return m
}

func anyList(l []string) []any {
	out := make([]any, 0, len(l))
	for _, s := range l {
		out = append(out, s)
	}
	return out
}

func dimList(d map[string]string) []any {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"Name": k, "Value": d[k]})
	}
	return out
}

// ---- CloudWatch: GetMetricData ----------------------------------------------

var queryID = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*$`)

func parseQueries(in map[string]any) ([]health.Query, *apiError) {
	raw, ok := in["MetricDataQueries"].([]any)
	if !ok || len(raw) == 0 {
		return nil, missingParam("MetricDataQueries")
	}
	if len(raw) > 500 {
		return nil, badParam("The collection MetricDataQueries must not have more than 500 members.")
	}
	seen := map[string]bool{}
	var qs []health.Query
	for i, x := range raw {
		q, _ := x.(map[string]any)
		id := store.Str(q["Id"])
		if !queryID.MatchString(id) {
			return nil, badParam("The value %q for parameter MetricDataQueries.member.%d.Id is not valid: it must start with a lowercase letter and contain only letters, numbers and underscores.", id, i+1)
		}
		if seen[id] {
			return nil, badParam("The values for parameter id in MetricDataQueries are not unique.")
		}
		seen[id] = true
		gq := health.Query{ID: id, Label: store.Str(q["Label"]), ReturnData: q["ReturnData"] != false}
		if store.Str(q["Expression"]) != "" {
			return nil, badParam("MetricDataQueries.member.%d: the simulator does not evaluate metric math expressions in GetMetricData; read the metrics and compute client-side.", i+1)
		}
		ms, ok := q["MetricStat"].(map[string]any)
		if !ok {
			return nil, badParam("MetricDataQueries.member.%d must have exactly one of MetricStat or Expression.", i+1)
		}
		mt, _ := ms["Metric"].(map[string]any)
		gq.Namespace, gq.Metric, gq.Stat = store.Str(mt["Namespace"]), store.Str(mt["MetricName"]), store.Str(ms["Stat"])
		if gq.Namespace == "" || gq.Metric == "" {
			return nil, missingParam(fmt.Sprintf("MetricDataQueries.member.%d.MetricStat.Metric.MetricName", i+1))
		}
		if !health.ValidStat(gq.Stat) {
			return nil, badParam("The value %q for parameter MetricDataQueries.member.%d.MetricStat.Stat is not valid (the simulator computes SampleCount, Average, Sum, Minimum, Maximum and pNN).", gq.Stat, i+1)
		}
		p, _ := ms["Period"].(float64)
		// Standard-resolution metrics: a period of 60 s or a multiple
		// (PutMetricAlarm/MetricStat: "valid values are 10, 30, and any
		// multiple of 60"; ALB metrics are published each minute).
		if p < 60 || p != float64(int(p)) || int(p)%60 != 0 {
			return nil, badParam("The value %v for parameter MetricDataQueries.member.%d.MetricStat.Period is not valid: ALB metrics have a period of 60 seconds or a multiple of 60.", ms["Period"], i+1)
		}
		gq.Period = time.Duration(p) * time.Second
		gq.Dims = map[string]string{}
		if ds, ok := mt["Dimensions"].([]any); ok {
			for _, d := range ds {
				dm, _ := d.(map[string]any)
				gq.Dims[store.Str(dm["Name"])] = store.Str(dm["Value"])
			}
		}
		if gq.Label == "" {
			gq.Label = gq.Metric
		}
		qs = append(qs, gq)
	}
	return qs, nil
}

func (h *apiHandler) getMetricData(in map[string]any, region string) (map[string]any, *apiError) {
	qs, aerr := parseQueries(in)
	if aerr != nil {
		return nil, aerr
	}
	start, ok1 := in["StartTime"].(time.Time)
	end, ok2 := in["EndTime"].(time.Time)
	if !ok1 {
		return nil, missingParam("StartTime")
	}
	if !ok2 {
		return nil, missingParam("EndTime")
	}
	if !start.Before(end) {
		return nil, badParam("The parameter StartTime must be less than the parameter EndTime.")
	}
	maxPoints, aerr := intParam(in, "MaxDatapoints", 1, 100800, 100800)
	if aerr != nil {
		return nil, aerr
	}
	ascending := false
	switch sb, _ := in["ScanBy"].(string); sb {
	case "", "TimestampDescending":
	case "TimestampAscending":
		ascending = true
	default:
		return nil, badParam("The value %s for parameter ScanBy is not valid.", sb)
	}
	offset, aerr := pageToken(in)
	if aerr != nil {
		return nil, aerr
	}
	type flat struct {
		q   int
		pts []health.Point
	}
	var all []flat
	series, err := health.MetricData(h.c, qs, region, start, end)
	if err != nil {
		return nil, internal(err)
	}
	for i, pts := range series {
		f := flat{q: i, pts: pts}
		if !ascending {
			for l, r := 0, len(f.pts)-1; l < r; l, r = l+1, r-1 {
				f.pts[l], f.pts[r] = f.pts[r], f.pts[l]
			}
		}
		all = append(all, f)
	}
	// Pages of at most MaxDatapoints points, query by query; the token is
	// the number of points already returned.
	var results []any
	skip, budget, total := offset, maxPoints, 0
	for _, f := range all {
		q := qs[f.q]
		if !q.ReturnData {
			continue
		}
		total += len(f.pts)
		pts := f.pts
		if skip >= len(pts) {
			skip -= len(pts)
			pts = nil
		} else {
			pts, skip = pts[skip:], 0
		}
		if len(pts) > budget {
			pts = pts[:budget]
		}
		budget -= len(pts)
		ts, vs := make([]any, 0, len(pts)), make([]any, 0, len(pts))
		for _, p := range pts {
			ts, vs = append(ts, p.Time), append(vs, p.Value)
		}
		status := "Complete"
		results = append(results, map[string]any{"Id": q.ID, "Label": q.Label, "Timestamps": ts, "Values": vs, "StatusCode": status})
	}
	out := map[string]any{"MetricDataResults": results, "Messages": []any{}}
	if returned := offset + maxPoints - budget; returned < total && budget == 0 {
		out["NextToken"] = "sim-" + strconv.Itoa(returned)
		for _, r := range results {
			r.(map[string]any)["StatusCode"] = "PartialData"
		}
	}
	return out, nil
}

// ---- Service Quotas ------------------------------------------------------------

func (h *apiHandler) serveQuotas(w http.ResponseWriter, op string, body []byte, region string) {
	var in map[string]any
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			h.fail(w, false, &apiError{400, "SerializationException", "SerializationException", "request body is not JSON: " + err.Error()})
			return
		}
	}
	var out any
	var aerr *apiError
	switch op {
	case "ListServiceQuotas":
		out, aerr = h.listQuotas(in, region)
	case "GetServiceQuota":
		out, aerr = h.getQuota(in, region, false)
	case "GetAWSDefaultServiceQuota":
		out, aerr = h.getQuota(in, region, true)
	default:
		aerr = &apiError{400, "UnknownOperationException", "UnknownOperation", "the simulator does not serve Service Quotas operation " + op}
	}
	if aerr != nil {
		h.fail(w, false, aerr)
		return
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Write(b)
}

var serviceNames = map[string]string{
	"ec2": "Amazon Elastic Compute Cloud (Amazon EC2)", "vpc": "Amazon Virtual Private Cloud (Amazon VPC)",
	"elasticloadbalancing": "Elastic Load Balancing (ELB)", "rds": "Amazon Relational Database Service (Amazon RDS)",
	"elasticache": "Amazon ElastiCache", "fargate": "AWS Fargate", "monitoring": "Amazon CloudWatch",
	"lambda": "AWS Lambda", "cloudfront": "Amazon CloudFront", "iam": "AWS Identity and Access Management (IAM)",
	"s3": "Amazon Simple Storage Service (Amazon S3)", "sqs": "Amazon Simple Queue Service (Amazon SQS)",
}

// simQuotas lists the simulator's quotas of a service, one per code.
func simQuotas(service string) []awsmodel.QuotaDef {
	seen := map[string]bool{}
	var out []awsmodel.QuotaDef
	for _, q := range awsmodel.QuotaDefs() {
		svc, _, _ := strings.Cut(q.Code, "/")
		if svc == service && !seen[q.Code] {
			seen[q.Code] = true
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

func (h *apiHandler) quotaJSON(q awsmodel.QuotaDef, region, account string, value float64) map[string]any {
	svc, code, _ := strings.Cut(q.Code, "/")
	name := serviceNames[svc]
	if name == "" {
		name = svc
	}
	return map[string]any{
		"ServiceCode": svc, "ServiceName": name, "QuotaCode": code, "QuotaName": q.Name,
		"QuotaArn": fmt.Sprintf("arn:aws:servicequotas:%s:%s:%s/%s", region, account, svc, code),
		"Value":    value, "Unit": "None", "Adjustable": true, "GlobalQuota": q.Scope == "account",
	}
}

func noSuchQuota(msg string) *apiError {
	return &apiError{400, "NoSuchResourceException", "NoSuchResourceException", msg}
}

func (h *apiHandler) listQuotas(in map[string]any, region string) (any, *apiError) {
	svc, _ := in["ServiceCode"].(string)
	if svc == "" {
		return nil, &apiError{400, "IllegalArgumentException", "IllegalArgumentException", "ServiceCode is required"}
	}
	size := 100
	if v, ok := in["MaxResults"].(float64); ok {
		if v < 1 || v > 100 || v != float64(int(v)) {
			return nil, &apiError{400, "IllegalArgumentException", "IllegalArgumentException", "MaxResults must be an integer from 1 to 100"}
		}
		size = int(v)
	}
	offset, aerr := pageToken(in)
	if aerr != nil {
		return nil, &apiError{400, "InvalidPaginationTokenException", "InvalidPaginationTokenException", "Invalid pagination token"}
	}
	defs := simQuotas(svc)
	if len(defs) == 0 {
		return nil, noSuchQuota("The request failed because the specified service does not exist.")
	}
	var quotas []any
	err := h.c.Read(func(st *store.State, ctl *store.Control) error {
		account := h.c.NewView(st).Account()
		for i := offset; i < len(defs) && i < offset+size; i++ {
			quotas = append(quotas, h.quotaJSON(defs[i], region, account, ctl.QuotaValue(region, defs[i])))
		}
		return nil
	})
	if err != nil {
		return nil, internal(err)
	}
	out := map[string]any{"Quotas": append([]any{}, quotas...)}
	if offset+size < len(defs) {
		out["NextToken"] = "sim-" + strconv.Itoa(offset+size)
	}
	return out, nil
}

func (h *apiHandler) getQuota(in map[string]any, region string, wantDefault bool) (any, *apiError) {
	svc, _ := in["ServiceCode"].(string)
	code, _ := in["QuotaCode"].(string)
	if svc == "" || code == "" {
		return nil, &apiError{400, "IllegalArgumentException", "IllegalArgumentException", "ServiceCode and QuotaCode are required"}
	}
	q, ok := awsmodel.QuotaDefByCode(svc + "/" + code)
	if !ok {
		return nil, noSuchQuota("The request failed because the specified resource does not exist.")
	}
	var out map[string]any
	err := h.c.Read(func(st *store.State, ctl *store.Control) error {
		value := q.Default
		if !wantDefault {
			value = ctl.QuotaValue(region, q)
		}
		out = h.quotaJSON(q, region, h.c.NewView(st).Account(), value)
		return nil
	})
	if err != nil {
		return nil, internal(err)
	}
	return map[string]any{"Quota": out}, nil
}
