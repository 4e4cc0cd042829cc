/* Incremental checkpointing of many small objects with DIRTY and diffs.
 *
 *   checkpoint run LOG IMAGE      work for some epochs; after each, append
 *                                 the diffs of the objects written to LOG;
 *                                 at the end dump all objects to IMAGE
 *   checkpoint restore LOG IMAGE  in a fresh process: rebuild the objects
 *                                 from LOG alone and compare with IMAGE
 *   checkpoint                    both, in a temporary directory
 *
 * Each object is a region with tracking on. Where the kernel has written
 * bits (docs/dirty.md, "Two ways to see a write") its writes take no trap
 * and region_dirty asks the kernel which pages were written; elsewhere, or
 * with RTL_DIRTY=traps, it is read-only until its first write after a
 * checkpoint, which traps once (no handler needed: rtl grants it and takes
 * the twin). Either way, at the end of an epoch region_dirty lists the
 * objects written and region_diff_encode gives just their changed bytes:
 * the log is the same byte for byte.
 * For comparison the run also counts what a page-granular checkpoint (4 KiB
 * pages, objects packed as malloc would) and a whole-object checkpoint would
 * have written. LOG holds, in this host's byte order:
 *   "CKPT", u32 objects, u32 size[objects];
 *   per epoch: u32 epoch, u32 records, then per record u32 id, u32 length,
 *   and that many bytes of encoded diff (the portable format). */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rtl/region.h>

#define OBJECTS 4000
#define EPOCHS 8
#define WRITES_PER_EPOCH 150
#define PAGE 4096

