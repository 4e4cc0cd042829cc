/* Every general-purpose memory access form of x86-64, run against a trapping
 * region and against ordinary memory (forms.h): addressing (base, index,
 * scale, disp8/32, no base, r12/r13 quirks, biased pointers, base plus a
 * difference of pointers), implicit operands (string instructions, rep),
 * read-modify-write, atomics, push/pop/call through memory, bt and setcc.
 * SIMD and x87 forms are in decoder_forms_simd.c. */
#include "tests/unit/forms.h"

/* ---- addressing ---- */

LOAD(l_base, AT "mov (%[p]), %[v]", 0)
LOAD(l_disp8, AT "mov 8(%[p]), %[v]", 0)
LOAD(l_disp8_neg, AT "mov -8(%[p]), %[v]", 0)
LOAD(l_disp32, AT "mov 0x200(%[p]), %[v]", 0)
LOAD(l_index1, AT "mov (%[p],%[i],1), %[v]", 24)
LOAD(l_index2_disp, AT "movzwl 6(%[p],%[i],2), %k[v]", 5)
LOAD(l_index4_neg, AT "movslq 4(%[p],%[i],4), %[v]", -9)
LOAD(l_index8_disp32, AT "mov 0x100(%[p],%[i],8), %[v]", 3)
LOAD(l_byte_sx, AT "movsbq 1(%[p],%[i]), %[v]", 7)
LOAD(l_32bit_dest, AT "mov 12(%[p]), %k[v]", 0)
LOAD(l_16bit_dest, AT "mov 12(%[p]), %w[v]", 0)
LOAD(l_8bit_dest, AT "mov 12(%[p]), %b[v]", 0)
/* The pointer as the index, the index as the base. */
LOAD(l_swapped, AT "mov 8(%[i],%[p],1), %[v]", 16)
/* No base: index * 4 + disp, the index holding p / 4 (moved by a quarter
 * of the view distance). */
static void l_no_base(char *p, char *q, struct res *r)
{
	uint64_t v, i = (uint64_t)p / 4;
	(void)q;
	__asm__ volatile(AT "mov 0(,%[i],4), %[v]" ENDPC
	                 : [v] "=r"(v), [pc] "=&r"(r->pc), [i] "+r"(i)
	                 :
	                 : "memory");
	r->v[0] = v;
	r->v[1] = unview(i * 4) - unview((uint64_t)p);
}
/* A biased pointer: p - 136 lies before the region, disp adds it back. */
LOAD(l_biased, "lea -136(%[p]), %[i]\n" AT "mov 136(%[i]), %[v]\n lea 136(%[i]), %[p]\n xor %k[i], %k[i]", 0)

/* The pointer in r12 (needs a SIB byte) and r13 (needs a disp8). */
static void l_r12_r13(char *p, char *q, struct res *r)
{
	register char *a __asm__("r12") = p;
	register char *b __asm__("r13") = p;
	uint64_t v, w;
	(void)q;
	__asm__ volatile(AT "mov (%[a]), %[v]\n mov (%[b]), %[w]" ENDPC
	                 : [v] "=r"(v), [w] "=r"(w), [pc] "=&r"(r->pc), [a] "+r"(a),
	                   [b] "+r"(b)
	                 :
	                 : "memory");
	r->v[0] = v;
	r->v[1] = w;
	r->v[2] = unview((uint64_t)a) - unview((uint64_t)b);
}

/* Base + difference: q plus (p - q) reaches p; q is used alone after, so
 * rtl can tell it is the pointer and moves the difference. */
static void l_difference(char *p, char *q, struct res *r)
{
	uint64_t v, w;
	long d = p - q;
	__asm__ volatile(AT "mov (%[q],%[d],1), %[v]\n mov (%[q]), %[w]\n"
	                    "mov 8(%[q],%[d],1), %[w]" ENDPC
	                 : [v] "=&r"(v), [w] "=&r"(w), [pc] "=&r"(r->pc), [d] "+r"(d)
	                 : [q] "r"(q)
	                 : "memory");
	r->v[0] = v;
	r->v[1] = w;
	r->v[2] = unview((uint64_t)q + (uint64_t)d) - unview((uint64_t)p);
}

/* ---- reads by other instructions ---- */

