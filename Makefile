# lancelsm: PGXS build.  `make && make install`, then `make installcheck`
# against a running cluster; the suite starts and stops its own emulator
# (docs/development.md, "Layout").
EXTENSION = lancelsm
MODULE_big = lancelsm
OBJS = \
	src/lancelsm.o \
	src/functions/entry.o \
	src/functions/maintenance.o \
	src/record/shmem.o \
	src/settings.o \
	src/deadline.o \
	src/wire_text.o \
	src/functions/option.o \
	src/functions/option_check.o \
	src/functions/mapping.o \
	src/net/http.o \
	src/net/url.o \
	src/net/pool.o \
	src/net/socket.o \
	src/net/endpoint.o \
	src/net/lookup.o \
	src/protocol/fault.o \
	src/protocol/fresh.o \
	src/protocol/redact.o \
	src/task/task.o \
	src/task/driver.o \
	src/task/retry.o \
	src/task/step_flush.o \
	src/task/step_compact.o \
	src/task/step_stats.o \
	src/task/step_checkpoint.o \
	src/task/step_spec.o \
	src/task/watermark.o \
	src/task/pace.o \
	src/task/window.o \
	src/task/window_kept.o \
	src/task/herd.o \
	src/record/progress.o \
	src/record/shared_key.o \
	src/record/shared_array.o \
	src/record/run.o \
	src/record/counters.o \
	src/record/forget.o \
	src/functions/stats.o \
	src/functions/shape.o \
	src/functions/declared.o \
	src/functions/server_events.o \
	src/functions/monitoring.o \
	src/functions/write_spec.o \
	src/functions/connections.o \
	src/net/token.o \
	src/functions/due.o \
	src/functions/threshold.o \
	src/functions/plan.o \
	src/functions/outcome.o \
	src/functions/recording.o \
	src/functions/outcome_writer.o \
	src/record/outcome_queue.o \
	src/record/outcome_launcher.o \
	src/protocol/lsm_stats_json.o \
	src/protocol/lsm_json.o

EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)
# the release X.Y.Z: META.json's first "version" (scripts/check-version.sh
# keeps it in step with the control file's X.Y)
EXTRELEASE := $(shell sed -n 's/^ *"version": *"\([0-9.]*\)",*$$/\1/p' META.json | head -1)
DATA = $(wildcard sql/$(EXTENSION)--*.sql)

# sql/ holds two kinds of script: the install scripts, always named
# lancelsm--VERSION.sql or lancelsm--FROM--TO.sql (DATA above), and the
# pg_regress scripts, named as below, each with its expected/NAME.out.
# (pg_regress's --inputdir would move both sql/ and expected/ of the suite
# together; PostgreSQL 15 has no separate --expecteddir.)  setup starts
# the emulator unless LANCELSM_EMULATOR_PORT names one; teardown, last,
# stops it.
REGRESS = setup options functions faults checkpoint permissions declared due due_plan progress scale write_spec client_options connections comments teardown
REGRESS_OPTS = --dbname=contrib_regression
TAP_TESTS = 1

PG_CPPFLAGS = -I$(srcdir)/src -DLANCELSM_VERSION='"$(EXTVERSION)"' \
	-DLANCELSM_RELEASE='"$(EXTRELEASE)"' \
	$(shell curl-config --cflags) $(shell pkg-config --cflags jansson)
SHLIB_LINK = $(shell curl-config --libs) $(shell pkg-config --libs jansson) -pthread
EXTRA_CLEAN = results regression.diffs regression.out tmp_check

# no LLVM bitcode: nothing here benefits from JIT inlining, and it needs clang
override with_llvm = no
# rebuild objects when a header they include changes
override autodepend = yes

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# TAP: the pg_cron tests wait for minute boundaries (pg_cron before 1.5
# schedules by the minute), idle for minutes: they run beside the other
# files, which run one at a time as ever.  LANCELSM_PROVE_RULES= runs
# every file one at a time.
LANCELSM_PROVE_RULES ?= -j3 --rules=par=t/cron_jobs.pl --rules=par=t/cron_strict.pl \
	--rules=par=t/cron_due.pl '--rules=seq=**'
PG_PROVE_FLAGS += $(LANCELSM_PROVE_RULES)

# The whole pg_regress + TAP suite against an ASan + UBSan build;
# as root, see scripts/sanitize.sh.  scripts/test.sh runs it in CI.
.PHONY: sanitize-check
sanitize-check:
	bash $(srcdir)/scripts/sanitize.sh
