/* rtl-appel-li: the paper's Tables 4 and 5 on this machine. Runs trap, prot1
 * and protN for VM (page protection), RT-basic, RT-update and MultiView at
 * 64 B, 4 KiB, 64 KiB and 256 KiB objects, all interleaved in one run;
 * prints the tables and writes JSON (--json). */
#include <rtl/region.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/appel_li.h"
#include "bench/bench.h"

#define NOBJ 100 /* objects per sequence, as in the paper */
#define MAXFIG 64

static const size_t sizes[] = { 64, PAGE, 64 * 1024, 256 * 1024 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum {
	VM,
	RTB,
	RTU,
	MV,
	NMECH,
};
static const char *const mech_name[NMECH] = { "VM", "RT-basic", "RT-update",
	                                      "MultiView" };
static const char *const mech_key[NMECH] = { "vm", "rt_basic", "rt_update",
	                                     "multiview" };
enum {
	PROT1,
	PROTN,
	NSEQ,
};
static const char *const seq_name[NSEQ] = { "prot1", "protN" };

static struct figure figs[MAXFIG];
static int nfigs;

static void add(const char *name, bench_op begin, bench_op op, bench_op end,
                void *ctx, long unit)
{
	figs[nfigs++] = (struct figure){ .name = strdup(name),
		                         .op = op,
		                         .begin = begin,
		                         .end = end,
		                         .ctx = ctx,
		                         .unit = unit };
}

/* A derived figure: min and median, ns. */
struct cell {
	double min, med;
};

static struct cell cell_of(const char *name)
{
	struct figure *f = bench_find(figs, nfigs, name);
	return f ? (struct cell){ f->min, f->median } : (struct cell){ 0, 0 };
}

static struct cell trap_cell(int m)
{
	struct cell raw, prot;

	if (m == VM)
		return cell_of("vm.trap");
	if (m == MV)
		return cell_of("multiview.trap");
	raw = cell_of(m == RTB ? "rt_basic.trap_raw" : "rt_update.trap_raw");
	prot = cell_of(m == RTB ? "rt_basic.protect" : "rt_update.protect");
	return (struct cell){ raw.min - prot.min, raw.med - prot.med };
}

static struct cell seq_cell(int m, int s, size_t size)
{
	char name[64];
	snprintf(name, sizeof(name), "%s.%s.%zu", mech_key[m], seq_name[s],
	         size);
	return cell_of(name);
}

/* begin, op, end of each mechanism's prot1 and protN */
static const bench_op seq_ops[NMECH][NSEQ][3] = {
	[VM] = { { vm_prot1_begin, vm_prot1, segv_end },
	         { vm_protn_begin, vm_protn, segv_end } },
	[RTB] = { { rt_prot1_begin, rt_prot1, NULL },
	          { rt_protn_begin, rt_protn, NULL } },
	[RTU] = { { rt_prot1_begin, rt_prot1, NULL },
	          { rt_protn_begin, rt_protn, NULL } },
	[MV] = { { mv_prot1_begin, mv_prot1, segv_end },
	         { mv_protn_begin, mv_protn, segv_end } },
};

static void build(void)
{
	char name[64];

	add("vm.trap", vm_trap_begin, vm_trap, segv_end, vm_trap_new(), 1);
	add("rt_basic.trap_raw", NULL, rt_trap, NULL, rt_trap_new(0), 1);
	add("rt_basic.protect", NULL, rt_protect, NULL, rt_trap_new(0), 2);
	add("rt_update.trap_raw", NULL, rt_trap, NULL, rt_trap_new(1), 1);
	add("rt_update.protect", NULL, rt_protect, NULL, rt_trap_new(1), 2);
	add("multiview.trap", mv_trap_begin, mv_trap, segv_end, mv_trap_new(),
	    1);
	for (size_t z = 0; z < NSIZES; z++)
		for (int m = 0; m < NMECH; m++)
			for (int s = 0; s < NSEQ; s++) {
				const bench_op *f = seq_ops[m][s];
				void *ctx;
				if (m == VM && sizes[z] < PAGE)
					continue; /* a page is VM's smallest
						     object */
				ctx = m == VM   ? vm_seq_new(sizes[z], NOBJ)
				      : m == MV ? mv_seq_new(sizes[z], NOBJ)
				                : rt_seq_new(sizes[z], NOBJ,
				                             m == RTU);
				snprintf(name, sizeof(name), "%s.%s.%zu",
				         mech_key[m], seq_name[s], sizes[z]);
				add(name, f[0], f[1], f[2], ctx,
				    s == PROTN ? NOBJ : 1);
			}
}

/* ---- output ---- */

static double ratio(double a, double b)
{
	return a > 0 && b > 0 ? a / b : 0;
}

static json_t *cell_json(struct cell c, struct cell ref)
{
	return json_pack("{s:o, s:o, s:o, s:o}", "min_ns", bench_num(c.min),
	                 "median_ns", bench_num(c.med), "ratio_min",
	                 bench_num(ratio(c.min, ref.min)), "ratio_median",
	                 bench_num(ratio(c.med, ref.med)));
}

static const char *size_label(size_t size, char *buf, size_t len)
{
	if (size < 1024)
		snprintf(buf, len, "%zu B", size);
	else
		snprintf(buf, len, "%zu KiB", size / 1024);
	return buf;
}

static void print_table4(json_t *root, int rounds)
{
	json_t *t4 = json_object();
	struct cell vm[3] = { trap_cell(VM), seq_cell(VM, PROT1, PAGE),
		              seq_cell(VM, PROTN, PAGE) };

	printf("\nTable 4 - Appel-Li sequences on 1-page objects (100 of "
	       "them)\n"
	       "us per sequence: median (min) of every call over %d rounds; "
	       "ratio = median\nover the VM median of this run\n\n",
	       rounds);
	printf("%-12s %-17s %-17s %-17s\n", "", "trap", "prot1", "protN");
	for (int m = 0; m < NMECH; m++) {
		struct cell c[3] = { trap_cell(m), seq_cell(m, PROT1, PAGE),
			             seq_cell(m, PROTN, PAGE) };
		json_t *row = json_object();
		printf("%-12s", mech_name[m]);
		for (int k = 0; k < 3; k++) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%.2f (%.2f)",
			         c[k].med / 1e3, c[k].min / 1e3);
			printf(" %-17s", buf);
			json_object_set_new(row, k ? seq_name[k - 1] : "trap",
			                    cell_json(c[k], vm[k]));
		}
		printf("\n");
		if (m != VM) {
			printf("%-12s", "  ratio");
			for (int k = 0; k < 3; k++)
				printf(" %-17.2f", ratio(c[k].med, vm[k].med));
			printf("\n");
		}
		json_object_set_new(t4, mech_name[m], row);
	}
	printf("\nVM trap is the floor: a SIGSEGV whose handler only rewrites "
	       "a register.\nRT trap = (protect + trap) - protect; the "
	       "handler's unprotect (swizzle) is included.\n"
	       "Paper, Linux 2.0 on a 200 MHz Pentium Pro (us): VM 12 39 30; "
	       "RT-basic 23 32 28\n(ratios 1.9 0.8 0.9); RT-update 115 198 174 "
	       "(ratios 9.6 5.1 5.8).\n");
	json_object_set_new(root, "table4", t4);
}

