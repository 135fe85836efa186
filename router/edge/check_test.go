package edge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

// badConfigs are config.json files the handler refuses next to the golden
// "full" image: each is the golden config with one change.
func badConfigs() []struct {
	name   string
	mutate func(cfg map[string]any)
} {
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	del := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }
	image := func(k string, v any) func(map[string]any) {
		return func(c map[string]any) { c["image"].(map[string]any)[k] = v }
	}
	origins := func(f func(o map[string]any)) func(map[string]any) {
		return func(c map[string]any) { f(c["origins"].(map[string]any)) }
	}
	return []struct {
		name   string
		mutate func(cfg map[string]any)
	}{
		{"format", set("format", 1)},
		{"format_missing", del("format")},
		{"version", set("version", 0)},
		{"version_mismatch", set("version", 7)},
		{"tenant_from", set("tenantFrom", "cookie")},
		{"header", set("tenantHeader", "")},
		{"jwt_without_claim", set("tenantFrom", "jwt")},
		{"jwt_bad_claim", func(c map[string]any) { c["tenantFrom"], c["tenantClaim"] = "jwt", "t id" }},
		{"image_missing", del("image")},
		{"image_bytes", image("bytes", 12)},
		{"image_crc", image("crc32", "00000000")},
		{"checksum", set("checksum", "sha256:"+strings.Repeat("0", 64))},
		{"checksum_missing", del("checksum")},
		{"generated_at", set("generatedAt", "2026-01-01T00:00:00Z")},
		{"origins_not_object", set("origins", []any{"cell-a"})},
		{"origin_unknown_cell", origins(func(o map[string]any) { o["cell-x"] = "x.example.com" })},
		{"origin_differs", origins(func(o map[string]any) { o["cell-a"] = "elsewhere.example.com" })},
		{"origin_null", origins(func(o map[string]any) { o["cell-b"] = nil })},
		{"origin_missing", origins(func(o map[string]any) { delete(o, "cell-d") })},
		{"host_domains", set("tenantHostDomains", []any{"Example.com"})},
		{"lanes_shape", set("lanes", map[string]any{"cell-a": []any{8}})},
		{"lanes_unknown_cell", set("lanes", map[string]any{"cell-x": []any{8, 2}})},
	}
}

// imageLayout finds the sections of an image, for the mutations below.
type imageLayout struct{ buckets, dir, ovs, strs int }

func layoutOf(img []byte) imageLayout {
	w := func(i int) int { return int(get28(img[8+4*i:])) }
	l := imageLayout{buckets: imageHeaderBytes}
	l.dir = l.buckets + pad4(2*w(5))
	l.ovs = l.dir + 4*(1<<w(8)+1)
	l.strs = l.ovs + imageBytesPerOvr*w(7)
	return l
}

// fixCRC rewrites an image's CRC after a mutation, so the mutation itself
// is what the reader finds.
func fixCRC(img []byte) []byte {
	crc := imageCRC(img)
	put28(img[imageCRCOffset:], crc&(1<<28-1))
	put28(img[imageCRCOffset+4:], crc>>28)
	return img
}

