package edge

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/router"
)

// The routing image: the table as the edge function ships it.
//
// One file, written here and read by image.js at cold start into typed
// arrays over its bytes: no JSON to parse and no object per override, so
// a million pinned tenants load in milliseconds and cost about 20 bytes
// each. Every byte of the file is below 0x80 ("7-bit clean"): the file is
// valid UTF-8, so it travels unchanged as text through every pipe on the
// way to Lambda (a Pulumi string asset, the engine's JSON checkpoint, the
// simulator's store) and is still read in place. Numbers are little-endian
// 32-bit words carrying 7 bits per byte ("u28": b0 | b1<<7 | b2<<14 |
// b3<<21), 16-bit words carrying 14 ("u14"), and hash words are stored as
// hash & 0x7f7f7f7f (28 of their 32 bits).
//
//	offset  bytes  field
//	0       8      magic "CELLRIMG"
//	8       4      u28 format (ImageFormat)
//	12      4      u28 header bytes (64)
//	16      4      u28 image bytes (the whole file)
//	20      8      u28 table version, low 28 bits then the rest
//	28      4      u28 buckets B
//	32      4      u28 cells C
//	36      4      u28 overrides N
//	40      4      u28 directory bits k
//	44      8      u28 CRC-32 (IEEE) of the file with these 8 bytes left out: low 28 bits, high 4
//	52      4      u28 string bytes S
//	56      8      zero
//	64             B × u14: the cell index of each bucket; zero-padded to 4 bytes
//	               (2^k + 1) × u28: the directory: override index of the first
//	                   override whose FNV hash's top k bits are d; the last is N
//	               N × 16 bytes: the overrides, sorted by (top k bits of the FNV
//	                   hash, then the words): FNV low word, Hash2 high word,
//	                   Hash2 low word (each & 0x7f7f7f7f), u28 meta = cell |
//	                   target<<12 | state<<24 (1: migrating) | write mode<<25
//	                   (1: allow, 2: reject_with_503)
//	               S bytes of strings, each a u14 length and ASCII bytes: the
//	                   table checksum, generated_at, then per cell its id and
//	                   origin ("" for a cell without one); zero-padded to 4
//
// A lookup is the FNV hash the bucket needs anyway, a directory slot from
// its top bits, and a compare of the FNV low word with the one or two
// overrides there; only when that matches is Hash2 computed and compared.
// An override therefore matches on k + 28 bits of FNV-1a and 56 bits of an
// unrelated hash — never on one 64-bit hash — and WriteImage refuses two
// overrides whose keys coincide. ReadImage checks everything image.js
// checks, in the same order and with the same messages
// (testdata/routing/image-bad holds both to them).
const (
	// ImageFile is the routing image's name in the function package.
	ImageFile = "routing.img"
	// ImageFormat is the image format this package writes and image.js reads.
	ImageFormat = 1

	imageMagic       = "CELLRIMG"
	imageHeaderBytes = 64
	imageCRCOffset   = 44
	// maxImageDirBits: 2^20 directory slots hold router.MaxOverrides at
	// about one per slot.
	maxImageDirBits = 20
	maxImageCells   = 4096 // 12 bits of the meta word
	hashMask7       = 0x7f7f7f7f

	metaMigrating    = 1 << 24
	metaWriteShift   = 25
	writeModeNone    = 0
	writeModeAllow   = 1
	writeModeReject  = 2
	imageBytesPerOvr = 16
)

func put28(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v&0x7f), byte(v>>7&0x7f), byte(v>>14&0x7f), byte(v>>21&0x7f)
}

func get28(b []byte) uint32 {
	return uint32(b[0]&0x7f) | uint32(b[1]&0x7f)<<7 | uint32(b[2]&0x7f)<<14 | uint32(b[3]&0x7f)<<21
}

func pad4(n int) int { return (n + 3) &^ 3 }

// imageDirBits is the directory size for n overrides: the smallest k with
// 2^k ≥ n, so a directory slot holds one override on average.
func imageDirBits(n int) uint {
	k := uint(0)
	for 1<<k < n && k < maxImageDirBits {
		k++
	}
	return k
}

// imageSize is the byte length of an image with these counts.
func imageSize(buckets, overrides int, dirBits uint, strs int) int {
	return imageHeaderBytes + pad4(2*buckets) + 4*(1<<dirBits+1) + imageBytesPerOvr*overrides + pad4(strs)
}

// ImageBytes is the size of the routing image of table with origins of
// originBytes bytes in all (what the package limits count).
func ImageBytes(table *router.Table, originBytes int) int {
	strs := 2 + len(table.Checksum()) + 2 + len(table.GeneratedAt())
	for _, id := range table.CellIDs() {
		strs += 4 + len(id)
	}
	n := len(table.Overrides())
	return imageSize(table.Buckets(), n, imageDirBits(n), strs+originBytes)
}