/* One printed row of Table 5: size, K, VM, VM x K, then each RT and
 * MultiView figure with its ratio to VM, then RT-update over RT-basic. */
static void print_row5(int s, size_t size, struct cell vm, struct cell vmk)
{
	char buf[32];

	printf("%-8s ", size_label(size, buf, sizeof(buf)));
	if (size < PAGE)
		printf("%3s  %-10s %-10s", "-", "-", "-");
	else
		printf("%3ld  %-10.2f %-10.2f", touches(size), vm.med / 1e3,
		       vmk.med / 1e3);
	for (int m = 1; m < NMECH; m++) {
		struct cell c = seq_cell(m, s, size);
		snprintf(buf, sizeof(buf), "%.2f (%.2f)", c.med / 1e3,
		         ratio(c.med, vm.med));
		printf(" %-16s", buf);
	}
	printf(" %.3f\n",
	       ratio(seq_cell(RTU, s, size).med, seq_cell(RTB, s, size).med));
}

static void print_table5(json_t *root, int s)
{
	json_t *t5 = json_object(), *arr = json_array();
	struct cell one = seq_cell(VM, s, PAGE);

	printf("\nTable 5 - %s by object size; VM takes K page sequences per "
	       "object\nus per object, median (ratio to the VM median of this "
	       "run; at 64 B, to VM's 1 page)\n\n",
	       seq_name[s]);
	printf("%-8s %3s  %-10s %-10s", "size", "K", "VM", "VM x K");
	for (int m = 1; m < NMECH; m++)
		printf(" %-16s", mech_name[m]);
	printf(" %s\n", "update/basic");
	for (int m = 0; m < NMECH; m++)
		json_object_set_new(t5, mech_name[m], json_array());
	for (size_t z = 0; z < NSIZES; z++) {
		size_t size = sizes[z];
		long k = touches(size);
		struct cell vm = size < PAGE ? one : seq_cell(VM, s, size);
		struct cell vmk = { one.min * k, one.med * k };

		print_row5(s, size, vm, vmk);
		for (int m = 0; m < NMECH; m++) {
			json_t *e =
			        m == VM && size < PAGE
			                ? json_null()
			                : cell_json(seq_cell(m, s, size), vm);
			json_array_append_new(json_object_get(t5, mech_name[m]),
			                      e);
		}
		json_array_append_new(
		        arr, json_pack("{s:I, s:I, s:o}", "bytes",
		                       (json_int_t)size, "k", (json_int_t)k,
		                       "vm_times_k", cell_json(vmk, vm)));
	}
	json_object_set_new(t5, "sizes", arr);
	json_object_set_new(root, s == PROT1 ? "table5_prot1" : "table5_protN",
	                    t5);
	if (s == PROT1)
		printf("\nPaper, Linux/Pentium Pro, prot1 (us): 1 page VM 39, "
		       "RT-update 198 (5.1); 64 KiB VM x 16\n624, RT-update "
		       "464 "
		       "(0.7); 256 KiB VM x 64 2496, RT-update 2606 (1.0).\n");
}