// badImages are routing images the handler refuses: the golden "full"
// image cut, grown, corrupted, or changed and re-checksummed.
func badImages(good []byte) map[string][]byte {
	cp := func() []byte { return append([]byte(nil), good...) }
	l := layoutOf(good)
	word := func(i int, v uint32) []byte { b := cp(); put28(b[8+4*i:], v); return fixCRC(b) }
	at := func(sub string) int { return l.strs + bytes.Index(good[l.strs:], []byte(sub)) }
	out := map[string][]byte{
		"empty":            {},
		"header_truncated": good[:40],
		"truncated":        good[:len(good)-16],
		"trailing_bytes":   append(cp(), 0, 0, 0, 0),
		"magic":            append([]byte("CELLRIMX"), good[8:]...),
		"format":           word(0, 2),
		"header_size":      word(1, 72),
		"version_zero":     fixCRC(func() []byte { b := cp(); put28(b[20:], 0); put28(b[24:], 0); return b }()),
		"cell_count_zero":  word(6, 0),
		"override_count":   word(7, get28(good[36:])+1),
		"dir_bits":         word(8, 21),
	}
	b := cp()
	b[20] |= 0x80
	out["header_high_bit"] = b
	b = cp()
	b[l.ovs+5] ^= 0x01
	out["corrupt"] = b
	b = cp()
	b[l.buckets+2*7], b[l.buckets+2*7+1] = 99, 0
	out["bucket_cell"] = fixCRC(b)
	b = cp()
	put28(b[l.dir+4*3:], get28(b[l.dir+4*2:])+3)
	out["directory_order"] = fixCRC(b)
	b = cp()
	put28(b[l.ovs+12:], 77)
	out["override_cell"] = fixCRC(b)
	b = cp()
	put28(b[l.ovs+12:], get28(b[l.ovs+12:])&0xfff|3<<12)
	out["override_active_with_target"] = fixCRC(b)
	b = cp()
	b[l.strs+2+7] = 'Z'
	out["checksum_string"] = fixCRC(b)
	b = cp()
	b[at("cell-b")+5] = 'B'
	out["cell_id"] = fixCRC(b)
	b = cp()
	copy(b[at("cell-b"):], "cell-a")
	out["cell_id_twice"] = fixCRC(b)
	b = cp()
	b[at("cell-d-4444444444")+6] = '_'
	out["origin_not_dns"] = fixCRC(b)
	b = cp()
	b[l.strs] = 0x7f
	out["strings_overrun"] = fixCRC(b)
	return out
}

func goldenFull(t *testing.T) (cfg, img []byte) {
	t.Helper()
	tb := goldenTable(t)
	b := mustBuild(t, tb, goldenOrigins, Options{TenantHeader: DefaultTenantHeader, TenantHostDomains: goldenHostDomains})
	return b.Config, b.Image
}

// TestCheckConfigRefusesWhatTheHandlerRefuses writes (with -update) and
// checks testdata/routing/edge-config-bad: CheckConfig refuses each config
// next to the golden image with the message in its .want, which
// check.test.js holds compile() in routing.js to.
func TestCheckConfigRefusesWhatTheHandlerRefuses(t *testing.T) {
	cfgData, img := goldenFull(t)
	for _, c := range badConfigs() {
		var cfg map[string]any
		if err := json.Unmarshal(cfgData, &cfg); err != nil {
			t.Fatal(err)
		}
		c.mutate(cfg)
		data, _ := json.MarshalIndent(cfg, "", "  ")
		data = append(data, '\n')
		err := CheckConfig(data, img)
		if err == nil {
			t.Errorf("%s: CheckConfig accepted it", c.name)
			continue
		}
		checkGolden(t, filepath.Join("edge-config-bad", c.name+".json"), data)
		checkGolden(t, filepath.Join("edge-config-bad", c.name+".want"), []byte(err.Error()+"\n"))
	}
}

// TestReadImageRefusesWhatTheHandlerRefuses: the same for the images of
// testdata/routing/image-bad (image.test.js holds readImage to them).
func TestReadImageRefusesWhatTheHandlerRefuses(t *testing.T) {
	_, img := goldenFull(t)
	bad := badImages(img)
	names := make([]string, 0, len(bad))
	for n := range bad {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		_, err := ReadImage(bad[name])
		if err == nil {
			t.Errorf("%s: ReadImage accepted it", name)
			continue
		}
		checkGolden(t, filepath.Join("image-bad", name+".img"), bad[name])
		checkGolden(t, filepath.Join("image-bad", name+".want"), []byte(err.Error()+"\n"))
	}
	if len(names) < 20 {
		t.Errorf("only %d bad images", len(names))
	}
}

