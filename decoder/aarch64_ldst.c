/* aarch64 loads and stores decoded from the instruction word (Arm ARM,
 * "Loads and Stores"): the address form, the bytes touched, read or write,
 * writeback, and the registers loaded. Capstone 4.0.2 gives no access size,
 * marks many loads as writes, and cannot decode the LSE atomics (CAS, LDADD,
 * SWP ...) or LDAPR at all, so the backend takes all of this from here and
 * uses Capstone for the text and the look-ahead's other instructions.
 * Runs in the trap handler: arithmetic only. */
#include <string.h>

#include "decoder/aarch64.h"

uint16_t rtl_a64_zva_bytes = 64;

static unsigned bits(uint32_t x, int hi, int lo)
{
	return (x >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/* Base register field: 31 is sp. */
static int8_t base_reg(unsigned rn)
{
	return (int8_t)rn;
}

/* A register loaded: 31 is the zero register, written to nowhere. */
static void loads(struct rtl_a64_access *a, unsigned rt)
{
	if (rt != 31)
		a->writes |= 1u << rt;
}

static void access_is(struct rtl_a64_access *a, int load, unsigned bytes)
{
	a->mem.access = load ? RTL_ACC_READ : RTL_ACC_WRITE;
	a->mem.size = (uint16_t)bytes;
}

/* LDXR/STXR, LDAXP/STLXP, LDAR/STLR, CAS, CASP. */
static int exclusive(uint32_t x, struct rtl_a64_access *a)
{
	unsigned size = bits(x, 31, 30), o2 = bits(x, 23, 23);
	unsigned load = bits(x, 22, 22), o1 = bits(x, 21, 21);
	unsigned rs = bits(x, 20, 16), rt2 = bits(x, 14, 10), rt = bits(x, 4, 0);

	a->mem.base = base_reg(bits(x, 9, 5));
	if (o2 && o1) { /* CAS: compare Rs, store Rt, old value to Rs */
		a->mem.access = RTL_ACC_READ | RTL_ACC_WRITE;
		a->mem.size = (uint16_t)(1u << size);
		loads(a, rs);
		a->name = "cas";
		return 1;
	}
	if (!o2 && o1 && !(size & 2)) { /* CASP: pairs Rs, Rs+1 */
		a->mem.access = RTL_ACC_READ | RTL_ACC_WRITE;
		a->mem.size = (uint16_t)(2u * (4u << (size & 1)));
		loads(a, rs);
		loads(a, rs + 1);
		a->name = "casp";
		return 1;
	}
	if (!o2 && o1) { /* LDXP/LDAXP, STXP/STLXP */
		access_is(a, load, 2u * (4u << (size & 1)));
		if (load) {
			loads(a, rt);
			loads(a, rt2);
		} else {
			loads(a, rs); /* the status */
		}
		return 1;
	}
	access_is(a, load, 1u << size); /* LDXR, STXR, LDAR, STLR ... */
	if (load)
		loads(a, rt);
	else if (!o2)
		loads(a, rs); /* STXR's status */
	return 1;
}

/* LDR (literal), LDRSW (literal), PRFM (literal). */
static int literal(uint32_t x, uint64_t pc, struct rtl_a64_access *a)
{
	static const uint8_t gpr_bytes[4] = { 4, 8, 4, 0 };
	static const uint8_t fp_bytes[4] = { 4, 8, 16, 0 };
	unsigned opc = bits(x, 31, 30), v = bits(x, 26, 26);

	a->mem.disp = (int64_t)pc + rtl_a64_sext(bits(x, 23, 5), 19) * 4;
	if (!v && opc == 3) {
		a->flags |= RTL_INSN_NOFAULT; /* prfm */
		a->mem.access = RTL_ACC_READ;
		return 1;
	}
	access_is(a, 1, v ? fp_bytes[opc] : gpr_bytes[opc]);
	if (!v)
		loads(a, bits(x, 4, 0));
	return 1;
}

/* LDP/STP, LDPSW, LDNP/STNP, STGP: offset, pre- and post-index. */
static int pair(uint32_t x, struct rtl_a64_access *a)
{
	unsigned opc = bits(x, 31, 30), v = bits(x, 26, 26);
	unsigned mode = bits(x, 24, 23), load = bits(x, 22, 22);
	unsigned reg;
	int64_t imm;

	if (opc == 3)
		return 0;
	if (v)
		reg = 4u << opc;
	else
		reg = opc == 2 ? 8 : opc == 1 && !load ? 8
		                                       : 4;
	imm = rtl_a64_sext(bits(x, 21, 15), 7) * (int64_t)(opc == 1 && !load && !v ? 16 : reg);
	a->mem.base = base_reg(bits(x, 9, 5));
	access_is(a, load, 2 * reg);
	if (mode == 1) { /* post-index: the access at the base */
		a->wb_reg = a->mem.base;
		a->wb_imm = imm;
	} else {
		a->mem.disp = imm;
		if (mode == 3) {
			a->wb_reg = a->mem.base;
			a->wb_imm = imm;
		}
	}
	if (load && !v) {
		loads(a, bits(x, 4, 0));
		loads(a, bits(x, 14, 10));
	}
	return 1;
}

/* Bytes and direction of LDR/STR/LDRS* by size, V and opc; 0 bytes for a
 * prefetch. */
static int plain_access(uint32_t x, struct rtl_a64_access *a)
{
	unsigned size = bits(x, 31, 30), v = bits(x, 26, 26);
	unsigned opc = bits(x, 23, 22);

	if (v) {
		access_is(a, opc & 1, (opc & 2) ? 16 : 1u << size);
		return 1;
	}
	if (opc == 2 && size == 3) { /* prfm, prfum */
		a->flags |= RTL_INSN_NOFAULT;
		a->mem.access = RTL_ACC_READ;
		return 1;
	}
	access_is(a, opc != 0, 1u << size);
	if (opc != 0)
		loads(a, bits(x, 4, 0));
	return 1;
}

/* LDADD, LDCLR, LDEOR, LDSET, LD[SU]MAX/MIN, SWP (and their ST* aliases,
 * Rt = zr), LDAPR. */
static int atomic(uint32_t x, struct rtl_a64_access *a)
{
	static const char *const names[8] = {
		"ldadd",
		"ldclr",
		"ldeor",
		"ldset",
		"ldsmax",
		"ldsmin",
		"ldumax",
		"ldumin",
	};
	unsigned o3 = bits(x, 15, 15), opc = bits(x, 14, 12);

	a->mem.size = (uint16_t)(1u << bits(x, 31, 30));
	loads(a, bits(x, 4, 0));
	if (o3 && opc == 4) {
		a->mem.access = RTL_ACC_READ;
		a->name = "ldapr";
		return 1;
	}
	if (o3 && opc != 0)
		return 0;
	a->mem.access = RTL_ACC_READ | RTL_ACC_WRITE;
	a->name = o3 ? "swp" : names[opc];
	return 1;
}

/* LDR/STR with a 9-bit offset (LDUR, LDTR, pre- and post-index), a
 * register offset, or the LSE atomics and LDRAA that share the space. */
static int register_forms(uint32_t x, struct rtl_a64_access *a)
{
	unsigned mode = bits(x, 11, 10);
	int64_t imm9 = rtl_a64_sext(bits(x, 20, 12), 9);

	a->mem.base = base_reg(bits(x, 9, 5));
	if (!bits(x, 21, 21)) {
		if (mode == 1) { /* post-index */
			a->wb_reg = a->mem.base;
			a->wb_imm = imm9;
		} else {
			a->mem.disp = imm9;
			if (mode == 3) { /* pre-index */
				a->wb_reg = a->mem.base;
				a->wb_imm = imm9;
			}
		}
		return plain_access(x, a);
	}
	if (mode == 2) { /* register offset */
		unsigned option = bits(x, 15, 13), rm = bits(x, 20, 16);
		int shift;

		plain_access(x, a);
		/* S: shifted by the access size (8 for a prefetch) */
		shift = bits(x, 12, 12) ? __builtin_ctz(a->mem.size ? a->mem.size : 8) : 0;
		a->mem.scale = (uint8_t)(1u << shift);
		if (rm != 31) /* the zero register adds nothing */
			a->mem.index = (int8_t)rm;
		if (option == 2)
			a->mem.ext = RTL_EXT_UXTW;
		else if (option == 6)
			a->mem.ext = RTL_EXT_SXTW;
		else if (option != 3 && option != 7)
			return 0;
		return 1;
	}
	if (mode == 0 && !bits(x, 26, 26))
		return atomic(x, a);
	if ((mode & 1) && bits(x, 31, 30) == 3 && !bits(x, 26, 26)) {
		/* LDRAA/LDRAB: a 10-bit offset scaled by 8, W for writeback */
		int64_t imm = rtl_a64_sext(bits(x, 22, 22) << 9 | bits(x, 20, 12), 10) * 8;
		a->mem.disp = imm;
		if (mode == 3) {
			a->wb_reg = a->mem.base;
			a->wb_imm = imm;
		}
		access_is(a, 1, 8);
		loads(a, bits(x, 4, 0));
		return 1;
	}
	return 0;
}

/* LDR/STR with a 12-bit unsigned offset scaled by the access size. */
static int unsigned_offset(uint32_t x, struct rtl_a64_access *a)
{
	a->mem.base = base_reg(bits(x, 9, 5));
	plain_access(x, a);
	a->mem.disp = (int64_t)bits(x, 21, 10) * (a->mem.size ? a->mem.size : 8);
	return 1;
}

/* LD1-LD4 / ST1-ST4, multiple structures: registers by opcode. */
static int simd_multiple(uint32_t x, struct rtl_a64_access *a)
{
	static const int8_t nregs[16] = { 4, -1, 4, -1, 3, -1, 3, 1,
		                          2, -1, 2, -1, -1, -1, -1, -1 };
	int n = nregs[bits(x, 15, 12)];
	unsigned bytes;

	if (n < 0)
		return 0;
	bytes = (unsigned)n * (bits(x, 30, 30) ? 16 : 8);
	a->mem.base = base_reg(bits(x, 9, 5));
	access_is(a, bits(x, 22, 22), bytes);
	if (bits(x, 23, 23)) { /* post-index: by the size, or by Rm */
		a->wb_reg = a->mem.base;
		if (bits(x, 20, 16) == 31)
			a->wb_imm = bytes;
		else
			a->wb_index = (int8_t)bits(x, 20, 16);
	}
	return 1;
}

/* LD1-LD4 / ST1-ST4 of one lane, and LD1R-LD4R. */
static int simd_single(uint32_t x, struct rtl_a64_access *a)
{
	unsigned opcode = bits(x, 15, 13), size = bits(x, 11, 10);
	unsigned selem = ((opcode & 1) << 1 | bits(x, 21, 21)) + 1, esize;

	switch (opcode >> 1) {
	case 0: esize = 1; break;
	case 1: esize = 2; break;
	case 2: esize = size & 1 ? 8 : 4; break;
	default:
		if (!bits(x, 22, 22))
			return 0;
		esize = 1u << size; /* replicate */
	}
	a->mem.base = base_reg(bits(x, 9, 5));
	access_is(a, bits(x, 22, 22), selem * esize);
	if (bits(x, 23, 23)) {
		a->wb_reg = a->mem.base;
		if (bits(x, 20, 16) == 31)
			a->wb_imm = selem * esize;
		else
			a->wb_index = (int8_t)bits(x, 20, 16);
	}
	return 1;
}

/* LDAPUR/STLUR (RCpc, 9-bit unscaled offset). */
static int rcpc_unscaled(uint32_t x, struct rtl_a64_access *a)
{
	unsigned opc = bits(x, 23, 22);

	a->mem.base = base_reg(bits(x, 9, 5));
	a->mem.disp = rtl_a64_sext(bits(x, 20, 12), 9);
	access_is(a, opc != 0, 1u << bits(x, 31, 30));
	if (opc != 0)
		loads(a, bits(x, 4, 0));
	a->name = opc ? "ldapur" : "stlur";
	return 1;
}

int rtl_a64_ldst(uint32_t x, uint64_t pc, struct rtl_a64_access *a)
{
	memset(a, 0, sizeof(*a));
	a->mem.base = RTL_REG_NONE;
	a->mem.index = RTL_REG_NONE;
	a->mem.scale = 1;
	a->wb_reg = -1;
	a->wb_index = -1;

	if ((x & 0xffffffe0) == 0xd50b7420) { /* DC ZVA, Xt */
		/* Zeroes the aligned block holding Xt: the address is not
		 * base + disp, so the size is left unknown (0). */
		a->mem.base = base_reg(bits(x, 4, 0));
		a->mem.access = RTL_ACC_WRITE;
		a->name = "dc zva";
		return 1;
	}
	if ((x & 0x3f000000) == 0x08000000)
		return exclusive(x, a);
	if ((x & 0x3b000000) == 0x18000000)
		return literal(x, pc, a);
	if ((x & 0x3a000000) == 0x28000000)
		return pair(x, a);
	if ((x & 0x3b000000) == 0x38000000)
		return register_forms(x, a);
	if ((x & 0x3b000000) == 0x39000000)
		return unsigned_offset(x, a);
	if ((x & 0xbfbf0000) == 0x0c000000 || (x & 0xbfa00000) == 0x0c800000)
		return simd_multiple(x, a);
	if ((x & 0xbf9f0000) == 0x0d000000 || (x & 0xbf800000) == 0x0d800000)
		return simd_single(x, a);
	if ((x & 0x3f200c00) == 0x19000000)
		return rcpc_unscaled(x, a);
	return 0;
}