LOAD(l_add, AT "add 16(%[p]), %[v]", 0)
LOAD(l_cmp_imm, "xor %k[v], %k[v]\n" AT "cmpq $5, 8(%[p])\n setb %b[v]", 0)
LOAD(l_test, "xor %k[v], %k[v]\n" AT "testb $4, 3(%[p],%[i])\n setz %b[v]", 2)
LOAD(l_bt_imm, "xor %k[v], %k[v]\n" AT "btq $13, (%[p])\n setc %b[v]", 0)
/* bt with a register offset reaches past its operand: bit 100 is byte 12. */
LOAD(l_bt_reg, "xor %k[v], %k[v]\n" AT "btq %[i], (%[p])\n setc %b[v]", 100)
LOAD(l_cmov, "cmp %[p], %[p]\n" AT "cmovne 8(%[p]), %[v]", 0)
LOAD(l_movbe, AT "movbe 8(%[p]), %[v]", 0)
LOAD(l_crc32, AT "crc32q 8(%[p]), %[v]", 0)
LOAD(l_popcnt, AT "popcnt 8(%[p]), %[v]", 0)
LOAD(l_imul, AT "imul 8(%[p]), %[v]", 0)
LOAD(l_push_pop, PUSHES(AT "pushq 24(%[p])\n popq %[v]"), 0)
LOAD(l_xlat, "mov %[p], %%rbx\n mov $37, %%eax\n" AT "xlatb\n"
             "movzbl %%al, %k[v]\n mov %%rbx, %[p]",
     0)
LOAD(l_clflush, AT "clflush 64(%[p])\n mov 64(%[p]), %[v]", 0)

/* call through a function pointer kept in the region (fill() put it at
 * p + 32). */
static void l_call_mem(char *p, char *q, struct res *r)
{
	uint64_t v;
	(void)q;
	__asm__ volatile(PUSHES(AT "call *32(%[p])") ENDPC
	                 : "=a"(v), [pc] "=&r"(r->pc), [p] "+b"(p)
	                 :
	                 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
	                   "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
	                   "xmm5", "xmm6", "xmm7");
	r->v[0] = v;
}

/* ---- string instructions: implicit rsi, rdi, counted by rcx ---- */

#define STRING(name, insn, cnt, src_is_p)                              \
	static void name(char *p, char *q, struct res *r)              \
	{                                                              \
		char *s = src_is_p ? p : q;                            \
		char *d = src_is_p == 2 ? p + 64 : src_is_p ? q        \
		                                            : p;       \
		uint64_t c = (cnt), a = 0x4142434445464748ull;         \
		uint64_t s0 = (uint64_t)s, d0 = (uint64_t)d;           \
		__asm__ volatile("cld\n" insn ENDPC                    \
		                 : "+S"(s), "+D"(d), "+c"(c), "+a"(a), \
		                   [pc] "=&r"(r->pc)                   \
		                 :                                     \
		                 : "memory", "cc");                    \
		r->v[0] = unview((uint64_t)s) - unview(s0);            \
		r->v[1] = unview((uint64_t)d) - unview(d0);            \
		r->v[2] = c;                                           \
		r->v[3] = a;                                           \
	}

STRING(s_movsb_from, AT "movsb", 0, 1)
STRING(s_rep_movsb_from, AT "rep movsb", 200, 1)
STRING(s_rep_movsq_from, AT "rep movsq", 20, 1)
STRING(s_lodsq, AT "lodsq", 0, 1)
STRING(s_rep_lodsb, AT "rep lodsb", 9, 1)
STRING(s_repne_scasb, "mov $0xa0, %%al\n" AT "repne scasb", 256, 0)
STRING(s_repe_cmpsb, AT "repe cmpsb", 100, 1)
STRING(s_cmpsq_same, AT "cmpsq", 0, 2)
STRING(s_stosb_to, AT "stosb", 0, 0)
STRING(s_rep_stosq_to, AT "rep stosq", 30, 0)
STRING(s_rep_movsb_to, AT "rep movsb", 250, 0)
STRING(s_rep_movsl_to, AT "rep movsl", 50, 0)

/* ---- writes and read-modify-writes ---- */