/* Worst RT-update / RT-basic over every figure and size (min and median). */
static void update_over_basic(json_t *root)
{
	double worst = 0, worst_med = 0;
	struct cell b = trap_cell(RTB), u = trap_cell(RTU);

	worst = ratio(u.min, b.min);
	worst_med = ratio(u.med, b.med);
	for (size_t z = 0; z < NSIZES; z++)
		for (int s = 0; s < NSEQ; s++) {
			b = seq_cell(RTB, s, sizes[z]);
			u = seq_cell(RTU, s, sizes[z]);
			if (ratio(u.min, b.min) > worst)
				worst = ratio(u.min, b.min);
			if (ratio(u.med, b.med) > worst_med)
				worst_med = ratio(u.med, b.med);
		}
	printf("\nRT-update / RT-basic, worst over trap and every size of "
	       "prot1 "
	       "and protN: %.3f (minima: %.3f)\n",
	       worst_med, worst);
	json_object_set_new(root, "rt_update_over_basic_max",
	                    json_pack("{s:o, s:o}", "min", bench_num(worst),
	                              "median", bench_num(worst_med)));
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct region_stats st;
	json_t *root;
	int cpu, rc;

	if ((rc = bench_args(argc, argv, &o)) != 0)
		return rc < 0 ? 2 : 0;
	if (region_init() < 0) {
		perror("rtl");
		return 1;
	}
	cpu = bench_pin(o.cpu);
	build();
	nfigs = bench_run(figs, nfigs, &o);

	root = bench_results_json(figs, nfigs, &o, cpu);
	print_table4(root, o.rounds);
	print_table5(root, PROT1);
	print_table5(root, PROTN);
	update_over_basic(root);
	region_stats(&st);
	json_object_set_new(
	        root, "rtl_stats",
	        json_pack("{s:I, s:I, s:I, s:I, s:I}", "traps", (json_int_t)st.traps,
	                  "handler_calls", (json_int_t)st.handler_calls,
	                  "stale_traps", (json_int_t)st.stale_traps,
	                  "decode_misses", (json_int_t)st.decode_misses,
	                  "protects", (json_int_t)st.protects));
	if (st.stale_traps || st.foreign)
		fprintf(stderr,
		        "warning: %lu stale traps, %lu foreign faults\n",
		        (unsigned long)st.stale_traps,
		        (unsigned long)st.foreign);
	return bench_write_json(&o, root) < 0;
}
