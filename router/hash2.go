package router

// Hash2 is the second hash of a tenant id, independent of Hash: Jenkins'
// one-at-a-time hash of the id's UTF-8 bytes in the high 32 bits and their
// CRC-32 (IEEE) in the low 32 bits. The edge's routing image keeps no
// tenant ids (a million of them would not fit a 128 MB function); it keys
// each override by its FNV-1a hash and this one, so a tenant without an
// override is taken for one only if both hashes agree — two unrelated
// functions (a multiply chain, an add-shift-xor chain and a GF(2)
// polynomial), never one 64-bit hash alone. The edge handler (image.js)
// computes the same; golden_tenants.json pins it.
func Hash2(tenant string) uint64 {
	var oaat, crc uint32 = 0, 0xffffffff
	for i := 0; i < len(tenant); i++ {
		c := tenant[i]
		oaat += uint32(c)
		oaat += oaat << 10
		oaat ^= oaat >> 6
		crc = crcTable[byte(crc)^c] ^ crc>>8
	}
	oaat += oaat << 3
	oaat ^= oaat >> 11
	oaat += oaat << 15
	return uint64(oaat)<<32 | uint64(^crc)
}

// crcTable is the CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320)
// byte table, the one hash/crc32 uses; spelled out so Hash2 is the same
// loop as the edge's.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = 0xEDB88320 ^ c>>1
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()
