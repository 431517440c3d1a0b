# C-only work on the serializer core: tests, fuzzing, benchmark, formatting.
# The addon itself is built by node-gyp from binding.gyp.

CC      ?= cc
CLANG   ?= clang
BUILD   := test/c/build
WARN    := -std=c11 -Wall -Wextra -Wshadow -Werror -D_DEFAULT_SOURCE
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
CORE    := src/http_message.c src/http_message.h
# The binding's plain-C scratch memory, tested with the core.
ARENA   := src/arena.c src/arena.h
TEST_SRC := test/c/test_http_message.c test/c/tap.h $(CORE) $(ARENA)
# The files that must build with no Node header: no -I flag at all.
PLAIN_C := src/http_message.c src/send.c src/arena.c

# llhttp's C sources from Debian's node-llhttp package, used by the fuzzer
# as an independent HTTP/1.1 response parser.
LLHTTP_DIR ?= /usr/share/llhttp
LLHTTP_INC ?= /usr/share/include/llhttp
LLHTTP_SRC := $(LLHTTP_DIR)/api.c $(LLHTTP_DIR)/http.c $(LLHTTP_DIR)/llhttp.c
FUZZ_ARGS  ?= -max_total_time=60
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

FORMAT_FILES := $(wildcard src/*.c src/*.h test/c/*.c test/c/*.h benchmark/*.c)

.PHONY: all test plain valgrind fuzz bench format format-check tidy clean

all: test

$(BUILD):
	mkdir -p $@

# Everything outside the binding compiles with a plain compiler; only
# src/binding.c and src/napi_*.c include node_api.h (through src/napi.h).
plain: | $(BUILD)
	for f in $(PLAIN_C); do $(CC) -std=c11 -Wall -Wextra -Wshadow -Werror -c -o $(BUILD)/plain.o $$f || exit 1; done

# The test program includes src/http_message.c to reach its static helpers.
$(BUILD)/test_http_message: $(TEST_SRC) | $(BUILD)
	$(CC) $(WARN) -g $(SAN) -o $@ test/c/test_http_message.c

$(BUILD)/test_http_message_vg: $(TEST_SRC) | $(BUILD)
	$(CC) $(WARN) -g -O1 -o $@ test/c/test_http_message.c

test: $(BUILD)/test_http_message plain
	./$(BUILD)/test_http_message

valgrind: $(BUILD)/test_http_message_vg
	valgrind -q --leak-check=full --error-exitcode=1 ./$(BUILD)/test_http_message_vg

# llhttp is generated code; it is built without our warning set.
$(BUILD)/llhttp_%.o: $(LLHTTP_DIR)/%.c | $(BUILD)
	$(CLANG) $(FUZZ_FLAGS:-fsanitize=fuzzer,%=-fsanitize=fuzzer-no-link,%) -I$(LLHTTP_INC) -c -o $@ $<

$(BUILD)/fuzz_http_message: test/c/fuzz_http_message.c $(CORE) \
		$(BUILD)/llhttp_api.o $(BUILD)/llhttp_http.o $(BUILD)/llhttp_llhttp.o
	$(CLANG) $(FUZZ_FLAGS) -Wall -Wextra -Wshadow -Werror -I$(LLHTTP_INC) -o $@ \
		test/c/fuzz_http_message.c src/http_message.c \
		$(BUILD)/llhttp_api.o $(BUILD)/llhttp_http.o $(BUILD)/llhttp_llhttp.o

# New inputs go to $(BUILD)/corpus, so the committed seed corpus stays small;
# minimise into it with: $(BUILD)/fuzz_http_message -merge=1 test/c/corpus $(BUILD)/corpus
fuzz: $(BUILD)/fuzz_http_message
	mkdir -p $(BUILD)/corpus
	./$(BUILD)/fuzz_http_message -dict=test/c/http.dict $(FUZZ_ARGS) $(BUILD)/corpus test/c/corpus

$(BUILD)/bench_core: benchmark/core.c $(CORE) | $(BUILD)
	$(CC) -std=c11 -Wall -Wextra -Wshadow -Werror -O2 -o $@ benchmark/core.c src/http_message.c

bench: $(BUILD)/bench_core
	./$(BUILD)/bench_core

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

tidy:
	clang-tidy --quiet src/http_message.c src/arena.c -- -std=c11

clean:
	rm -rf $(BUILD)