STORE(w_mov, AT "mov %[s], (%[p])", 0)
STORE(w_mov_index_disp, AT "mov %[s], -16(%[p],%[i],8)", 4)
STORE(w_mov_imm8, AT "movb $0x7f, 5(%[p],%[i])", 3)
STORE(w_mov_imm32, AT "movl $0x12345678, 0x100(%[p])", 0)
STORE(w_mov_16, AT "mov %w[s], 2(%[p])", 0)
STORE(w_add, AT "add %[s], 8(%[p])", 0)
STORE(w_or_imm, AT "orl $0x80000001, 8(%[p])", 0)
STORE(w_xor, AT "xor %k[s], 12(%[p],%[i],4)", 1)
STORE(w_and, AT "andq $-16, (%[p])", 0)
STORE(w_sub_byte, AT "subb $3, 7(%[p])", 0)
STORE(w_inc, AT "incq 8(%[p])", 0)
STORE(w_dec_word, AT "decw 8(%[p])", 0)
STORE(w_neg, AT "negq 16(%[p])", 0)
STORE(w_not, AT "notl 16(%[p])", 0)
STORE(w_shl, AT "shlq $3, 8(%[p])", 0)
STORE(w_sar_cl, "mov $5, %%ecx\n" AT "sarq %%cl, 8(%[p])", 0)
STORE(w_rol, AT "rolq $7, 8(%[p])", 0)
STORE(w_adc, "stc\n" AT "adcq $1, 8(%[p])", 0)
STORE(w_shld, AT "shldq $4, %[s], 8(%[p])", 0)
STORE(w_xchg, AT "xchg %[s], 8(%[p])", 0)
STORE(w_lock_add, AT "lock addq $9, 8(%[p])", 0)
STORE(w_lock_xadd, AT "lock xadd %[s], 8(%[p])", 0)
STORE(w_lock_cmpxchg_miss, "xor %%eax, %%eax\n" AT "lock cmpxchg %[s], 8(%[p])\n mov %%rax, %[s]", 0)
STORE(w_bts_imm, AT "btsq $33, 8(%[p])", 0)
STORE(w_lock_btr_reg, AT "lock btrq %[i], (%[p])", 70)
STORE(w_btc, AT "btcw $3, 8(%[p])", 0)
STORE(w_setcc, "cmp %[s], %[s]\n" AT "sete 9(%[p],%[i])", 1)
STORE(w_pop_mem, PUSHES("push %[s]\n" AT "popq 24(%[p])"), 0)
STORE(w_movbe, AT "movbe %[s], 8(%[p])", 0)
STORE(w_movnti, AT "movnti %[s], 8(%[p])", 0)

/* cmpxchg16b compares rdx:rax with 16 aligned bytes; on a mismatch it
 * loads them (and still writes: a locked access). */
static void w_cmpxchg16b(char *p, char *q, struct res *r)
{
	uint64_t lo = 0, hi = 0;
	(void)q;
	__asm__ volatile(AT "lock cmpxchg16b (%[p])" ENDPC
	                 : "+a"(lo), "+d"(hi), [pc] "=&r"(r->pc), [p] "+D"(p)
	                 : "b"(0x1111ull), "c"(0x2222ull)
	                 : "memory", "cc");
	r->v[0] = lo;
	r->v[1] = hi;
}

