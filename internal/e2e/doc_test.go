package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/cmd/cellctl/root"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// The doc test: every cellctl example the documentation shows — in
// README.md's and docs/*.md's shell blocks, and in every command's --help
// Example — runs on the simulated cloud, on a copy of the deployed demo
// fleet, and must end with the exit code the documentation implies. So
// the docs cannot drift from the code again: an example that stops
// working fails here, and so does an allow-list entry that no longer
// matches any example.

// example is one command line the documentation shows.
type example struct {
	source   string // where it is written: README.md:771, `cellctl drain --help`
	scenario string // the examples that run in order on one fleet: a section of a document, one command's help
	line     string // the command as a user types it: no prompt, no trailing comment
	exit     int    // the exit code the documentation implies
	// output is the transcript the documentation shows under the
	// command (a prompt block's lines up to the next prompt): each line
	// must be one the run printed (checkTranscript).
	output []transcriptLine
}

// transcriptLine is one line of a documented command's output, and where
// it is written (file:line).
type transcriptLine struct {
	source, text string
}

// docException is a reviewed deviation: an example that cannot run as
// written on the test's fleet, and what the test does instead. Every
// entry must match at least one example (TestDocExamples fails on an
// entry that matches none), so the list cannot rot.
type docException struct {
	example string // the example's line exactly as extracted
	where   string // optional: only examples whose source starts with this
	reason  string // why, for the reviewer

	skip bool   // not run at all
	run  string // a shell line run instead of the example
	// before is a shell line run first (it must exit 0): what the
	// documentation's story did before the example that the demo fleet
	// lacks, or the reader's own input file the example names.
	before string
	// prepare readies the fleet in Go, for what a shell line cannot say.
	prepare func(t *testing.T, dir string)
	exit    *int // the exit code it must end with, when the doc's situation differs from the demo fleet's
	// interrupt: the example runs until interrupted (a watch); the test
	// sends SIGINT once it printed its first line.
	interrupt bool
}

func exitCode(n int) *int { return &n }

