package motojudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// jsonCall is one AWS JSON-1.x protocol call, for the services whose SDK
// module is not in go.mod (ACM, SQS): the body and X-Amz-Target the SDK
// would send, unsigned (moto does not check signatures), the error code
// as the SDK reports it — SQS's query-compatible code from
// x-amzn-query-error where moto sends one, else __type's shape name.
func (c *calls) jsonCall(version, target string, in any, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := *c.cfg.BaseEndpoint
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, url+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+version)
	req.Header.Set("X-Amz-Target", target)
	// moto routes by the signing scope's service and region.
	service := strings.ToLower(strings.SplitN(target, ".", 2)[0])
	switch {
	case strings.HasPrefix(target, "CertificateManager."):
		service = "acm"
	case strings.HasPrefix(target, "AmazonSQS."):
		service = "sqs"
		req.Header.Set("x-amzn-query-mode", "true")
	}
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/20260101/%s/%s/aws4_request, SignedHeaders=host, Signature=0",
		c.accessKey(), c.region, service))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 500 {
		return &serverError{status: resp.StatusCode, body: string(data)}
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
			Msg     string `json:"Message"`
		}
		_ = json.Unmarshal(data, &e)
		code := e.Type[strings.LastIndex(e.Type, "#")+1:]
		if q := resp.Header.Get("x-amzn-query-error"); q != "" {
			code, _, _ = strings.Cut(q, ";")
		}
		msg := e.Message
		if msg == "" {
			msg = e.Msg
		}
		return &smithy.GenericAPIError{Code: code, Message: msg}
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (c *calls) accessKey() string {
	v, err := c.cfg.Credentials.Retrieve(c.ctx)
	if err != nil {
		return "testing"
	}
	return v.AccessKeyID
}

// serverError is moto failing (a 5xx): no verdict.
type serverError struct {
	status int
	body   string
}

func (e *serverError) Error() string {
	b := e.body
	if len(b) > 200 {
		b = b[:200]
	}
	return fmt.Sprintf("moto answered %d: %s", e.status, b)
}

func createCertificate(c *calls, p props) (string, string, error) {
	c.op = "RequestCertificate"
	in := map[string]any{"DomainName": p.s("domainName"), "ValidationMethod": p.s("validationMethod")}
	if sans := p.list("subjectAlternativeNames"); len(sans) > 0 {
		in["SubjectAlternativeNames"] = sans
	}
	if k := p.s("keyAlgorithm"); k != "" {
		in["KeyAlgorithm"] = k
	}
	var tags []map[string]string
	for _, t := range p.tags() {
		tags = append(tags, map[string]string{"Key": t[0], "Value": t[1]})
	}
	if len(tags) > 0 {
		in["Tags"] = tags
	}
	var out struct{ CertificateArn string }
	if err := c.jsonCall("1.1", "CertificateManager.RequestCertificate", in, &out); err != nil {
		return "", "", err
	}
	return out.CertificateArn, out.CertificateArn, nil
}

// queueAttributes maps pulumi-aws's aws_sqs_queue inputs to CreateQueue's
// attribute names (numbers as SQS wants them: strings).
var queueAttributes = map[string]string{
	"delaySeconds":                 "DelaySeconds",
	"maxMessageSize":               "MaximumMessageSize",
	"messageRetentionSeconds":      "MessageRetentionPeriod",
	"receiveWaitTimeSeconds":       "ReceiveMessageWaitTimeSeconds",
	"visibilityTimeoutSeconds":     "VisibilityTimeout",
	"policy":                       "Policy",
	"redrivePolicy":                "RedrivePolicy",
	"redriveAllowPolicy":           "RedriveAllowPolicy",
	"kmsMasterKeyId":               "KmsMasterKeyId",
	"kmsDataKeyReusePeriodSeconds": "KmsDataKeyReusePeriodSeconds",
	"contentBasedDeduplication":    "ContentBasedDeduplication",
	"fifoQueue":                    "FifoQueue",
	"sqsManagedSseEnabled":         "SqsManagedSseEnabled",
}

func createQueue(c *calls, p props) (string, string, error) {
	c.op = "CreateQueue"
	attrs := map[string]string{}
	in := p.inOnly()
	for k, attr := range queueAttributes {
		v, ok := in.get(k)
		if !ok {
			continue
		}
		switch {
		case v.IsString():
			attrs[attr] = v.StringValue()
		case v.IsNumber():
			attrs[attr] = fmt.Sprint(int64(v.NumberValue()))
		case v.IsBool():
			attrs[attr] = fmt.Sprint(v.BoolValue())
		}
	}
	req := map[string]any{"QueueName": p.s("name")}
	if len(attrs) > 0 {
		req["Attributes"] = attrs
	}
	tags := map[string]string{}
	for _, t := range p.tags() {
		tags[t[0]] = t[1]
	}
	if len(tags) > 0 {
		req["tags"] = tags
	}
	var out struct{ QueueUrl string }
	if err := c.jsonCall("1.0", "AmazonSQS.CreateQueue", req, &out); err != nil {
		return "", "", err
	}
	return out.QueueUrl, "", nil
}

// setQueueAttribute is aws_sqs_queue_policy and
// aws_sqs_redrive_allow_policy: one SetQueueAttributes.
func setQueueAttribute(prop, attr string) creator {
	return func(c *calls, p props) (string, string, error) {
		c.op = "SetQueueAttributes"
		err := c.jsonCall("1.0", "AmazonSQS.SetQueueAttributes",
			map[string]any{"QueueUrl": p.s("queueUrl"), "Attributes": map[string]string{attr: p.s(prop)}}, nil)
		return p.s("queueUrl"), "", err
	}
}

func init() {
	creators["aws:acm/certificate:Certificate"] = createCertificate
	creators["aws:sqs/queue:Queue"] = createQueue
	creators["aws:sqs/queuePolicy:QueuePolicy"] = setQueueAttribute("policy", "Policy")
	creators["aws:sqs/redriveAllowPolicy:RedriveAllowPolicy"] = setQueueAttribute("redriveAllowPolicy", "RedriveAllowPolicy")
}