static const struct form gpr_forms[] = {
	{ "mov r, [b]", l_base, F_READ },
	{ "mov r, [b+d8]", l_disp8, F_READ },
	{ "mov r, [b-d8]", l_disp8_neg, F_READ },
	{ "mov r, [b+d32]", l_disp32, F_READ },
	{ "mov r, [b+i]", l_index1, F_READ },
	{ "movzx r, word [b+i*2+d]", l_index2_disp, F_READ },
	{ "movsxd r, [b+i*4+d] (negative i)", l_index4_neg, F_READ },
	{ "mov r, [b+i*8+d32]", l_index8_disp32, F_READ },
	{ "movsx r, byte [b+i+d]", l_byte_sx, F_READ },
	{ "mov r32, [b+d]", l_32bit_dest, F_READ },
	{ "mov r16, [b+d]", l_16bit_dest, F_READ },
	{ "mov r8, [b+d]", l_8bit_dest, F_READ },
	{ "mov r, [i+p*1+d] (pointer in the index)", l_swapped, F_READ },
	{ "mov r, [i*4] (no base)", l_no_base, F_READ },
	{ "mov r, [b+136] (b before the region)", l_biased, F_READ },
	{ "mov r, [r12]; mov r, [r13]", l_r12_r13, F_READ },
	{ "mov r, [q+(p-q)] (difference)", l_difference, F_READ },
	{ "add r, [m]", l_add, F_READ },
	{ "cmp [m], imm", l_cmp_imm, F_READ },
	{ "test [m+i], imm", l_test, F_READ },
	{ "bt [m], imm", l_bt_imm, F_READ },
	{ "bt [m], reg (bit 100)", l_bt_reg, F_READ },
	{ "cmovne r, [m] (not taken)", l_cmov, F_READ },
	{ "movbe r, [m]", l_movbe, F_READ },
	{ "crc32 r, [m]", l_crc32, F_READ },
	{ "popcnt r, [m]", l_popcnt, F_READ },
	{ "imul r, [m]", l_imul, F_READ },
	{ "push [m]", l_push_pop, F_READ },
	{ "xlatb", l_xlat, F_READ },
	{ "clflush [m]", l_clflush, F_READ },
	{ "call [m]", l_call_mem, F_READ },
	{ "movsb from", s_movsb_from, F_READ },
	{ "rep movsb from", s_rep_movsb_from, F_READ },
	{ "rep movsq from", s_rep_movsq_from, F_READ },
	{ "lodsq", s_lodsq, F_READ },
	{ "rep lodsb", s_rep_lodsb, F_READ },
	{ "repne scasb", s_repne_scasb, F_READ },
	{ "repe cmpsb (region and q)", s_repe_cmpsb, F_READ },
	{ "cmpsq (both in the region)", s_cmpsq_same, F_READ },
	{ "stosb", s_stosb_to, F_WRITE },
	{ "rep stosq", s_rep_stosq_to, F_WRITE },
	{ "rep movsb to", s_rep_movsb_to, F_WRITE },
	{ "rep movsl to", s_rep_movsl_to, F_WRITE },
	{ "mov [b], r", w_mov, F_WRITE },
	{ "mov [b+i*8-16], r", w_mov_index_disp, F_WRITE },
	{ "mov byte [b+i+5], imm8", w_mov_imm8, F_WRITE },
	{ "mov dword [b+d32], imm32", w_mov_imm32, F_WRITE },
	{ "mov [m], r16", w_mov_16, F_WRITE },
	{ "add [m], r", w_add, F_WRITE },
	{ "or [m], imm32", w_or_imm, F_WRITE },
	{ "xor [b+i*4+d], r32", w_xor, F_WRITE },
	{ "and [m], imm8", w_and, F_WRITE },
	{ "sub byte [m], imm", w_sub_byte, F_WRITE },
	{ "inc [m]", w_inc, F_WRITE },
	{ "dec word [m]", w_dec_word, F_WRITE },
	{ "neg [m]", w_neg, F_WRITE },
	{ "not [m]", w_not, F_WRITE },
	{ "shl [m], imm", w_shl, F_WRITE },
	{ "sar [m], cl", w_sar_cl, F_WRITE },
	{ "rol [m], imm", w_rol, F_WRITE },
	{ "adc [m], imm", w_adc, F_WRITE },
	{ "shld [m], r, imm", w_shld, F_WRITE },
	{ "xchg [m], r", w_xchg, F_WRITE },
	{ "lock add [m], imm", w_lock_add, F_WRITE },
	{ "lock xadd [m], r", w_lock_xadd, F_WRITE },
	{ "lock cmpxchg [m], r (not equal)", w_lock_cmpxchg_miss, F_WRITE },
	{ "lock cmpxchg16b [m]", w_cmpxchg16b, F_WRITE },
	{ "bts [m], imm", w_bts_imm, F_WRITE },
	{ "lock btr [m], reg (bit 70)", w_lock_btr_reg, F_WRITE },
	{ "btc word [m], imm", w_btc, F_WRITE },
	{ "sete [b+i+9]", w_setcc, F_WRITE },
	{ "pop [m]", w_pop_mem, F_WRITE },
	{ "movbe [m], r", w_movbe, F_WRITE },
	{ "movnti [m], r", w_movnti, F_WRITE },
};

TEST(general_purpose_forms)
{
	run_forms(gpr_forms, sizeof(gpr_forms) / sizeof(gpr_forms[0]));
}