// docExceptions is the allow-list. Keep it small: prefer fixing the
// example.
var docExceptions = []docException{
	// Long waits.
	{example: "cellctl deploy --image app:v2", run: "cellctl deploy --image app:v2 --bake-scale 0.002",
		reason: "as written the demo waves bake 30m + 10m + 10m: scaled as every rehearsal on the simulator is (the help's later lines rerun the same rollout)"},
	{example: "cellctl secret rotate", skip: true,
		reason: "the production form: a whole rotation with the waves' real bakes (2 h 10 min on the demo's waves); the rehearsal line beside it runs the same command scaled"},
	{example: "cellctl secret rotate --steps 1", run: "cellctl secret rotate --steps 1 --bake-scale 0.002",
		reason: "as written its one step (the first of a new rotation: the line above completed one) bakes the canary wave's 30m: scaled"},
	{example: "cellctl health --watch --interval 30s", interrupt: true,
		reason: "a watch runs until interrupted: the test interrupts it after its first update (the first interrupt ends it)"},

	// The reader's own files.
	{example: "git show main:stacks/routing.json > /tmp/old.json", run: "cp stacks/routing.json /tmp/old.json",
		reason: "the test's fleet is a copy, not a git checkout: main's table is the copy's own stacks/routing.json"},
	{example: "cellctl capacity --load requests-last-hour.csv", before: `{ echo bucket,load; for b in $(seq 0 1023); do echo "$b,$((b % 7 + 1))"; done; } > requests-last-hour.csv`,
		reason: "requests-last-hour.csv is the reader's own export: the test writes one, a request count per bucket"},
	{example: "cellctl lanes cell-a --tenants tenants.csv", before: `printf 'tenant,load\nacme,120\nglobex,40\ninitech,15\numbrella,3\n' > tenants.csv`,
		reason: "tenants.csv is the reader's own tenant list with load: the test writes one"},
	{example: "cellctl lanes --tenants tenants.txt -o json", before: `printf 'acme\nglobex\ninitech\numbrella\n' > tenants.txt`,
		reason: "tenants.txt is the reader's own tenant list: the test writes one"},

	// Where the story starts somewhere else than the deployed demo fleet.
	{example: "cellctl --cloud sim router canary --bake-scale 0.01 --weight-min-requests 100", where: "README.md", prepare: tableVersion(8),
		reason: "the transcript canaries routing table version 8 (the line above makes v8 bad); the demo fleet's table is version 1: the test gives stacks/routing.json version 8, a table the router does not serve yet"},
	{example: "cellctl up --secrets-provider 'awskms://alias/cells?region=us-east-1'", skip: true,
		reason: "the first up of a team's new fleet, whose stack files name no secrets provider yet: the demo fleet's name the passphrase, and cellctl refuses to switch a stack's provider behind its back (exit 1, naming `pulumi stack change-secrets-provider`); TestKMSSecretsProviderFleet runs this up on such a fleet, after `sim kms create --alias cells`"},
	{example: "cellctl undrain cell-d --dry-run", before: "cellctl drain cell-d --now",
		reason: "undrain's examples bring back a drained cell-d; the demo fleet's is active"},
	{example: "cellctl destroy cell-d", before: "cellctl drain cell-d --now", exit: exitCode(1),
		reason: "destroy's examples retire a drained cell-d (the demo fleet's is active); a plain destroy then stops at the protected resources and says so, exit 1, as the help says — the next lines lift them"},
	{example: "cellctl migrate acme --abort", before: "cellctl migrate acme --to cell-a",
		reason: "--abort is the alternative to the line above's --finish, which ended the migration: the test starts another for it to abort"},
	{example: "cellctl deploy --abandon r-0123456789ab", exit: exitCode(1),
		reason: "r-0123456789ab is a placeholder id: nothing holds the demo fleet, so there is nothing to abandon (exit 1, saying so)"},
	{example: "cellctl rollout pause r-0123456789ab", exit: exitCode(1),
		reason: "r-0123456789ab is a placeholder id: the demo fleet has no such rollout (exit 1, saying so); TestRolloutPausedInABakeThenResumedAndApproved pauses a real one"},
	{example: "cellctl rollout resume r-0123456789ab", exit: exitCode(1),
		reason: "a placeholder id (exit 1, saying so); TestRolloutPausedInABakeThenResumedAndApproved resumes a paused rollout and one waiting for its approval"},
	{example: "cellctl rollout abort r-0123456789ab", exit: exitCode(1),
		reason: "a placeholder id (exit 1, saying so); TestRolloutAbortedMidWaveRestoresEveryCell aborts a running rollout and finishes one killed mid-abort"},
	{example: `cellctl rollout approve r-0123456789ab --wave prod --by "$GITHUB_ACTOR"`, exit: exitCode(1),
		reason: "a placeholder id and CI's actor (exit 1, saying so); TestRolloutPausedInABakeThenResumedAndApproved approves a waiting wave"},
	{example: "cellctl rollout undo --dry-run", exit: exitCode(1),
		reason: "the demo fleet has no completed rollout to undo to (exit 1, saying so); TestRolloutPausedInABakeThenResumedAndApproved undoes one"},
	{example: "cellctl quota --cloud aws", skip: true,
		reason: "reads a local AWS emulator (moto_server or LocalStack) the lines above start at AWS_ENDPOINT_URL; the test's fleet is the simulator's, and cloud.EndpointNote, the loader's emulator keys and the providers that carry them are tested without one (internal/cloud, internal/fleet, stacks, router/component)"},
	{example: "cellctl quota --add-cells 2", exit: exitCode(2),
		reason: "on the demo fleet it is a finding: us-west-2's cell-d runs one NAT per AZ, and two more such cells need 6 of the region's 2 free Elastic IPs (exit 2)"},
}

// tableVersion gives the fleet's stacks/routing.json version v.
func tableVersion(v int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		setTableVersion(t, dir, func(int) int { return v })
	}
}

// TestDocExamples runs every example (see the top of this file). The
// examples of one scenario — a section of a document, one command's help —
// run in the order they are written, on their own copy of the deployed
// demo fleet; scenarios run -parallel at a time, those that run the engine
// most first. A scenario whose steps begin another's (the same lines, from
// the same fleet) is checked on that one's runs rather than run again.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	examples := append(markdownExamples(t), helpExamples(t)...)
	if len(examples) < 50 {
		t.Fatalf("found only %d examples: the extraction is broken", len(examples))
	}
	checkExceptionsMatch(t, examples)

	var scenarios []string
	byScenario := map[string][]example{}
	for _, ex := range examples {
		if _, ok := byScenario[ex.scenario]; !ok {
			scenarios = append(scenarios, ex.scenario)
		}
		byScenario[ex.scenario] = append(byScenario[ex.scenario], ex)
	}
	covered := coverage(scenarios, byScenario)
	var runners []string
	for _, name := range scenarios {
		if by, ok := covered[name]; ok {
			t.Logf("%s: its %d example(s) are the first steps of %s, and are checked on its runs", name, len(byScenario[name]), by)
			continue
		}
		runners = append(runners, name)
	}
	// The wall time is the longest chain of runs: the scenarios that run
	// the engine most start first, the quick ones fill the gaps.
	sort.SliceStable(runners, func(i, j int) bool {
		return engineRuns(byScenario[runners[i]]) > engineRuns(byScenario[runners[j]])
	})
	queue := make(chan string)
	var wg sync.WaitGroup
	for range parallelism() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range queue {
				var also [][]example
				for s, by := range covered {
					if by == name {
						also = append(also, byScenario[s])
					}
				}
				t.Run(name, func(t *testing.T) { runScenario(t, byScenario[name], also) })
			}
		}()
	}
	for _, name := range runners {
		queue <- name
	}
	close(queue)
	wg.Wait()
}

