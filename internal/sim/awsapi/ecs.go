package awsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The simulator's ECS task API: AWS JSON 1.1 (X-Amz-Target:
// AmazonEC2ContainerServiceV20141113.<Op>, service/ecs v1.106.0) over the
// store's task model (internal/sim/store/ecstask.go): RegisterTaskDefinition,
// DescribeTaskDefinition, DeregisterTaskDefinition, RunTask, DescribeTasks
// and StopTask, with the rules of internal/awsmodel/ecs_runtask.go. Task
// definitions are the provider's (resources of the cell stacks) and the
// revisions registered here; tasks run no containers — their outcome is
// the image's task rule (`cellctl sim task set`).

const ecsTarget = "AmazonEC2ContainerServiceV20141113."

// writeJSON11 answers a JSON 1.1 call.
func writeJSON11(w http.ResponseWriter, out any) {
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Write(b)
}

// modelError turns an awsmodel or store error into the wire error.
func modelError(err error) *apiError {
	var ee *awsmodel.ECSError
	var le *awsmodel.LogsError
	var de *awsmodel.DataAPIError
	var ae *apiError
	switch {
	case errors.As(err, &ee):
		return &apiError{400, ee.Code, ee.Code, ee.Message}
	case errors.As(err, &le):
		return &apiError{400, le.Code, le.Code, le.Message}
	case errors.As(err, &de):
		return &apiError{de.Status, de.Code, de.Code, de.Message}
	case errors.As(err, &ae):
		return ae
	}
	return internal(err)
}

func ecsBad(msg string) *apiError {
	return &apiError{400, awsmodel.ECSInvalidParameter, awsmodel.ECSInvalidParameter, msg}
}

func (h *apiHandler) serveECS(w http.ResponseWriter, op string, body []byte, region string) {
	in := map[string]any{}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			h.fail(w, false, &apiError{400, "SerializationException", "SerializationException", "request body is not JSON: " + err.Error()})
			return
		}
	}
	var out any
	change := op != "DescribeTaskDefinition"
	err := h.c.WithTasks(change, func(t *store.TaskAPI) error {
		var err error
		switch op {
		case "RegisterTaskDefinition":
			var td *store.TaskDef
			if td, err = t.RegisterTaskDefinition(region, in); err == nil {
				out = map[string]any{"taskDefinition": td.JSON, "tags": orEmpty(td.Tags)}
			}
		case "DescribeTaskDefinition":
			out, err = describeTaskDefinition(t, region, in)
		case "DeregisterTaskDefinition":
			var td *store.TaskDef
			if td, err = t.DeregisterTaskDefinition(region, store.Str(in["taskDefinition"])); err == nil {
				out = map[string]any{"taskDefinition": td.JSON}
			}
		case "RunTask":
			out, err = runTask(t, region, in)
		case "DescribeTasks":
			out, err = describeTasks(t, region, in)
		case "StopTask":
			out, err = stopTask(t, region, in)
		default:
			err = &apiError{400, "UnknownOperationException", "UnknownOperation", "the simulator serves ECS RegisterTaskDefinition, DescribeTaskDefinition, DeregisterTaskDefinition, RunTask, DescribeTasks and StopTask only, not " + op}
		}
		return err
	})
	var ee *awsmodel.ECSError
	if errors.As(err, &ee) && ee.ResourceIDs != nil {
		// ConflictException carries a member besides its message.
		b, _ := json.Marshal(map[string]any{"__type": ee.Code, "message": ee.Message, "resourceIds": ee.ResourceIDs})
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(b)
		return
	}
	if err != nil {
		h.fail(w, false, modelError(err))
		return
	}
	writeJSON11(w, out)
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func describeTaskDefinition(t *store.TaskAPI, region string, in map[string]any) (any, error) {
	const msg = "Unable to describe task definition."
	ref, err := awsmodel.ParseTaskDefRef(store.Str(in["taskDefinition"]), msg)
	if err != nil {
		return nil, err
	}
	td := t.ResolveTaskDef(region, ref)
	if td == nil {
		return nil, &awsmodel.ECSError{Code: awsmodel.ECSClient, Message: msg}
	}
	out := map[string]any{"taskDefinition": td.JSON}
	if slices.Contains(strs(in["include"]), "TAGS") {
		out["tags"] = orEmpty(td.Tags)
	}
	return out, nil
}

