package awsapi

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// STS (service/sts v1.52.0) speaks AWS query: form POST / with
// Action=AssumeRole|GetCallerIdentity&Version=2011-06-15, XML answers
// <ActionResponse><ActionResult>… and errors as
// <ErrorResponse><Error><Type>Sender</Type><Code>… (failQuery). Roles
// and the credentials issued live in the home dir's registry
// (store/accounts.go).
//
// Every request names its access key in the SigV4 credential scope;
// forCaller maps it to an account once per request, so the APIs below
// serve the signing account's store: the static sim keys are the home
// account, a key STS issued is its role's account, any other key is
// refused as AWS refuses it.

const stsVersion = "2011-06-15"

var credentialKey = regexp.MustCompile(`Credential=([^/,\s]+)/\d{8}/[a-z0-9-]+/[a-z0-9-]+/aws4_request`)

// signingKey is the access key id of a SigV4 Authorization header.
func signingKey(r *http.Request) (string, bool) {
	m := credentialKey.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// forCaller is the handler of the account that signs with key.
func (h *apiHandler) forCaller(key string) (*apiHandler, *apiError) {
	id, err := h.home.Identity(key)
	if err != nil {
		return nil, stsError(err)
	}
	c, err := h.home.Account(id.Account)
	if err != nil {
		return nil, internal(err)
	}
	return &apiHandler{home: h.home, c: c, caller: id}, nil
}

// stsError is an STS refusal as an API error (HTTP status and code as
// STS answers them), anything else an internal error.
func stsError(err error) *apiError {
	var se *store.STSError
	if errors.As(err, &se) {
		return &apiError{se.Status, se.Code, se.Code, se.Message}
	}
	return internal(err)
}

// failAnyProtocol writes a refusal of the credentials in the shape of the
// protocol the request speaks. The JSON protocols' services call an
// unknown key UnrecognizedClientException, as AWS's do.
func (h *apiHandler) failAnyProtocol(w http.ResponseWriter, r *http.Request, isCBOR bool, e *apiError) {
	switch {
	case isCBOR:
		h.fail(w, true, e)
	case isRoute53(r):
		h.failRoute53(w, e)
	case isQuery(r):
		service := ""
		if m := signedService.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			service = m[1]
		}
		h.failQuery(w, service, e)
	case isRDSData(r), isLambda(r):
		h.failREST(w, e)
	default:
		if e.shape == awssts.STSInvalidClientTokenID {
			e = &apiError{e.status, "UnrecognizedClientException", e.queryCode, e.message}
		}
		h.fail(w, false, e)
	}
}

// sts answers an STS action for the signing caller.
func (h *apiHandler) sts(action string, in queryIn) ([]el, *apiError) {
	if v := in.get("Version"); v != stsVersion {
		return nil, &apiError{400, "InvalidAction", "InvalidAction", "Could not find operation " + action + " for version " + v}
	}
	switch action {
	case "GetCallerIdentity":
		return []el{leaf("Arn", h.caller.ARN), leaf("UserId", h.caller.UserID), leaf("Account", h.caller.Account)}, nil
	case "AssumeRole":
		seconds := 0
		if s := in.get("DurationSeconds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, &apiError{400, awssts.STSValidation, awssts.STSValidation, "DurationSeconds " + strconv.Quote(s) + " is not a number"}
			}
			seconds = n
		}
		if in.get("RoleArn") == "" {
			return nil, missingParam("RoleArn")
		}
		if in.get("RoleSessionName") == "" {
			return nil, missingParam("RoleSessionName")
		}
		sess, err := h.home.AssumeRole(h.caller, store.AssumeRoleInput{RoleARN: in.get("RoleArn"), SessionName: in.get("RoleSessionName"),
			ExternalID: in.get("ExternalId"), Seconds: seconds, Issue: true})
		if err != nil {
			return nil, stsError(err)
		}
		id, err := h.home.Identity(sess.AccessKeyID)
		if err != nil {
			return nil, stsError(err)
		}
		return []el{
			node("Credentials", leaf("AccessKeyId", sess.AccessKeyID), leaf("SecretAccessKey", sess.SecretAccessKey),
				leaf("SessionToken", sess.SessionToken), leaf("Expiration", sess.Expires.UTC().Format(time.RFC3339))),
			node("AssumedRoleUser", leaf("AssumedRoleId", id.UserID), leaf("Arn", id.ARN)),
			leaf("PackedPolicySize", 0),
		}, nil
	}
	return nil, unknownAction("sts", action)
}