type imageOverride struct {
	prefix, f1, f2, f3, meta uint32
	tenant                   string
}

// WriteImage writes table's routing image with each cell's origin ("" or
// absent for a cell without one). It refuses what the image cannot hold
// (more cells than 4,096, an origin that is not ASCII) and two overrides
// whose keys coincide.
func WriteImage(table *router.Table, origins map[string]string) ([]byte, error) {
	cells := table.CellIDs()
	if len(cells) > maxImageCells {
		return nil, fmt.Errorf("routing image: %d cells, the image holds at most %d", len(cells), maxImageCells)
	}
	index := make(map[string]uint32, len(cells))
	for i, c := range cells {
		index[c] = uint32(i)
	}
	var strs []string
	strs = append(strs, table.Checksum(), table.GeneratedAt())
	for _, c := range cells {
		strs = append(strs, c, origins[c])
	}
	strBytes := 0
	for _, s := range strs {
		if len(s) >= 1<<14 || !printableASCII(s) {
			return nil, fmt.Errorf("routing image: %q cannot be written: strings are printable ASCII shorter than 16384 bytes", s)
		}
		strBytes += 2 + len(s)
	}

	ovs := table.Overrides()
	k := imageDirBits(len(ovs))
	entries := make([]imageOverride, len(ovs))
	for i, o := range ovs {
		h, h2 := router.Hash(o.Tenant), router.Hash2(o.Tenant)
		meta := index[o.Cell]
		if o.State == router.OverrideMigrating {
			meta |= metaMigrating | index[o.Target]<<12
			switch o.WriteMode {
			case router.WriteAllow:
				meta |= writeModeAllow << metaWriteShift
			case router.WriteRejectWith503:
				meta |= writeModeReject << metaWriteShift
			}
		}
		e := imageOverride{f1: uint32(h) & hashMask7, f2: uint32(h2>>32) & hashMask7, f3: uint32(h2) & hashMask7, meta: meta, tenant: o.Tenant}
		if k > 0 {
			e.prefix = uint32(h>>32) >> (32 - k)
		}
		entries[i] = e
	}
	key := func(a, b imageOverride) int {
		return cmp.Or(cmp.Compare(a.prefix, b.prefix), cmp.Compare(a.f1, b.f1), cmp.Compare(a.f2, b.f2), cmp.Compare(a.f3, b.f3))
	}
	slices.SortFunc(entries, key)
	for i := 1; i < len(entries); i++ {
		if key(entries[i-1], entries[i]) == 0 {
			return nil, fmt.Errorf("routing image: the overrides of %q and %q have the same routing key (FNV-1a and Hash2 agree on the bits the image keeps); one of the two tenant ids must change", entries[i-1].tenant, entries[i].tenant)
		}
	}

	size := imageSize(table.Buckets(), len(ovs), k, strBytes)
	img := make([]byte, size)
	copy(img, imageMagic)
	v := uint64(table.Version())
	for i, w := range []uint32{ImageFormat, imageHeaderBytes, uint32(size), uint32(v & (1<<28 - 1)), uint32(v >> 28),
		uint32(table.Buckets()), uint32(len(cells)), uint32(len(ovs)), uint32(k), 0, 0, uint32(strBytes)} {
		put28(img[8+4*i:], w)
	}
	p := imageHeaderBytes
	for b, c := range table.Assignment() {
		x := index[c]
		img[p+2*b], img[p+2*b+1] = byte(x&0x7f), byte(x>>7&0x7f)
	}
	p += pad4(2 * table.Buckets())
	d := 0
	for slot := 0; slot <= 1<<k; slot++ {
		for d < len(entries) && int(entries[d].prefix) < slot {
			d++
		}
		put28(img[p+4*slot:], uint32(d))
	}
	p += 4 * (1<<k + 1)
	for _, e := range entries {
		binary.LittleEndian.PutUint32(img[p:], e.f1)
		binary.LittleEndian.PutUint32(img[p+4:], e.f2)
		binary.LittleEndian.PutUint32(img[p+8:], e.f3)
		put28(img[p+12:], e.meta)
		p += imageBytesPerOvr
	}
	for _, s := range strs {
		img[p], img[p+1] = byte(len(s)&0x7f), byte(len(s)>>7&0x7f)
		copy(img[p+2:], s)
		p += 2 + len(s)
	}
	crc := imageCRC(img)
	put28(img[imageCRCOffset:], crc&(1<<28-1))
	put28(img[imageCRCOffset+4:], crc>>28)
	return img, nil
}