func strs(v any) []string {
	l, _ := props.StringList(v)
	return l
}

func runTask(t *store.TaskAPI, region string, in map[string]any) (any, error) {
	rt := store.RunTaskInput{Cluster: store.Str(in["cluster"]), TaskDefinition: store.Str(in["taskDefinition"]),
		LaunchType: store.Str(in["launchType"]), StartedBy: store.Str(in["startedBy"]), Group: store.Str(in["group"]), ClientToken: store.Str(in["clientToken"])}
	if rt.TaskDefinition == "" {
		return nil, ecsBad("taskDefinition can not be blank.")
	}
	if c, ok := in["count"].(float64); ok {
		rt.Count, rt.CountGiven = int(c), true
	}
	for _, p := range asMaps(in["capacityProviderStrategy"]) {
		rt.CapacityProviders = append(rt.CapacityProviders, store.Str(p["capacityProvider"]))
	}
	if nc, ok := in["networkConfiguration"].(map[string]any); ok {
		cfg := &awsmodel.AwsVpcConfig{}
		if av, ok := nc["awsvpcConfiguration"].(map[string]any); ok {
			cfg.Subnets, cfg.SecurityGroups, cfg.AssignPublicIP = strs(av["subnets"]), strs(av["securityGroups"]), store.Str(av["assignPublicIp"])
		}
		rt.Network = cfg
	}
	if ov, ok := in["overrides"].(map[string]any); ok {
		rt.Overrides = ov
		rt.CommandOverrides = map[string][]string{}
		for _, co := range asMaps(ov["containerOverrides"]) {
			if cmd, ok := co["command"]; ok {
				rt.CommandOverrides[store.Str(co["name"])] = strs(cmd)
			}
		}
	}
	tasks, fails, err := t.RunTask(region, rt)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"tasks": []any{}, "failures": []any{}}
	for _, tr := range tasks {
		out["tasks"] = append(out["tasks"].([]any), t.TaskJSON(tr))
	}
	for _, f := range fails {
		out["failures"] = append(out["failures"].([]any), f)
	}
	return out, nil
}

func asMaps(v any) []map[string]any {
	var out []map[string]any
	l, _ := v.([]any)
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func describeTasks(t *store.TaskAPI, region string, in map[string]any) (any, error) {
	refs := strs(in["tasks"])
	if err := awsmodel.CheckDescribeTasks(len(refs)); err != nil {
		return nil, err
	}
	cl := t.Cluster(region, store.Str(in["cluster"]))
	if cl == nil {
		return nil, awsmodel.ClusterNotFoundError()
	}
	now := t.Cloud().Now()
	out := map[string]any{"tasks": []any{}, "failures": []any{}}
	for _, ref := range refs {
		tr := t.FindTask(cl, ref)
		if tr == nil {
			arn := ref
			if awsmodel.ECSTaskID(ref) == ref {
				arn = awsmodel.ECSTaskARN(region, t.View.Account(), store.Str(cl.Outputs["name"]), ref)
			}
			out["failures"] = append(out["failures"].([]any), store.RunTaskFailure{ARN: arn, Reason: "MISSING"})
			continue
		}
		t.Advance(tr, now, true)
		tr.Reported = true
		out["tasks"] = append(out["tasks"].([]any), t.TaskJSON(tr))
	}
	return out, nil
}

func stopTask(t *store.TaskAPI, region string, in map[string]any) (any, error) {
	cl := t.Cluster(region, store.Str(in["cluster"]))
	if cl == nil {
		return nil, awsmodel.ClusterNotFoundError()
	}
	tr := t.FindTask(cl, store.Str(in["task"]))
	if tr == nil {
		return nil, ecsBad("The referenced task was not found.")
	}
	if err := t.StopTask(tr, store.Str(in["reason"])); err != nil {
		return nil, err
	}
	return map[string]any{"task": t.TaskJSON(tr)}, nil
}