struct object { /* the objects' layout: a header, then payload */
	uint32_t id;
	uint32_t version;
	unsigned char payload[];
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t traps(void)
{
	struct region_stats s;

	return region_stats(&s) == 0 ? s.traps : 0;
}

static void put32(FILE *f, uint32_t v) { fwrite(&v, sizeof(v), 1, f); }
static int get32(FILE *f, uint32_t *v) { return fread(v, sizeof(*v), 1, f) == 1 ? 0 : -1; }

static int run(const char *log_path, const char *image_path)
{
	static struct object *obj[OBJECTS];
	static uint32_t size[OBJECTS];
	static size_t heap_at[OBJECTS]; /* where malloc would have put it */
	static void *dirty[OBJECTS];
	static unsigned char buf[1 << 16];
	static rtl_run_t runs[1 << 12];
	static uint8_t page_dirty[OBJECTS * 512 / PAGE + 1];
	size_t heap = 0, total_diff = 0, total_pages = 0, total_whole = 0;
	FILE *log = fopen(log_path, "wb"), *image = fopen(image_path, "wb");
	const char *why;
	int way = region_dirty_backend(&why);
	uint64_t traps0;
	double ckpt = 0;

	if (!log || !image)
		return 1;
	printf("writes seen by %s: %s\n",
	       way == RTL_DIRTY_WRITTEN_BITS ? "written bits" : "traps", why);
	fwrite("CKPT", 4, 1, log);
	put32(log, OBJECTS);
	for (uint32_t i = 0; i < OBJECTS; i++) {
		size[i] = 16 + rnd() % 240; /* 16 to 255 bytes */
		heap_at[i] = heap;
		heap += (size[i] + 15) & ~15u;
		put32(log, size[i]);
		obj[i] = region_alloc(size[i], &obj[i]);
		if (!obj[i] || region_track(obj[i], 1) < 0)
			return 1;
	}
	printf("%d objects of 16-255 bytes (%zu bytes), %d epochs\n", OBJECTS,
	       heap, EPOCHS);
	traps0 = traps();

	for (uint32_t epoch = 0; epoch <= EPOCHS; epoch++) {
		size_t n, bytes = 0, pages = 0, whole = 0;

		/* The work: epoch 0 fills every object, later epochs update a
		 * few fields of a few objects. */
		for (uint32_t i = 0; i < OBJECTS && epoch == 0; i++) {
			obj[i]->id = i;
			for (uint32_t k = 0; k < size[i] - 8; k++)
				obj[i]->payload[k] = (unsigned char)rnd();
		}
		for (int w = 0; w < WRITES_PER_EPOCH && epoch > 0; w++) {
			uint32_t i = rnd() % OBJECTS, k = rnd() % (size[i] - 8);
			obj[i]->version = epoch;
			obj[i]->payload[k] = (unsigned char)rnd();
		}

		/* The checkpoint: the objects written, and what changed. */
		double t0 = now();
		n = region_dirty(dirty, OBJECTS, 1);
		put32(log, epoch);
		put32(log, (uint32_t)n);
		memset(page_dirty, 0, sizeof(page_dirty));
		for (size_t d = 0; d < n; d++) {
			struct object *o = dirty[d];
			uint32_t id = o->id;
			ssize_t len = region_diff_encode(o, buf, sizeof(buf));
			ssize_t nruns = region_diff(o, runs, 1 << 12);

			if (len < 0 || nruns < 0)
				return 1;
			put32(log, id);
			put32(log, (uint32_t)len);
			fwrite(buf, 1, (size_t)len, log);
			bytes += 8 + (size_t)len;
			whole += size[id];
			for (ssize_t r = 0; r < nruns; r++) {
				size_t first = heap_at[id] + runs[r].offset;
				size_t last = first + runs[r].len - 1;
				for (size_t p = first / PAGE; p <= last / PAGE; p++)
					page_dirty[p] = 1;
			}
			region_checkpoint(o); /* the next epoch */
		}
		if (epoch > 0)
			ckpt += now() - t0;
		for (size_t p = 0; p < sizeof(page_dirty); p++)
			pages += page_dirty[p];
		printf("epoch %u: %4zu objects written, diffs %6zu bytes, "
		       "whole objects %6zu, pages %7zu\n",
		       epoch, n, bytes, whole, pages * PAGE);
		if (epoch > 0) { /* epoch 0 writes everything, whatever the scheme */
			total_diff += bytes;
			total_whole += whole;
			total_pages += pages * PAGE;
		}
	}
	for (uint32_t i = 0; i < OBJECTS; i++)
		fwrite(obj[i], 1, size[i], image);
	if (fclose(log) || fclose(image))
		return 1;
	printf("epochs 1-%d: diffs %zu bytes; whole objects %zu (%.1fx); "
	       "4 KiB pages %zu (%.1fx)\n",
	       EPOCHS, total_diff, total_whole,
	       (double)total_whole / (double)total_diff, total_pages,
	       (double)total_pages / (double)total_diff);
	printf("traps taken: %llu; checkpoints of epochs 1-%d: %.2f ms\n",
	       (unsigned long long)(traps() - traps0), EPOCHS, ckpt * 1e3);
	return 0;
}

static int restore(const char *log_path, const char *image_path)
{
	static unsigned char *obj[OBJECTS];
	static uint32_t size[OBJECTS];
	static unsigned char buf[1 << 16];
	FILE *log = fopen(log_path, "rb"), *image = fopen(image_path, "rb");
	uint32_t n, epoch, records, epochs = 0, applied = 0;
	char magic[4];

	if (!log || !image || fread(magic, 4, 1, log) != 1 ||
	    memcmp(magic, "CKPT", 4) || get32(log, &n) || n > OBJECTS)
		return 1;
	for (uint32_t i = 0; i < n; i++) /* fresh, zero-filled, untracked */
		if (get32(log, &size[i]) || !(obj[i] = region_alloc(size[i], &obj[i])))
			return 1;
	while (get32(log, &epoch) == 0 && get32(log, &records) == 0) {
		for (uint32_t r = 0; r < records; r++) {
			uint32_t id, len;
			if (get32(log, &id) || get32(log, &len) || id >= n ||
			    len > sizeof(buf) || fread(buf, 1, len, log) != len)
				return 1;
			/* The diff is checked whole before it is applied. */
			if (region_diff_apply(obj[id], buf, len) < 0) {
				printf("epoch %u object %u: %s\n", epoch, id,
				       strerror(errno));
				return 1;
			}
			applied++;
		}
		epochs++;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (fread(buf, 1, size[i], image) != size[i] ||
		    memcmp(buf, obj[i], size[i]) != 0) {
			printf("restore: object %u differs from the image\n", i);
			return 1;
		}
	}
	printf("restored %u objects from %u epochs (%u diffs) in process %d: "
	       "identical to the image\n",
	       n, epochs, applied, (int)getpid());
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/rtl-checkpoint-XXXXXX", log[64], image[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "run") == 0)
		return run(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "restore") == 0)
		return restore(argv[2], argv[3]);
	if (argc != 1 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: %s [run|restore LOG IMAGE]\n", argv[0]);
		return 2;
	}
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(image, sizeof(image), "%s/image", dir);
	printf("run in process %d\n", (int)getpid());
	if (run(log, image) != 0)
		return 1;
	/* A fresh process: this program again, in restore mode. */
	pid_t pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "restore", log, image, (char *)NULL);
		_exit(127);
	}
	int status = 1;
	waitpid(pid, &status, 0);
	unlink(log);
	unlink(image);
	rmdir(dir);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