// parallelism is go test's -parallel (GOMAXPROCS by default).
func parallelism() int {
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// runScenario runs exs in order on a fresh copy of the deployed demo
// fleet, checking each result also against the examples of the covered
// scenarios at the same step.
func runScenario(t *testing.T, exs []example, also [][]example) {
	dir := deployedFleet(t)
	// The examples run at the root of the repository, where testdata/ is.
	if err := os.Symlink(filepath.Join(repoRoot, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	for i, ex := range exs {
		r, ran := runExample(t, dir, ex)
		if !ran {
			continue
		}
		check(t, ex, r, "")
		for _, other := range also {
			if i < len(other) {
				check(t, other[i], r, " (the same step as "+ex.source+")")
			}
		}
	}
}

// step is what running ex does: its command (cellctl's global `--cloud
// sim` is every run's anyway) and the allow-list entry that applies.
func step(ex example) string {
	line := strings.Replace(ex.line, "cellctl --cloud sim ", "cellctl ", 1)
	if e := exceptionFor(ex); e != nil {
		return fmt.Sprintf("%s\x00%p", line, e)
	}
	return line
}

// coverage maps each scenario whose steps are the first steps of a longer
// (or an earlier, identical) scenario to that scenario: its examples run
// there. Identical steps from identical copies of the fleet give the same
// results.
func coverage(order []string, by map[string][]example) map[string]string {
	index := map[string]int{}
	for i, n := range order {
		index[n] = i
	}
	longest := append([]string(nil), order...)
	sort.SliceStable(longest, func(i, j int) bool { return len(by[longest[i]]) > len(by[longest[j]]) })
	prefix := func(s, of []example) bool {
		if len(s) > len(of) {
			return false
		}
		for i := range s {
			if step(s[i]) != step(of[i]) {
				return false
			}
		}
		return true
	}
	out := map[string]string{}
	for _, s := range order {
		for _, t := range longest {
			if t == s || (len(by[t]) == len(by[s]) && index[t] > index[s]) {
				continue
			}
			if prefix(by[s], by[t]) {
				out[s] = t
				break
			}
		}
	}
	return out
}

// offlineVerbs are the commands that never run a pulumi operation.
var offlineVerbs = []string{"plan", "route", "capacity", "lanes", "sim", "quota", "health", "observability", "rollout"}

// engineRuns counts the examples that run a pulumi operation.
func engineRuns(exs []example) int {
	n := 0
	for _, ex := range exs {
		f := strings.Fields(strings.ReplaceAll(ex.line, "--cloud sim", ""))
		if len(f) > 1 && f[0] == "cellctl" && !slices.Contains(offlineVerbs, f[1]) {
			n++
		}
	}
	return n
}

// transcripts keeps what every example printed, to refresh a document's
// captured output: go test ./internal/e2e -run TestDocExamples -doc.transcripts DIR
var transcripts = flag.String("doc.transcripts", "", "write each example's stdout and stderr into this directory")

func saveTranscript(t *testing.T, ex example, r result) {
	t.Helper()
	if *transcripts == "" {
		return
	}
	name := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(ex.scenario+"--"+ex.source+"--"+ex.line, "_")
	if len(name) > 200 {
		name = name[:200]
	}
	text := fmt.Sprintf("$ %s\n%s--- stderr\n%s--- exit %d\n", ex.line, r.stdout, r.stderr, r.code)
	if err := os.MkdirAll(*transcripts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*transcripts, name+".txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runExample runs one example on the fleet in dir, as the allow-list
// says; ran is false when it was not run (skipped, or its preparation
// failed, reported).
func runExample(t *testing.T, dir string, ex example) (r result, ran bool) {
	t.Helper()
	line := effectiveLine(ex)
	exc := exceptionFor(ex)
	if exc != nil {
		if exc.skip {
			t.Logf("%s: %s — not run: %s", ex.source, ex.line, exc.reason)
			return r, false
		}
		if exc.before != "" {
			if r := run(t, shellCommand(dir, ownTmp(exc.before))); r.code != 0 {
				t.Errorf("%s: %s: preparing with %q (%s): %s", ex.source, ex.line, exc.before, exc.reason, clip(r.String()))
				return r, false
			}
		}
		if exc.prepare != nil {
			exc.prepare(t, dir)
		}
	}
	if exc == nil && !strings.HasPrefix(ex.line, "cellctl ") {
		t.Errorf("%s: %q is not a cellctl command: make it one, or allow-list it with what the test runs instead", ex.source, ex.line)
		return r, false
	}
	start := time.Now()
	if exc != nil && exc.interrupt {
		r = runInterrupted(t, dir, line)
	} else {
		r = run(t, shellCommand(dir, line))
	}
	r.took = time.Since(start).Round(100 * time.Millisecond)
	saveTranscript(t, ex, r)
	return r, true
}

// tmpPath is a /tmp/ path in a shell line.
var tmpPath = regexp.MustCompile(`(^|[\s>=])/tmp/`)

// ownTmp points the /tmp/ paths of a shell line at the fleet's own
// $TMPDIR: an example may tell the reader to use /tmp, a test writes
// nothing outside its own directories.
func ownTmp(line string) string {
	return tmpPath.ReplaceAllString(line, `${1}"$$TMPDIR"/`)
}

// effectiveLine is the shell line the test runs for ex: its allow-list
// entry's replacement, if any, with /tmp/ paths in the fleet's $TMPDIR.
func effectiveLine(ex example) string {
	line := ex.line
	if exc := exceptionFor(ex); exc != nil && exc.run != "" {
		line = exc.run
	}
	return ownTmp(line)
}

// check compares r with the exit code ex's documentation implies (or its
// allow-list entry says).
func check(t *testing.T, ex example, r result, note string) {
	t.Helper()
	want, how := ex.exit, ""
	if exc := exceptionFor(ex); exc != nil {
		if exc.exit != nil {
			want = *exc.exit
		}
		how = " (" + exc.reason + ")"
	}
	if line := effectiveLine(ex); line != ex.line {
		how = fmt.Sprintf(" (run as %q%s)", line, strings.TrimSuffix(strings.Replace(how, " (", ": ", 1), ")"))
	}
	if r.code != want {
		t.Errorf("%s: %s%s%s: exit %d, the documentation implies %d (%s, %.1f CPU-s)\n%s", ex.source, ex.line, how, note, r.code, want, r.took, r.cpu.Seconds(), clip(r.String()))
		return
	}
	checkTranscript(t, ex, r, note)
	t.Logf("%s: %s%s%s: exit %d (%s, %.1f CPU-s)", ex.source, ex.line, how, note, r.code, r.took, r.cpu.Seconds())
}

// runInterrupted starts line, waits for its first output on stdout, and
// interrupts it once (as Ctrl-C does).
func runInterrupted(t *testing.T, dir, line string) result {
	t.Helper()
	cmd := shellCommand(dir, "exec "+line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	first := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
			if !once {
				once = true
				close(first)
			}
		}
		if !once {
			close(first)
		}
	}()
	select {
	case <-first:
	case <-time.After(2 * time.Minute): // silent: interrupt it anyway, its output says why
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	<-done
	err = cmd.Wait()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: errOut.String(), code: code, cpu: cpuOf(cmd)}
}

func clip(s string) string {
	const max = 4000
	if len(s) <= max {
		return s
	}
	return s[:max/2] + "\n…\n" + s[len(s)-max/2:]
}

func exceptionFor(ex example) *docException {
	for i := range docExceptions {
		e := &docExceptions[i]
		if e.example == ex.line && strings.HasPrefix(ex.source, e.where) {
			return e
		}
	}
	return nil
}

// checkExceptionsMatch fails on an allow-list entry that matches no
// example (the example changed or went: the entry must go too) and on an
// entry without a reason or with nothing to do.
func checkExceptionsMatch(t *testing.T, examples []example) {
	t.Helper()
	for _, e := range docExceptions {
		if strings.TrimSpace(e.reason) == "" {
			t.Errorf("allow-list entry %q has no reason", e.example)
		}
		if !e.skip && e.run == "" && e.before == "" && e.prepare == nil && e.exit == nil && !e.interrupt {
			t.Errorf("allow-list entry %q changes nothing: remove it", e.example)
		}
		matched := false
		for _, ex := range examples {
			if e.example == ex.line && strings.HasPrefix(ex.source, e.where) {
				matched = true
				break
			}
		}
		if !matched {
			t.Errorf("allow-list entry %q (where %q) matches no example in the documentation any more: remove it", e.example, e.where)
		}
	}
}

// markdownExamples are the examples of README.md and docs/*.md.
func markdownExamples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(repoRoot, "README.md")}, files...)
	var out []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		out = append(out, parseMarkdown(rel, string(data))...)
	}
	return out
}

