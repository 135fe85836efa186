package router

import (
	"strconv"
	"strings"
	"testing"
)

// A 131 KB or 1 MB tenant id used to be echoed whole in the error.
func TestHugeTenantEchoIsTruncated(t *testing.T) {
	for _, n := range []int{131 << 10, 1 << 20} {
		huge := strings.Repeat("t", n)
		err := ValidTenant(huge)
		if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "bytes in all)") {
			t.Fatalf("ValidTenant(%d bytes): %d-byte message %.120q", n, len(err.Error()), err)
		}
		doc := `{"version": 1, "buckets": 1, "cells": {"cell-a": {"state": "active", "weight": 1, "buckets": ["0"]}},
  "overrides": [{"tenant": "` + huge + `", "cell": "cell-a", "state": "active"}]}`
		_, err = Parse("big.json", []byte(doc))
		want := `big.json:2: overrides[0].tenant: tenant id "` + strings.Repeat("t", 64) + `"… (` + strconv.Itoa(n) + ` bytes in all) is ` + strconv.Itoa(n) + ` bytes long; allowed: ` + TenantRule
		if err == nil || err.Error() != want {
			t.Fatalf("Parse: %.300v", err)
		}
	}
}

// Invalid bytes are reported as the byte and its offset, not as U+FFFD.
func TestInvalidByteReportedAsByte(t *testing.T) {
	err := ValidTenant("acme\xfe")
	if err == nil || !strings.Contains(err.Error(), `tenant id "acme\xfe" is not valid UTF-8 (byte 0xfe at byte offset 4)`) {
		t.Fatalf("%v", err)
	}
}
