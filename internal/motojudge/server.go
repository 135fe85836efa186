// Package motojudge is a second judge of the create calls cellctl's
// programs make: it starts moto (an AWS emulator nobody here wrote,
// `moto_server`) and sends it the AWS API calls pulumi-aws would send for a
// rendered resource, so a test can compare moto's answer with
// internal/awsmodel's. moto is lax — it accepts much AWS refuses — so
// only its refusals are evidence. Test support only (internal/layers
// keeps it out of the product).
package motojudge

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Server is one moto_server on a loopback port, for one test run.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	exited chan struct{}
}

// Start runs moto_server on a free loopback port and stops it when the
// test ends. Without moto_server on PATH the test is skipped, saying so.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := Launch()
	if errors.Is(err, ErrNoMoto) {
		tb.Skip(err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// ErrNoMoto is Launch's answer where moto_server is not on PATH.
var ErrNoMoto = errors.New("moto_server is not on PATH (pip install 'moto[server]'): the AWS API judge cannot run")

// Launch runs moto_server on a free loopback port until Stop (for a
// TestMain sharing one moto across a package's tests; Start is the
// one-test form).
func Launch() (*Server, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, ErrNoMoto
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log := &bytes.Buffer{}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting moto_server: %w", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: log}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.exited = exited
	// moto imports every service's backend on start: seconds on a busy
	// machine.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/moto-api/data.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("moto_server exited before answering on %s:\n%s", s.URL, log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("moto_server did not answer on %s within 60s: %v\n%s", s.URL, err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop kills this moto_server (the process Launch started, by its id)
// and waits for it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Reset empties every moto backend (moto's own reset API), so a second
// fleet does not meet the first one's names.
func (s *Server) Reset(tb testing.TB) {
	tb.Helper()
	resp, err := http.Post(s.URL+"/moto-api/reset", "application/json", nil)
	if err != nil {
		tb.Fatalf("resetting moto: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("resetting moto: %s", resp.Status)
	}
}

// freePort asks the kernel for a free loopback port. The listener is
// closed before moto binds it; another process could take it in between,
// which Start then reports as moto not answering.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
