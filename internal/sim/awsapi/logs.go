package awsapi

import (
	"encoding/json"
	"net/http"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// CloudWatch Logs (service/cloudwatchlogs v1.92.2): AWS JSON 1.1,
// X-Amz-Target Logs_20140328.<Op>; GetLogEvents over the store's log
// streams (the tasks' awslogs output), with the paging of
// internal/awsmodel/logs_events.go. The log group must exist as a
// LogGroup resource in the request's region.

const logsTarget = "Logs_20140328."

func (h *apiHandler) serveLogs(w http.ResponseWriter, op string, body []byte, region string) {
	var in struct {
		LogGroupName       string `json:"logGroupName"`
		LogGroupIdentifier string `json:"logGroupIdentifier"`
		LogStreamName      string `json:"logStreamName"`
		StartFromHead      bool   `json:"startFromHead"`
		NextToken          string `json:"nextToken"`
		Limit              *int   `json:"limit"`
		StartTime          *int64 `json:"startTime"`
		EndTime            *int64 `json:"endTime"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			h.fail(w, false, &apiError{400, "SerializationException", "SerializationException", "request body is not JSON: " + err.Error()})
			return
		}
	}
	if op != "GetLogEvents" {
		h.fail(w, false, &apiError{400, "UnknownOperationException", "UnknownOperation", "the simulator serves CloudWatch Logs GetLogEvents only, not " + op})
		return
	}
	var out map[string]any
	// A change: reading the logs first moves the tasks on by time (their
	// output appears as they run).
	err := h.c.WithTasks(true, func(t *store.TaskAPI) error {
		group, err := awsmodel.LogGroupParam(in.LogGroupName, in.LogGroupIdentifier)
		if err != nil {
			return err
		}
		if in.LogStreamName == "" {
			return &awsmodel.LogsError{Code: awsmodel.LogsInvalidParameter, Message: "1 validation error detected: Value null at 'logStreamName' failed to satisfy constraint: Member must not be null"}
		}
		limit, err := awsmodel.CheckLogEventsLimit(derefInt(in.Limit), in.Limit != nil)
		if err != nil {
			return err
		}
		if t.View.LookupTyped(store.TypeLogGroup, group, region) == nil {
			return awsmodel.LogGroupNotFoundError()
		}
		now := t.Cloud().Now()
		for _, tr := range t.ECS.Tasks {
			t.Advance(tr, now, false)
		}
		s := t.Logs.Streams[store.LogKey(region, group, in.LogStreamName)]
		if s == nil {
			return awsmodel.LogStreamNotFoundError()
		}
		var events []store.LogEvent
		for _, e := range s.Events {
			if in.StartTime != nil && e.Timestamp < *in.StartTime || in.EndTime != nil && e.Timestamp >= *in.EndTime {
				continue
			}
			events = append(events, e)
		}
		page, err := awsmodel.GetLogEventsPage(len(events), limit, in.StartFromHead, in.NextToken)
		if err != nil {
			return err
		}
		list := []any{}
		for _, e := range events[page.From:page.To] {
			list = append(list, map[string]any{"timestamp": e.Timestamp, "message": e.Message, "ingestionTime": e.Ingestion})
		}
		out = map[string]any{"events": list, "nextForwardToken": page.Forward, "nextBackwardToken": page.Back}
		return nil
	})
	if err != nil {
		h.fail(w, false, modelError(err))
		return
	}
	writeJSON11(w, out)
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
