package awsapi

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// Route 53 (service/route53 v1.71.0) speaks REST-XML: GetHostedZone is
// GET /2013-04-01/hostedzone/{Id}, answered from the simulated account's
// zones (sim zone add). A zone the account does not hold is AWS's
// NoSuchHostedZone (404), so the preflight's reader fails here exactly as
// it fails on AWS for a mistyped cells:hostedZoneId.

const (
	route53Prefix = "/2013-04-01/"
	route53NS     = "https://route53.amazonaws.com/doc/2013-04-01/"
)

// isRoute53 reports whether r is a Route 53 REST request.
func isRoute53(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, route53Prefix) }

func (h *apiHandler) serveRoute53(w http.ResponseWriter, r *http.Request) {
	if _, ok := signedRegion(r); !ok {
		h.failRoute53(w, &apiError{403, "MissingAuthenticationTokenException", "", "Request is missing Authentication Token"})
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, route53Prefix+"hostedzone/")
	if r.Method != http.MethodGet || !ok || id == "" || strings.Contains(id, "/") {
		h.failRoute53(w, &apiError{400, "InvalidAction", "", "the simulator serves Route 53 GetHostedZone (GET /2013-04-01/hostedzone/{Id}) only, not " + r.Method + " " + r.URL.Path})
		return
	}
	var name string
	var known bool
	if err := h.c.Read(func(st *store.State, _ *store.Control) error {
		name, known = st.Zones[id]
		return nil
	}); err != nil {
		h.failRoute53(w, internal(err))
		return
	}
	if !known {
		h.failRoute53(w, &apiError{404, "NoSuchHostedZone", "", "No hosted zone found with ID: " + id})
		return
	}
	zone := node("HostedZone",
		leaf("Id", "/hostedzone/"+id), leaf("Name", name+"."), leaf("CallerReference", "cellctl-sim-"+id),
		node("Config", leaf("PrivateZone", "false")), leaf("ResourceRecordSetCount", 2))
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<GetHostedZoneResponse xmlns="` + route53NS + `">`)
	zone.write(&b)
	node("DelegationSet", node("NameServers",
		leaf("NameServer", "ns-2048.awsdns-64.com"), leaf("NameServer", "ns-2049.awsdns-65.net"),
		leaf("NameServer", "ns-2050.awsdns-66.org"), leaf("NameServer", "ns-2051.awsdns-67.co.uk"))).write(&b)
	b.WriteString(`</GetHostedZoneResponse>`)
	w.Header().Set("Content-Type", "text/xml")
	w.Write([]byte(b.String()))
}

// failRoute53 writes Route 53's REST-XML error shape.
func (h *apiHandler) failRoute53(w http.ResponseWriter, e *apiError) {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<ErrorResponse xmlns="` + route53NS + `"><Error><Type>Sender</Type>`)
	leaf("Code", e.shape).write(&b)
	leaf("Message", e.message).write(&b)
	b.WriteString("</Error><RequestId>" + requestID() + "</RequestId></ErrorResponse>")
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.status)
	w.Write([]byte(b.String()))
}
