# Sluice build. `make` builds the daemons and the CLI into build/bin;
# `make SAN=1` builds the same into build-san/ with AddressSanitizer and
# UndefinedBehaviorSanitizer. `make run` and `make test` are the README's
# two commands.

CC ?= cc
SAN ?= 0
ifeq ($(SAN),1)
B := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1 -g
else
B := build
SANFLAGS :=
OPT := -O2 -g
endif

PKGS := libevent libevent_pthreads libprotobuf-c rocksdb rdkafka libmicrohttpd jansson libcrypto libssl libevent_openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Wshadow -Wno-unused-parameter \
          -pthread -MMD -MP -I. -Icommon -Ioperators -I$(B)/gen $(PKG_CFLAGS) $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := -pthread -rdynamic $(SANFLAGS)
# the ZooKeeper C client (multi-threaded) has no pkg-config file
LIBS := $(PKG_LIBS) -lzookeeper_mt -lm -ldl

PROTOS := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(B)/gen/%.pb-c.c,$(PROTOS))
PROTO_H := $(PROTO_C:.c=.h)

# The SQL grammar: lemon generates the parser at build time, like protoc-c.
LEMON ?= lemon
LEMPAR ?= /usr/share/lemon/lempar.c
SQL_GEN_C := $(B)/gen/grammar.c
SQL_GEN_H := $(B)/gen/grammar.h

COMMON_SRC := $(wildcard common/*.c)
OPS_SRC := $(wildcard operators/*.c)
TM_SRC := $(filter-out taskmanager/main.c,$(wildcard taskmanager/*.c))
JM_SRC := $(filter-out jobmanager/main.c,$(wildcard jobmanager/*.c))
CLI_SRC := $(filter-out cli/main.c,$(wildcard cli/*.c))
SQL_SRC := $(wildcard sql/*.c)
TEST_SRC := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
CORE_OBJ := $(call obj,$(COMMON_SRC) $(OPS_SRC) $(TM_SRC) $(JM_SRC) $(CLI_SRC) $(SQL_SRC)) \
            $(patsubst %.c,%.o,$(PROTO_C)) $(SQL_GEN_C:.c=.o)

BINS := $(B)/bin/sluice-jobmanager $(B)/bin/sluice-taskmanager $(B)/bin/sluice
TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(TEST_SRC))
# operator plugins the test suite loads into both daemons
PLUGINS := $(patsubst tests/plugins/%.c,$(B)/plugins/%.so,$(wildcard tests/plugins/*.c))
# C jobs (common/datastream.h) shipped as examples
CJOBS := $(patsubst examples/datastream/%.c,$(B)/examples/%.so,$(wildcard examples/datastream/*.c))

# test tools: librdkafka's mock cluster as a process (tests/tools/kafka_mock.c)
TOOLS := $(B)/tools/kafka_mock

.PHONY: all deps run test unit clean format examples fuzz fuzz-seeds
all: $(BINS) $(TESTS) $(PLUGINS) $(CJOBS) $(TOOLS)

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(B)/gen
	protoc-c --proto_path=proto --c_out=$(B)/gen $<

$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	$(CC) $(CFLAGS) -Wno-shadow -c $< -o $@

# lemon writes grammar.c, grammar.h and grammar.out next to each other.
$(SQL_GEN_C) $(SQL_GEN_H) &: sql/grammar.y
	@mkdir -p $(B)/gen
	$(LEMON) -T$(LEMPAR) -d$(B)/gen -q sql/grammar.y
	@touch $(SQL_GEN_C) $(SQL_GEN_H)

# lempar.c fetches the extra argument in functions that do not use it.
$(SQL_GEN_C:.c=.o): $(SQL_GEN_C)
	$(CC) $(CFLAGS) -Wno-unused-variable -c $< -o $@

# grammar.h is order-only: it must exist first; the -MMD files say who includes it.
$(B)/obj/%.o: %.c $(PROTO_H) | $(SQL_GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# A plugin resolves Sluice's symbols against the daemon that loads it
# (the daemons link with -rdynamic and the whole library).
$(B)/plugins/%.so: tests/plugins/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<

$(B)/examples/%.so: examples/datastream/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<

examples: $(CJOBS)

$(B)/libsluice.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/bin/sluice-jobmanager: $(call obj,jobmanager/main.c) $(B)/libsluice.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,jobmanager/main.c) -Wl,--whole-archive $(B)/libsluice.a -Wl,--no-whole-archive $(LIBS)

$(B)/bin/sluice-taskmanager: $(call obj,taskmanager/main.c) $(B)/libsluice.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,taskmanager/main.c) -Wl,--whole-archive $(B)/libsluice.a -Wl,--no-whole-archive $(LIBS)

$(B)/bin/sluice: $(call obj,cli/main.c) $(B)/libsluice.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,cli/main.c) -Wl,--whole-archive $(B)/libsluice.a -Wl,--no-whole-archive $(LIBS)

$(B)/tools/kafka_mock: $(B)/obj/tests/tools/kafka_mock.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libsluice.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

deps:
	@./scripts/install-deps.sh

# libFuzzer targets, one per kind of outside input (tests/fuzz/fuzz_<name>.c,
# seeds in tests/fuzz/<name>/, an optional tests/fuzz/<name>.dict). The
# whole library is compiled once more with clang, ASan and UBSan and
# coverage (build*/fuzz/obj); each target links what it calls.
# `make fuzz` runs every target for FUZZ_SECONDS (default 5) each;
# `make fuzz FUZZ_TARGETS=rows FUZZ_SECONDS=600` runs one for longer.
FUZZ_SECONDS ?= 5
FUZZ_ALL := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FZ := $(B)/fuzz
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -pthread -I. -Icommon -Ioperators -I$(B)/gen \
               $(PKG_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
               -fno-sanitize-recover=undefined -Wno-unused-command-line-argument \
               -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_LIB_SRC := $(COMMON_SRC) $(OPS_SRC) $(TM_SRC) $(JM_SRC) $(SQL_SRC)
FUZZ_LIB_OBJ := $(patsubst %.c,$(FZ)/obj/%.o,$(FUZZ_LIB_SRC)) \
                $(patsubst $(B)/gen/%.c,$(FZ)/obj/gen/%.o,$(PROTO_C) $(SQL_GEN_C))

$(FZ)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -w -c $< -o $@

$(FZ)/obj/%.o: %.c $(PROTO_H) | $(SQL_GEN_H)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FZ)/libsluice-fuzz.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ)/libsluice-fuzz.a
	clang -fsanitize=fuzzer,address,undefined -pthread -o $@ $< $(FZ)/libsluice-fuzz.a $(LIBS)