// TestCheckPackageAcceptsWhatIsPackaged: every golden package the handler
// runs with, and a package built from the demo table, pass.
func TestCheckPackageAcceptsWhatIsPackaged(t *testing.T) {
	for _, name := range []string{"full", "partial", "nohost", "lanes", "jwt"} {
		cfg, err := os.ReadFile(filepath.Join(goldenDir, "edge", name, ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		img, err := os.ReadFile(filepath.Join(goldenDir, "edge", name, ImageFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckConfig(cfg, img); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	table, err := router.Load("../../stacks/routing.json")
	if err != nil {
		t.Fatal(err)
	}
	origins := map[string]string{}
	for _, id := range table.CellIDs() {
		origins[id] = id + ".cells.example.com"
	}
	files, err := Package(table, origins, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPackage(files); err != nil {
		t.Errorf("the package: %v", err)
	}
	// A package whose image was swapped for another table's is refused.
	other := table.Spec()
	other.Version++
	ot, _ := router.New(other)
	ofiles, err := Package(ot, origins, "")
	if err != nil {
		t.Fatal(err)
	}
	files[ImageFile] = ofiles[ImageFile]
	if err := CheckPackage(files); err == nil || !strings.Contains(err.Error(), "is not the image this config names") {
		t.Errorf("a package with another table's image: %v", err)
	}
}

// TestCheckTableFile: a valid table passes with its package's costs; one
// the table rules refuse fails with file:line: field; one naming a cell
// outside the fleet fails at that cell's line.
func TestCheckTableFile(t *testing.T) {
	good := []byte("{\n  \"version\": 2,\n  \"buckets\": 8,\n  \"cells\": {\n    \"cell-a\": {\"state\": \"active\", \"weight\": 1, \"buckets\": [\"0-7\"]}\n  },\n  \"overrides\": []\n}\n")
	c, err := CheckTableFile("t.json", good, TableCheck{})
	if err != nil {
		t.Fatalf("valid table: %v", err)
	}
	if c.ImageBytes < imageHeaderBytes || c.PackageBytes < c.ImageBytes+CodeBytes() || c.MemoryMB != DefaultMemoryMB || c.NeededMemoryMB != NeededMemoryMB(0) {
		t.Errorf("costs: %+v", c)
	}
	_, err = CheckTableFile("t.json", good, TableCheck{FleetCells: []string{"cell-b"}, FleetFile: func(id string) string { return "stacks/Pulumi." + id + ".yaml" }})
	if err == nil || err.Error() != "t.json:5: cells.cell-a: not a cell of this fleet (no stacks/Pulumi.cell-a.yaml): remove it from the table or add the cell" {
		t.Errorf("cell outside the fleet: %v", err)
	}
	bad := []byte(strings.Replace(string(good), `"0-7"`, `"0-6"`, 1))
	if _, err := CheckTableFile("t.json", bad, TableCheck{}); err == nil || !strings.HasPrefix(err.Error(), "t.json:") {
		t.Errorf("unassigned bucket: %v", err)
	}
	_, err = CheckTableFile("t.json", good, TableCheck{Options: Options{TenantHeader: "Host"}})
	if err == nil || !strings.Contains(err.Error(), "the edge function cannot be built from this table") {
		t.Errorf("a tenant header the edge refuses: %v", err)
	}
	_, err = CheckTableFile("t.json", good, TableCheck{Options: Options{TenantFrom: "jwt:"}})
	if err == nil || !strings.Contains(err.Error(), "tenant source: jwt:: the claim must be") {
		t.Errorf("an empty claim: %v", err)
	}
}

func TestCheckTenantFrom(t *testing.T) {
	for v, want := range map[string]string{"": "", "header": "", "jwt:tid": "tid", "jwt:https://example.com/tenant": "https://example.com/tenant"} {
		if got, err := CheckTenantFrom(v); err != nil || got != want {
			t.Errorf("%q: %q, %v", v, got, err)
		}
	}
	for _, v := range []string{"jwt", "jwt:", "cookie:tid", "Header", "jwt:a b", `jwt:a"b`, "jwt:" + strings.Repeat("c", 129)} {
		if _, err := CheckTenantFrom(v); err == nil {
			t.Errorf("%q accepted", v)
		} else if !strings.Contains(err.Error(), "jwt:") {
			t.Errorf("%q: %v says nothing of jwt:<claim>", v, err)
		}
	}
}