var (
	fenceRe  = regexp.MustCompile("^(```+|~~~+)\\s*([A-Za-z0-9_-]*)")
	headRe   = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	exitLine = regexp.MustCompile(`^\(?exit (\d+)\)?$`)
	codeLine = regexp.MustCompile(`^\d+$`)
)

// shellFences are the fenced block languages that hold commands (an
// unlabelled block too: transcripts).
var shellFences = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// echoStatus is how a transcript shows a command's exit code on one line:
// `cellctl … ; echo "exit $?"`, followed by an `exit N` line.
const echoStatus = `; echo "exit $?"`

// parseMarkdown extracts the examples of one document. In a fenced shell
// block with prompts ("$ "), every prompt line is a command, and its exit
// code is what the transcript shows: an `exit N` or `(exit N)` line in its
// output, or a following `$ echo $?` and its number; 0 otherwise. In a
// block without prompts every line that starts with "cellctl " is one,
// exit 0. Each section (heading) is a scenario.
func parseMarkdown(file, text string) []example {
	var out []example
	lines := strings.Split(text, "\n")
	section := file
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := headRe.FindStringSubmatch(l); m != nil {
			section = file + " § " + strings.TrimSpace(m[1])
			continue
		}
		m := fenceRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		start, fence := i, m[1]
		var block []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], fence); i++ {
			block = append(block, lines[i])
		}
		if !shellFences[m[2]] {
			continue
		}
		prompts := false
		for _, b := range block {
			if strings.HasPrefix(b, "$ ") {
				prompts = true
			}
		}
		for j, b := range block {
			src := fmt.Sprintf("%s:%d", file, start+2+j)
			if !prompts {
				if strings.HasPrefix(b, "cellctl ") {
					out = append(out, example{source: src, scenario: section, line: stripComment(b)})
				}
				continue
			}
			if !strings.HasPrefix(b, "$ ") {
				continue
			}
			cmd := stripComment(strings.TrimPrefix(b, "$ "))
			if cmd == "echo $?" {
				continue // the previous command's status
			}
			ex := example{source: src, scenario: section, line: cmd}
			ex.line = strings.TrimSpace(strings.TrimSuffix(cmd, echoStatus))
			for k := j + 1; k < len(block); k++ {
				next := strings.TrimSpace(block[k])
				if strings.HasPrefix(block[k], "$ ") {
					if next == "$ echo $?" && k+1 < len(block) && codeLine.MatchString(strings.TrimSpace(block[k+1])) {
						ex.exit, _ = strconv.Atoi(strings.TrimSpace(block[k+1]))
					}
					break
				}
				if mm := exitLine.FindStringSubmatch(next); mm != nil {
					ex.exit, _ = strconv.Atoi(mm[1])
					break
				}
				if next != "" {
					ex.output = append(ex.output, transcriptLine{source: fmt.Sprintf("%s:%d", file, start+2+k), text: block[k]})
				}
			}
			out = append(out, ex)
		}
	}
	return out
}