fuzz: $(patsubst %,$(FZ)/fuzz_%,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FZ)/corpus/$$t $(FZ)/artifacts; \
	    dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
	    echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
	    $(FZ)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 \
	        -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=$(FZ)/artifacts/$$t- $$dict $(FZ)/corpus/$$t tests/fuzz/$$t; \
	done

# The README's first command: a local cluster running the demo job
# (another one with `make run JOB=examples/clicks-hop.json`).
JOB ?=
run: deps
	@$(MAKE) --no-print-directory all
	@./scripts/run-local.sh $(JOB)

# The README's second command: every test, normal and sanitized builds.
test: deps
	@./scripts/run-tests.sh

clean:
	rm -rf build build-san

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
-include $(wildcard $(B)/plugins/*.d)
-include $(shell find $(FZ)/obj -name '*.d' 2>/dev/null)
.SECONDARY: $(patsubst %,$(FZ)/obj/tests/fuzz/fuzz_%.o,$(FUZZ_ALL)) $(PROTO_C) $(PROTO_H) $(SQL_GEN_C) $(SQL_GEN_H)

# The fuzz targets' binary seeds (tests/fuzz/make_seeds.c writes them with
# the daemon's encoders; the output is committed).
fuzz-seeds: $(FZ)/libsluice-fuzz.a $(PROTO_H)
	clang $(FUZZ_CFLAGS) -fsanitize=address,undefined -o $(FZ)/make_seeds tests/fuzz/make_seeds.c \
	    $(FZ)/libsluice-fuzz.a $(LIBS) -fsanitize=fuzzer-no-link
	mkdir -p tests/fuzz/rows tests/fuzz/data tests/fuzz/control tests/fuzz/snapshot
	$(FZ)/make_seeds
