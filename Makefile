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

PKGS := libevent libevent_pthreads libprotobuf-c rocksdb rdkafka libmicrohttpd jansson libcrypto libssl libevent_openssl libpq icu-uc icu-i18n avro-c libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# The embedded Python of LANGUAGE PYTHON functions: the TaskManager alone
# compiles against it and links it (taskmanager/pyhost.c); never the
# JobManager or the CLI.
PY_CFLAGS := $(shell pkg-config --cflags python3-embed 2>/dev/null)
PY_LIBS := $(shell pkg-config --libs python3-embed 2>/dev/null)

# The tree is layered (docs/ARCHITECTURE.md): each folder below is one
# layer, built into its own static library, and sees only its own headers
# and those of the layers under it. A layer's library must link against the
# libraries under it alone (the layer check at the end of `make`), so a
# call upward fails to compile -- the header is not on the path -- and,
# declared by hand, fails to link.
#   lib -> core -> lang -> runtime -> operators -> sql -> api
#       -> jobmanager | taskmanager | cli   (never each other)
LAYERS := lib core lang runtime operators sql api
TOPS := jobmanager taskmanager cli

BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Wshadow -Wno-unused-parameter \
               -pthread -MMD -MP $(PKG_CFLAGS) $(SANFLAGS) $(EXTRA_CFLAGS)
# each layer's include path: its own folder and every folder under it
# (generated code beside the layer that owns it: protobuf in core, the
# grammar in lang)
INC_lib := -Ilib
INC_core := $(INC_lib) -Icore -I$(B)/gen/core
INC_lang := $(INC_core) -Ilang -I$(B)/gen/lang
INC_runtime := $(INC_lang) -Iruntime
INC_operators := $(INC_runtime) -Ioperators
INC_sql := $(INC_operators) -Isql
INC_api := $(INC_sql) -Iapi
INC_jobmanager := $(INC_api) -Ijobmanager
INC_taskmanager := $(INC_api) -Itaskmanager
INC_cli := $(INC_api) -Icli
# tests, test tools and fuzz targets stand above everything
INC_all := $(INC_api) -Ijobmanager -Itaskmanager -Icli
# C jobs and operator plugins see the public ABI headers only: the operator
# contract (core), the DataStream API (api) and what those include
INC_plugin := $(INC_api)
CFLAGS := $(BASE_CFLAGS) $(INC_all)
LDFLAGS := -pthread -rdynamic $(SANFLAGS)
# the ZooKeeper C client (multi-threaded) has no pkg-config file
# elfutils' libdw names the frames of stack samples and thread dumps
# (lib/stack_sample.c), in every daemon
DW_LIBS := $(shell pkg-config --libs libdw 2>/dev/null)
LIBS := $(PKG_LIBS) $(DW_LIBS) -lzookeeper_mt -lm -ldl

PROTOS := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(B)/gen/core/%.pb-c.c,$(PROTOS))
PROTO_H := $(PROTO_C:.c=.h)

# The SQL grammar: lemon generates the parser at build time, like protoc-c.
LEMON ?= lemon
LEMPAR ?= /usr/share/lemon/lempar.c
SQL_GEN_C := $(B)/gen/lang/grammar.c
SQL_GEN_H := $(B)/gen/lang/grammar.h

