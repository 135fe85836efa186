package awsapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The RDS Data API (service/rdsdata v1.33.0) speaks REST-JSON:
// ExecuteStatement is POST /Execute, BatchExecuteStatement POST
// /BatchExecute; errors carry the shape in X-Amzn-ErrorType and
// {"message": …}. Statements are checked, recorded per cluster and, with
// a PostgreSQL server configured, run for real (internal/sim/store/rdsdata.go).

func isRDSData(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/Execute" || r.URL.Path == "/BatchExecute")
}

func (h *apiHandler) failREST(w http.ResponseWriter, e *apiError) {
	b, _ := json.Marshal(map[string]string{"message": e.message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.shape)
	w.WriteHeader(e.status)
	w.Write(b)
}

func (h *apiHandler) serveRDSData(w http.ResponseWriter, r *http.Request, body []byte, region string) {
	var in struct {
		ResourceARN   string             `json:"resourceArn"`
		SecretARN     string             `json:"secretArn"`
		SQL           string             `json:"sql"`
		Database      string             `json:"database"`
		Schema        string             `json:"schema"`
		TransactionID string             `json:"transactionId"`
		Parameters    []map[string]any   `json:"parameters"`
		ParameterSets [][]map[string]any `json:"parameterSets"`
		Metadata      bool               `json:"includeResultMetadata"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		h.failREST(w, &apiError{400, "BadRequestException", "", "request body is not JSON: " + err.Error()})
		return
	}
	batch := r.URL.Path == "/BatchExecute"
	var out map[string]any
	// A refused statement is still recorded (what ran, and what PostgreSQL
	// said): an API error leaves the closure as refused, not as a failure
	// that discards the change.
	var refused error
	err := h.c.WithTasks(true, func(t *store.TaskAPI) error {
		keep := func(err error) error {
			var de *awsmodel.DataAPIError
			if errors.As(err, &de) {
				refused = err
				return nil
			}
			return err
		}
		st := store.DataStatement{ResourceARN: in.ResourceARN, SecretARN: in.SecretARN, Database: in.Database, Schema: in.Schema,
			SQL: in.SQL, TransactionID: in.TransactionID, Parameters: in.Parameters}
		if batch {
			sets := in.ParameterSets
			if len(sets) == 0 {
				sets = [][]map[string]any{nil}
			}
			results := []any{}
			for _, ps := range sets {
				st.Parameters = ps
				if _, err := t.ExecuteStatement(region, st); err != nil {
					return keep(err)
				}
				results = append(results, map[string]any{"generatedFields": []any{}})
			}
			out = map[string]any{"updateResults": results}
			return nil
		}
		res, err := t.ExecuteStatement(region, st)
		if err != nil {
			return keep(err)
		}
		records := []any{}
		for _, row := range res.Records {
			fields := []any{}
			for _, v := range row {
				fields = append(fields, map[string]any{"stringValue": v})
			}
			records = append(records, fields)
		}
		out = map[string]any{"numberOfRecordsUpdated": res.RecordsUpdated, "generatedFields": []any{}}
		if len(res.Columns) > 0 {
			out["records"] = records
		}
		if in.Metadata && len(res.Columns) > 0 {
			cols := []any{}
			for _, c := range res.Columns {
				cols = append(cols, map[string]any{"name": c, "label": c, "typeName": "text", "type": 12, "nullable": 2})
			}
			out["columnMetadata"] = cols
		}
		return nil
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		h.failREST(w, modelError(err))
		return
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