// stripComment removes a trailing shell comment (a # after a blank,
// outside quotes) and surrounding blanks.
func stripComment(s string) string {
	var quote rune
	prev := ' '
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimSpace(s[:i])
		}
		prev = r
	}
	return strings.TrimSpace(s)
}

// helpExamples are the Example lines of every command's --help, walked
// from the command tree cellctl runs.
func helpExamples(t *testing.T) []example {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	var out []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example != "" {
			src := "`" + c.CommandPath() + " --help`"
			for _, l := range strings.Split(c.Example, "\n") {
				if l = stripComment(l); l != "" {
					out = append(out, example{source: src, scenario: src, line: l})
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root.NewCmdRoot(cmdutil.NewFactory(io)))
	return out
}

// TestDocExamplesExtraction pins the extraction rules on a sample.
func TestDocExamplesExtraction(t *testing.T) {
	t.Parallel()
	doc := "# T\n## One\n```sh\ncellctl a --x 'y # z'   # comment\nmake demo\n```\n" +
		"```\n$ cellctl b\nout\n(exit 1)\n$ cellctl c; echo \"exit $?\"\nexit 3\n$ cellctl d\n$ echo $?\n2\n$ cellctl e\ncellctl not-a-command\n```\n" +
		"## Two\n```yaml\ncellctl: no\n```\n"
	got := parseMarkdown("X.md", doc)
	want := []example{
		{source: "X.md:4", scenario: "X.md § One", line: "cellctl a --x 'y # z'"},
		{source: "X.md:8", scenario: "X.md § One", line: "cellctl b", exit: 1, output: []transcriptLine{{"X.md:9", "out"}}},
		{source: "X.md:11", scenario: "X.md § One", line: "cellctl c", exit: 3},
		{source: "X.md:13", scenario: "X.md § One", line: "cellctl d", exit: 2},
		{source: "X.md:16", scenario: "X.md § One", line: "cellctl e", output: []transcriptLine{{"X.md:17", "cellctl not-a-command"}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
	for in, want := range map[string]string{
		"git show main:x > /tmp/old.json":         `git show main:x > "$TMPDIR"/old.json`,
		"cellctl route --diff /tmp/old.json acme": `cellctl route --diff "$TMPDIR"/old.json acme`,
		"cellctl x --out=/tmp/a ./tmp/b":          `cellctl x --out="$TMPDIR"/a ./tmp/b`,
	} {
		if got := ownTmp(in); got != want {
			t.Errorf("ownTmp(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadmeListsEverySimCommand: the README's command table names every
// `cellctl sim` subcommand, and every verb of each.
func TestReadmeListsEverySimCommand(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| `cellctl sim …`") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("README.md has no `cellctl sim …` row in its command table")
	}
	listed := map[string][]string{}
	for _, m := range regexp.MustCompile("`([a-z-]+)(?: ([a-z/-]+))?`").FindAllStringSubmatch(row, -1) {
		if m[2] != "" {
			listed[m[1]] = strings.Split(m[2], "/")
		} else {
			listed[m[1]] = nil
		}
	}
	io, _, _, _ := iostreams.Test()
	sim, _, err := root.NewCmdRoot(cmdutil.NewFactory(io)).Find([]string{"sim"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sim.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		var verbs []string
		for _, v := range c.Commands() {
			verbs = append(verbs, v.Name())
		}
		got, ok := listed[c.Name()]
		sort.Strings(verbs)
		sort.Strings(got)
		if !ok || strings.Join(got, "/") != strings.Join(verbs, "/") {
			want := "`" + c.Name() + "`"
			if len(verbs) > 0 {
				want = "`" + c.Name() + " " + strings.Join(verbs, "/") + "`"
			}
			t.Errorf("README.md's `cellctl sim …` row does not list %s", want)
		}
	}
}

// TestDocScenarioCoverage: a scenario whose steps begin a longer one's
// runs there (`cellctl --cloud sim X` is the step `cellctl X`); of two
// identical ones the first runs; a scenario that differs anywhere runs.
func TestDocScenarioCoverage(t *testing.T) {
	t.Parallel()
	ex := func(lines ...string) []example {
		var out []example
		for _, l := range lines {
			out = append(out, example{line: l})
		}
		return out
	}
	by := map[string][]example{
		"help":   ex("cellctl drift", "cellctl drift --skew"),
		"readme": ex("cellctl drift", "cellctl --cloud sim drift --skew", "cellctl sim edit a b c d"),
		"same1":  ex("cellctl plan"),
		"same2":  ex("cellctl --cloud sim plan"),
		"other":  ex("cellctl drift", "cellctl drift --cloud"),
	}
	got := coverage([]string{"help", "readme", "same1", "same2", "other"}, by)
	want := map[string]string{"help": "readme", "same2": "same1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("coverage = %v, want %v", got, want)
	}
}

// TestDocAllowListMatches: the allow-list's rot check alone, without a
// fleet (TestDocExamples runs it too).
func TestDocAllowListMatches(t *testing.T) {
	t.Parallel()
	checkExceptionsMatch(t, append(markdownExamples(t), helpExamples(t)...))
}