# sources per layer; the top layers' main.c goes into the binary, not the library
SRC_lib := $(wildcard lib/*.c)
SRC_core := $(wildcard core/*.c)
SRC_lang := $(wildcard lang/*.c)
SRC_runtime := $(wildcard runtime/*.c)
SRC_operators := $(wildcard operators/*.c)
SRC_sql := $(wildcard sql/*.c)
SRC_api := $(wildcard api/*.c)
SRC_jobmanager := $(filter-out jobmanager/main.c,$(wildcard jobmanager/*.c))
SRC_taskmanager := $(filter-out taskmanager/main.c,$(wildcard taskmanager/*.c))
SRC_cli := $(filter-out cli/main.c,$(wildcard cli/*.c))
TEST_SRC := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
# the generated code belongs to its layer's library
GEN_OBJ_core := $(PROTO_C:.c=.o)
GEN_OBJ_lang := $(SQL_GEN_C:.c=.o)
layer_lib = $(B)/lib/libsl_$(1).a
LIB_OBJ = $(call obj,$(SRC_$(1))) $(GEN_OBJ_$(1))

# libraries from the top down, the order the linker reads them in
BELOW_lib :=
BELOW_core := lib
BELOW_lang := core lib
BELOW_runtime := lang core lib
BELOW_operators := runtime lang core lib
BELOW_sql := operators runtime lang core lib
BELOW_api := sql operators runtime lang core lib
BELOW_jobmanager := api sql operators runtime lang core lib
BELOW_taskmanager := $(BELOW_jobmanager)
BELOW_cli := $(BELOW_jobmanager)
libs_of = $(foreach l,$(1),$(call layer_lib,$(l)))

BINS := $(B)/bin/sluice-jobmanager $(B)/bin/sluice-taskmanager $(B)/bin/sluice
TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(TEST_SRC))
# operator plugins the test suite loads into both daemons
PLUGINS := $(patsubst tests/plugins/%.c,$(B)/plugins/%.so,$(wildcard tests/plugins/*.c))
# C jobs (api/datastream.h) shipped as examples
CJOBS := $(patsubst examples/datastream/%.c,$(B)/examples/%.so,$(wildcard examples/datastream/*.c))
# one stamp per layer: its library links against the layers under it alone
LAYER_CHECKS := $(patsubst %,$(B)/layers/%.ok,$(LAYERS) $(TOPS))

# test tools: librdkafka's mock cluster as a process (tests/tools/kafka_mock.c)
TOOLS := $(B)/tools/kafka_mock $(B)/tools/gen_docs

.PHONY: all deps run test unit clean format examples fuzz fuzz-seeds layers docs
all: $(BINS) $(TESTS) $(PLUGINS) $(CJOBS) $(TOOLS) $(LAYER_CHECKS)

$(B)/gen/core/%.pb-c.c $(B)/gen/core/%.pb-c.h: proto/%.proto
	@mkdir -p $(B)/gen/core
	protoc-c --proto_path=proto --c_out=$(B)/gen/core $<

$(B)/gen/core/%.pb-c.o: $(B)/gen/core/%.pb-c.c
	$(CC) $(BASE_CFLAGS) $(INC_core) -Wno-shadow -c $< -o $@

# lemon writes grammar.c, grammar.h and grammar.out next to each other.
$(SQL_GEN_C) $(SQL_GEN_H) &: lang/grammar.y
	@mkdir -p $(B)/gen/lang
	$(LEMON) -T$(LEMPAR) -d$(B)/gen/lang -q lang/grammar.y
	@touch $(SQL_GEN_C) $(SQL_GEN_H)

# lempar.c fetches the extra argument in functions that do not use it.
$(SQL_GEN_C:.c=.o): $(SQL_GEN_C)
	$(CC) $(BASE_CFLAGS) $(INC_lang) -Wno-unused-variable -c $< -o $@

# Each layer's sources compile with that layer's include path only.
# grammar.h is order-only: it must exist first; the -MMD files say who includes it.
define layer_rules
$(B)/obj/$(1)/%.o: $(1)/%.c $(PROTO_H) | $(SQL_GEN_H)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $$(INC_$(1)) -c $$< -o $$@

$(call layer_lib,$(1)): $(call LIB_OBJ,$(1))
	@mkdir -p $$(dir $$@)
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach l,$(LAYERS) $(TOPS),$(eval $(call layer_rules,$(l))))
$(B)/obj/taskmanager/pyhost.o: BASE_CFLAGS += $(PY_CFLAGS)
# outside libraries one top layer alone links (the layer check and tests/test_layers.py add them)
EXTRA_LIBS_taskmanager := $(PY_LIBS)
$(B)/bin/sluice-taskmanager $(B)/layers/taskmanager.ok $(B)/tools/gen_docs: LIBS += $(EXTRA_LIBS_taskmanager)

# tests and tools see every layer
$(B)/obj/tests/%.o: tests/%.c $(PROTO_H) | $(SQL_GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The layer check: link each layer's whole library against the libraries
# under it and nothing else; an undefined reference is a call upward (or
# sideways between the JobManager, the TaskManager and the CLI).
$(B)/obj/layer_check_main.o: scripts/layer_check_main.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -c $< -o $@

$(B)/layers/%.ok: $(B)/obj/layer_check_main.o $(foreach l,$(LAYERS) $(TOPS),$(call layer_lib,$(l)))
	@mkdir -p $(dir $@)
	@./scripts/check-layer.sh "$(CC) $(LDFLAGS)" $* $(B)/obj/layer_check_main.o \
	    $(call layer_lib,$*) "$(call libs_of,$(BELOW_$*))" "$(LIBS)" && touch $@

layers: $(LAYER_CHECKS)

# A plugin resolves Sluice's symbols against the daemon that loads it
# (the daemons link with -rdynamic and every layer's whole library).
$(B)/plugins/%.so: tests/plugins/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(INC_plugin) -fPIC -shared -o $@ $<

$(B)/examples/%.so: examples/datastream/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(INC_plugin) -fPIC -shared -o $@ $<

examples: $(CJOBS)

# A daemon or the CLI: its main, then its own layer and every layer under
# it, whole (plugins and C jobs resolve against any of it).
define bin_rule
$(B)/bin/$(1): $(call obj,$(2)/main.c) $(call libs_of,$(2) $(BELOW_$(2)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $(call obj,$(2)/main.c) -Wl,--whole-archive \
	    $(call libs_of,$(2) $(BELOW_$(2))) -Wl,--no-whole-archive $$(LIBS)
endef
$(eval $(call bin_rule,sluice-jobmanager,jobmanager))
$(eval $(call bin_rule,sluice-taskmanager,taskmanager))
$(eval $(call bin_rule,sluice,cli))

ALL_LIBS := $(call libs_of,$(TOPS) api $(BELOW_api))
$(B)/tools/kafka_mock: $(B)/obj/tests/tools/kafka_mock.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# the generated parts of docs/CONFIG.md and docs/OPERATORS.md (`make docs`)
$(B)/tools/gen_docs: $(B)/obj/tests/tools/gen_docs.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -Wl,--whole-archive $(ALL_LIBS) -Wl,--no-whole-archive $(LIBS)

docs: $(B)/tools/gen_docs
	SLUICE_BUILD=$(B) python3 scripts/gen_docs.py

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

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
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -pthread $(INC_all) \
               $(PKG_CFLAGS) $(PY_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
               -fno-sanitize-recover=undefined -Wno-unused-command-line-argument \
               -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_LIB_SRC := $(foreach l,$(LAYERS) jobmanager taskmanager,$(SRC_$(l)))
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
	@REST_PORT=$(REST_PORT) RPC_PORT=$(RPC_PORT) ./scripts/run-local.sh $(JOB)

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

# `make print-INC_core` and the like: a variable's value, for tests/test_layers.py.
print-%:
	@echo '$($*)'