// imageCRC is the CRC-32 of img without its CRC field.
func imageCRC(img []byte) uint32 {
	return crc32.Update(crc32.ChecksumIEEE(img[:imageCRCOffset]), crc32.IEEETable, img[imageCRCOffset+8:])
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Image is a routing image as the edge reads it.
type Image struct {
	Version     int64
	Buckets     int
	Checksum    string
	GeneratedAt string
	Cells       []string
	// Origins are the cells' origins, "" for a cell without one.
	Origins []string
	// CRC is the image's CRC-32, as config.json names it.
	CRC uint32

	data       []byte
	bucketCell []uint16
	dirBits    uint
	dir        []uint32
	ovs        []byte
	overrides  int
}

// ImageError is a routing image the edge refuses.
type ImageError struct{ Msg string }

func (e *ImageError) Error() string { return "edge routing image: " + e.Msg }

func imageErr(format string, args ...any) error {
	return &ImageError{Msg: fmt.Sprintf(format, args...)}
}

// ReadImage checks a routing image as image.js does at cold start and
// returns it.
func ReadImage(data []byte) (*Image, error) {
	n := len(data)
	if n < imageHeaderBytes {
		return nil, imageErr("truncated: %d bytes, shorter than the %d-byte header", n, imageHeaderBytes)
	}
	if string(data[:8]) != imageMagic {
		return nil, imageErr("not a routing image: the file does not start with %s", imageMagic)
	}
	for i := 8; i < imageHeaderBytes; i++ {
		if data[i] >= 0x80 {
			return nil, imageErr("header byte %d is not 7-bit clean: not a routing image", i)
		}
	}
	w := func(i int) uint32 { return get28(data[8+4*i:]) }
	if f := w(0); f != ImageFormat {
		return nil, imageErr("format %d, this handler reads format %d", f, ImageFormat)
	}
	if h := w(1); h != imageHeaderBytes {
		return nil, imageErr("a header of %d bytes, this handler reads %d", h, imageHeaderBytes)
	}
	if size := w(2); int(size) != n {
		return nil, imageErr("the header says %d bytes, the file has %d: truncated or corrupt", size, n)
	}
	stored, computed := w(9)|w(10)<<28, imageCRC(data)
	if stored != computed {
		return nil, imageErr("checksum mismatch (crc32 %08x stored, %08x computed): the image is corrupt", stored, computed)
	}
	im := &Image{data: data, CRC: computed}
	version := uint64(w(3)) | uint64(w(4))<<28
	buckets, cells, ovs, k, strs := int(w(5)), int(w(6)), int(w(7)), uint(w(8)), int(w(11))
	switch {
	case version < 1 || version > router.MaxVersion:
		return nil, imageErr("table version %d is out of range", version)
	case buckets < 1 || buckets > router.MaxBuckets:
		return nil, imageErr("%d buckets, allowed 1 to %d", buckets, router.MaxBuckets)
	case cells < 1 || cells > maxImageCells:
		return nil, imageErr("%d cells, allowed 1 to %d", cells, maxImageCells)
	case ovs > router.MaxOverrides:
		return nil, imageErr("%d overrides, allowed at most %d", ovs, router.MaxOverrides)
	case k > maxImageDirBits:
		return nil, imageErr("%d directory bits, allowed at most %d", k, maxImageDirBits)
	case imageSize(buckets, ovs, k, strs) != n:
		return nil, imageErr("its sections (%d buckets, 2^%d directory slots, %d overrides, %d bytes of strings) do not add up to its %d bytes", buckets, k, ovs, strs, n)
	}
	im.Version, im.Buckets, im.dirBits, im.overrides = int64(version), buckets, k, ovs

	p := imageHeaderBytes
	im.bucketCell = make([]uint16, buckets)
	for b := range im.bucketCell {
		c := uint16(data[p+2*b]&0x7f) | uint16(data[p+2*b+1]&0x7f)<<7
		if int(c) >= cells {
			return nil, imageErr("bucket %d names cell %d, the image has %d cells", b, c, cells)
		}
		im.bucketCell[b] = c
	}
	p += pad4(2 * buckets)
	im.dir = make([]uint32, 1<<k+1)
	prev := uint32(0)
	for slot := range im.dir {
		d := get28(data[p+4*slot:])
		if d < prev || int(d) > ovs || slot == 0 && d != 0 || slot == 1<<k && int(d) != ovs {
			return nil, imageErr("directory slot %d is out of order", slot)
		}
		im.dir[slot], prev = d, d
	}
	p += 4 * (1<<k + 1)
	im.ovs = data[p : p+imageBytesPerOvr*ovs]
	for i := 0; i < ovs; i++ {
		if msg := metaProblem(get28(im.ovs[imageBytesPerOvr*i+12:]), cells); msg != "" {
			return nil, imageErr("override %d %s", i, msg)
		}
	}
	p += imageBytesPerOvr * ovs

	end := p + strs
	next := func(what string) (string, error) {
		if p+2 > end {
			return "", imageErr("the strings end before %s", what)
		}
		l := int(data[p]&0x7f) | int(data[p+1]&0x7f)<<7
		if p+2+l > end {
			return "", imageErr("the strings end inside %s", what)
		}
		s := string(data[p+2 : p+2+l])
		p += 2 + l
		if !printableASCII(s) {
			return "", imageErr("%s is not printable ASCII", what)
		}
		return s, nil
	}
	var err error
	if im.Checksum, err = next("the table checksum"); err != nil {
		return nil, err
	}
	if !validChecksum(im.Checksum) {
		return nil, imageErr("the table checksum %q is not sha256: and 64 hex digits", im.Checksum)
	}
	if im.GeneratedAt, err = next("generated_at"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := 0; i < cells; i++ {
		id, err := next(fmt.Sprintf("the id of cell %d", i))
		if err != nil {
			return nil, err
		}
		if !cellid.Valid(id) || seen[id] {
			return nil, imageErr("cell %d: %q is not a unique cell id", i, id)
		}
		seen[id] = true
		origin, err := next("the origin of " + id)
		if err != nil {
			return nil, err
		}
		if origin != "" && !validDNSName(origin) {
			return nil, imageErr("the origin of %s must be a DNS name", id)
		}
		im.Cells, im.Origins = append(im.Cells, id), append(im.Origins, origin)
	}
	if p != end {
		return nil, imageErr("%d bytes of strings after the last cell", end-p)
	}
	return im, nil
}

// metaProblem says what is wrong with an override's meta word, or "".
func metaProblem(meta uint32, cells int) string {
	cell, target, mode := meta&0xfff, meta>>12&0xfff, meta>>metaWriteShift&3
	switch {
	case int(cell) >= cells:
		return fmt.Sprintf("names cell %d, the image has %d cells", cell, cells)
	case meta>>27 != 0 || mode > writeModeReject:
		return "has an unknown state or write mode"
	case meta&metaMigrating == 0 && (target != 0 || mode != writeModeNone):
		return "is active but has a target or write mode"
	case int(target) >= cells:
		return fmt.Sprintf("names target cell %d, the image has %d cells", target, cells)
	}
	return ""
}

func validChecksum(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if !(hex[i] >= '0' && hex[i] <= '9' || hex[i] >= 'a' && hex[i] <= 'f') {
			return false
		}
	}
	return true
}

// ImageRoute is where the image sends one tenant.
type ImageRoute struct {
	Valid     bool
	Bucket    int // -1 for an invalid tenant id
	Cell      string
	Origin    string
	Override  bool
	State     router.OverrideState
	Target    string
	WriteMode router.WriteMode
}

// RejectsWrites reports whether the edge answers the tenant's writes with 503.
func (r ImageRoute) RejectsWrites() bool {
	return r.State == router.OverrideMigrating && r.WriteMode == router.WriteRejectWith503
}

// Route looks tenant up as image.js does.
func (im *Image) Route(tenant string) ImageRoute {
	if router.ValidTenant(tenant) != nil {
		return ImageRoute{Bucket: -1}
	}
	h := router.Hash(tenant)
	r := ImageRoute{Valid: true, Bucket: int(h % uint64(im.Buckets))}
	cell := uint32(im.bucketCell[r.Bucket])
	if i := im.find(h, tenant); i >= 0 {
		meta := get28(im.ovs[imageBytesPerOvr*i+12:])
		cell = meta & 0xfff
		r.Override, r.State = true, router.OverrideActive
		if meta&metaMigrating != 0 {
			r.State, r.Target = router.OverrideMigrating, im.Cells[meta>>12&0xfff]
			switch meta >> metaWriteShift & 3 {
			case writeModeAllow:
				r.WriteMode = router.WriteAllow
			case writeModeReject:
				r.WriteMode = router.WriteRejectWith503
			}
		}
	}
	r.Cell, r.Origin = im.Cells[cell], im.Origins[cell]
	return r
}

// find is the index of tenant's override (h its FNV hash), or -1.
func (im *Image) find(h uint64, tenant string) int {
	if im.overrides == 0 {
		return -1
	}
	slot := uint32(0)
	if im.dirBits > 0 {
		slot = uint32(h>>32) >> (32 - im.dirBits)
	}
	f1 := uint32(h) & hashMask7
	h2 := uint64(0)
	for i := im.dir[slot]; i < im.dir[slot+1]; i++ {
		e := im.ovs[imageBytesPerOvr*i:]
		if binary.LittleEndian.Uint32(e) != f1 {
			continue
		}
		if h2 == 0 {
			h2 = router.Hash2(tenant)
		}
		if binary.LittleEndian.Uint32(e[4:]) == uint32(h2>>32)&hashMask7 && binary.LittleEndian.Uint32(e[8:]) == uint32(h2)&hashMask7 {
			return int(i)
		}
	}
	return -1
}
