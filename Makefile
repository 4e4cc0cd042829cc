# Thin wrapper over meson: installs what is missing, configures, builds.
BUILD ?= build
MESON_FLAGS ?=

.PHONY: all deps build test demo bench clean bench-dsm format format-check

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja:
	@scripts/deps.sh build
	meson setup $(BUILD) $(MESON_FLAGS)

# The DSM is built when meson finds MPI: a build configured before the
# targets that need it installed MPI is configured again.
dsm_configured = [ ! -f $(BUILD)/build.ninja ] || grep -q dsm-sor $(BUILD)/build.ninja || \
	meson setup --reconfigure $(BUILD) >/dev/null

# Each target installs what it needs (scripts/deps.sh GROUP...); make deps
# installs everything.
build: $(BUILD)/build.ninja
	@scripts/deps.sh build
	@ninja -C $(BUILD)

# The machine first, so that a failure in CI names it; then the build and
# the formatting (a file that differs stops the run with its name: make
# format fixes it).
test:
	@scripts/deps.sh build format test mpi deb
	@$(dsm_configured)
	@scripts/machine.sh
	@$(MAKE) --no-print-directory build format-check
	@RTL_MACHINE_SHOWN=1 tests/run.sh $(BUILD)

# aarch64: cross-built with Debian's cross compiler and arm64 libraries into
# build-aarch64, tested under qemu-user (docs/aarch64.md).
BUILD_AARCH64 ?= build-aarch64
.PHONY: test-aarch64
test-aarch64:
	@scripts/test-aarch64.sh $(BUILD_AARCH64) $(MESON_FLAGS)

# Twenty real programs under every kind of policy, compared byte for byte
# with their runs without rtl (tests/programs/, docs/programs.md).
.PHONY: test-programs
test-programs: build
	@scripts/test-programs.sh $(BUILD)

# Install under PREFIX without calling meson yourself (DESTDIR stages it):
# the installed tree runs wherever it is (docs/install.md).
PREFIX ?= /usr/local
.PHONY: install
install: build
	@scripts/install.sh $(BUILD) $(PREFIX)

# Debian packages (librtl0, librtl-dev, rtl-tools) in build-deb/, checked
# by lintian (docs/install.md).
.PHONY: deb
deb:
	@scripts/deps.sh build deb
	@scripts/deb.sh build-deb

format:
	@scripts/deps.sh format
	@scripts/format.sh fix

format-check:
	@scripts/deps.sh format
	@scripts/format.sh check

demo: build
	@examples/demo.sh $(BUILD)

# The benchmark suite (bench/README.md); needs gnuplot for its plots, which
# make test does not.
bench: build
	@RTL_EXTRA_PACKAGES="$$(cat bench/deps.txt)" scripts/deps.sh build
	@bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)

FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

SOAK_SECONDS ?= 600
.PHONY: soak
soak: build
	$(BUILD)/tests/progs/soak -t 8 -s $(SOAK_SECONDS) -S $$(date +%s)

.PHONY: check-sanitize
check-sanitize:
	@scripts/check-sanitize.sh

# The DSM case study (docs/dsm-results.md): the paper's Tables 7 and 8 for this
# machine (1 and 4 ranks; pages, regions, annotated regions; RT overhead),
# miss latency, barriers, garbage collection; JSON and PNG in bench/out/.
bench-dsm:
	@RTL_EXTRA_PACKAGES="gnuplot-nox" scripts/deps.sh build mpi
	@$(dsm_configured)
	@$(MAKE) --no-print-directory build
	@python3 bench/dsm/run.py $(BUILD)
