package awsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// Lambda (service/lambda v1.118.0) speaks REST-JSON, errors in
// X-Amzn-ErrorType (AWS Lambda API Reference):
//
//   - GetAccountSettings: GET /2016-08-19/account-settings/ — code storage
//     used (every function's $LATEST and published versions) and the
//     limit (the Region's "Function and layer storage" quota in bytes);
//   - ListVersionsByFunction: GET /2015-03-31/functions/{name}/versions;
//   - DeleteFunction with a Qualifier: DELETE /2015-03-31/functions/{name}
//     ?Qualifier=N — refused with InvalidParameterValueException "…because
//     it is a replicated function" while a distribution's Lambda@Edge
//     association names the version. The function itself (no qualifier)
//     is the provider's to delete, never this API's.

const (
	lambdaFunctions = "/2015-03-31/functions/"
	lambdaAccount   = "/2016-08-19/account-settings"
)

func isLambda(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, lambdaFunctions) || strings.HasPrefix(r.URL.Path, lambdaAccount)
}

func (h *apiHandler) serveLambda(w http.ResponseWriter, r *http.Request) {
	region, ok := signedRegion(r)
	if !ok {
		h.failREST(w, &apiError{403, "MissingAuthenticationTokenException", "", "Request is missing Authentication Token"})
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.TrimSuffix(path, "/") == lambdaAccount:
		h.lambdaAccountSettings(w, region)
	case r.Method == http.MethodGet && strings.HasPrefix(path, lambdaFunctions) && strings.HasSuffix(path, "/versions"):
		name := strings.TrimSuffix(strings.TrimPrefix(path, lambdaFunctions), "/versions")
		h.lambdaVersions(w, r, region, name)
	case r.Method == http.MethodDelete && strings.HasPrefix(path, lambdaFunctions) && !strings.Contains(strings.TrimPrefix(path, lambdaFunctions), "/"):
		h.lambdaDelete(w, r, region, strings.TrimPrefix(path, lambdaFunctions))
	default:
		h.failREST(w, &apiError{400, "InvalidAction", "", "the simulator serves Lambda GetAccountSettings, ListVersionsByFunction and DeleteFunction with a Qualifier only, not " + r.Method + " " + path})
	}
}

func (h *apiHandler) lambdaAccountSettings(w http.ResponseWriter, region string) {
	used, functions, err := h.c.CodeStorage(region)
	if err != nil {
		h.failREST(w, internal(err))
		return
	}
	limitGB, concurrency := awsfacts.LambdaCodeStorage.Default, awsfacts.LambdaConcurrentExecutions.Default
	qs, err := h.c.Quotas(region)
	if err != nil {
		h.failREST(w, internal(err))
		return
	}
	for _, q := range qs {
		switch q.Code {
		case awsfacts.LambdaCodeStorage.Code:
			limitGB = q.Value
		case awsfacts.LambdaConcurrentExecutions.Code:
			concurrency = q.Value
		}
	}
	writeJSON(w, map[string]any{
		"AccountLimit": map[string]any{
			"TotalCodeSize": int64(limitGB * awsfacts.GiB), "CodeSizeUnzipped": 262144000, "CodeSizeZipped": 52428800,
			"ConcurrentExecutions": int64(concurrency), "UnreservedConcurrentExecutions": int64(concurrency),
		},
		"AccountUsage": map[string]any{"TotalCodeSize": used, "FunctionCount": functions},
	})
}

func (h *apiHandler) lambdaVersions(w http.ResponseWriter, r *http.Request, region, name string) {
	arn, versions, err := h.c.FunctionVersions(region, name)
	if err != nil {
		h.lambdaFail(w, name, "", err)
		return
	}
	start := 0
	if m := r.URL.Query().Get("Marker"); m != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "sim-"))
		if err != nil || n < 0 || n > len(versions) || !strings.HasPrefix(m, "sim-") {
			h.failREST(w, &apiError{400, "InvalidParameterValueException", "", "Invalid marker: " + m})
			return
		}
		start = n
	}
	size := 50
	if s := r.URL.Query().Get("MaxItems"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			h.failREST(w, &apiError{400, "InvalidParameterValueException", "", "MaxItems must be from 1 to 10000"})
			return
		}
		size = n
	}
	var page []map[string]any
	if start == 0 {
		page = append(page, map[string]any{"FunctionName": name, "FunctionArn": arn + ":$LATEST", "Version": "$LATEST"})
	}
	end := min(start+size, len(versions))
	for _, v := range versions[start:end] {
		page = append(page, map[string]any{"FunctionName": name, "FunctionArn": v.ARN, "Version": v.Version, "CodeSize": v.CodeSize, "Description": v.Description})
	}
	out := map[string]any{"Versions": page}
	if end < len(versions) {
		out["NextMarker"] = "sim-" + strconv.Itoa(end)
	}
	writeJSON(w, out)
}

func (h *apiHandler) lambdaDelete(w http.ResponseWriter, r *http.Request, region, name string) {
	q := r.URL.Query().Get("Qualifier")
	if q == "" || q == "$LATEST" {
		h.failREST(w, &apiError{400, "InvalidParameterValueException", "", "the simulator deletes published versions only (a Qualifier with a version number); the function itself is its stack's"})
		return
	}
	if err := h.c.DeleteFunctionVersion(region, name, q); err != nil {
		h.lambdaFail(w, name, q, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *apiHandler) lambdaFail(w http.ResponseWriter, name, version string, err error) {
	var rep *store.ReplicatedError
	switch {
	case errors.As(err, &rep):
		h.failREST(w, &apiError{400, "InvalidParameterValueException", "", rep.Error()})
	case errors.Is(err, store.ErrNoFunction):
		what := "Function not found: " + name
		if version != "" {
			what += ":" + version
		}
		h.failREST(w, &apiError{404, "ResourceNotFoundException", "", what})
	default:
		h.failREST(w, internal(err))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
