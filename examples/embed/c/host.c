/*
 * host.c: a C host that embeds Tessera VM through the C ABI (tessera.h).
 *
 * It shows, in order:
 *   1. creating a VM whose print() output goes to a callback (each line is
 *      prefixed with "[script] " and the bytes are counted) and whose error
 *      reports go to another (prefixed "[vm-error] ", on stderr);
 *   2. registering two host functions with a user-data pointer:
 *      clamp(x, lo, hi), which raises a runtime error with tsr_raise when
 *      lo > hi, and host_log(value), which prints any value;
 *   3. running a source that calls clamp in a loop;
 *   4. reading a global back;
 *   5. calling a script function with arguments and reading its result;
 *   6. a script's runtime error (raised by the host function) with its
 *      message and traceback, and a syntax error;
 *   7. the embedding counters, freeing every handle, destroying the VM.
 *
 * Every status is checked: CHECK prints the status's name and the VM's last
 * error and exits with status 1. The program exits 0 when all went as
 * expected.
 *
 * Build (docs/embedding.md, "Examples"):
 *   cmake -S examples/embed/c -B build-embed-c -DCMAKE_PREFIX_PATH=/opt/tessera
 *   cmake --build build-embed-c && ./build-embed-c/host
 */
#include <tessera/tessera.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CHECK(vm, call): `call` must return TSR_SUCCESS; else report and exit 1.
 * `vm` may be NULL for calls that have no VM (tsr_vm_create): then
 * tsr_last_error(NULL) holds the calling thread's last error. */
#define CHECK(vm, call)                                                                        \
  do {                                                                                         \
    tsr_status check_status_ = (call);                                                         \
    if (check_status_ != TSR_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,                        \
              tsr_status_name(check_status_), tsr_last_error(vm));                             \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* EXPECT(vm, call, want): `call` must return `want` (an expected failure). */
#define EXPECT(vm, call, want)                                                                 \
  do {                                                                                         \
    tsr_status expect_status_ = (call);                                                        \
    if (expect_status_ != (want)) {                                                            \
      fprintf(stderr, "%s:%d: %s: expected %s, got %s: %s\n", __FILE__, __LINE__, #call,       \
              tsr_status_name(want), tsr_status_name(expect_status_), tsr_last_error(vm));     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

/* ---- Output callbacks ------------------------------------------------------ */

/* Writes what it gets to `to`, each line prefixed; counts the bytes. The VM
 * may hand over a line in several pieces or several lines in one, so the
 * prefix goes at the start of each line, not of each call. */
typedef struct line_writer {
  FILE* to;
  const char* prefix;
  int at_line_start;
  size_t bytes;
} line_writer;

static void write_prefixed(void* user, const char* data, size_t len) {
  line_writer* w = (line_writer*)user;
  size_t i;
  w->bytes += len;
  for (i = 0; i < len; ++i) {
    if (w->at_line_start) {
      fputs(w->prefix, w->to);
      w->at_line_start = 0;
    }
    fputc(data[i], w->to);
    if (data[i] == '\n') w->at_line_start = 1;
  }
}

/* ---- Host functions ---------------------------------------------------------- */

/* The user data of the host functions: the host's own counters. */
typedef struct host_counters {
  int64_t clamp_calls;   /* calls of clamp, including those that raise */
  int64_t clamped;       /* calls whose x was outside [lo, hi] */
  int64_t log_calls;     /* calls of host_log */
} host_counters;

/* clamp(x, lo, hi): x limited to [lo, hi]. Ints and floats are accepted; the
 * result is an int when all three are ints, else a float. lo > hi raises a
 * runtime error. The arguments are the VM's (borrowed: not freed here); the
 * result is a handle made here, which the VM takes over. */
static tsr_status host_clamp(tsr_vm* vm, void* user, const tsr_value* args, size_t nargs,
                             tsr_value* result) {
  host_counters* counters = (host_counters*)user;
  tsr_type types[3];
  size_t i;
  int all_int = 1;
  char message[160];

  counters->clamp_calls++;
  (void)nargs; /* registered with exactly 3 arguments: the VM checks the count */
  for (i = 0; i < 3; ++i) {
    tsr_status st = tsr_value_type(vm, args[i], &types[i]);
    if (st != TSR_SUCCESS) return st; /* raised with the VM's last error message */
    if (types[i] != TSR_TYPE_INT && types[i] != TSR_TYPE_FLOAT) {
      snprintf(message, sizeof message, "clamp: argument %u must be a number",
               (unsigned)(i + 1));
      return tsr_raise(vm, message);
    }
    if (types[i] != TSR_TYPE_INT) all_int = 0;
  }

  if (all_int) {
    int64_t x, lo, hi;
    tsr_status st;
    if ((st = tsr_get_int(vm, args[0], &x)) != TSR_SUCCESS) return st;
    if ((st = tsr_get_int(vm, args[1], &lo)) != TSR_SUCCESS) return st;
    if ((st = tsr_get_int(vm, args[2], &hi)) != TSR_SUCCESS) return st;
    if (lo > hi) {
      snprintf(message, sizeof message, "clamp: lo (%" PRId64 ") > hi (%" PRId64 ")", lo, hi);
      return tsr_raise(vm, message);
    }
    if (x < lo || x > hi) counters->clamped++;
    return tsr_new_int(vm, x < lo ? lo : x > hi ? hi : x, result);
  } else {
    double x, lo, hi;
    tsr_status st;
    /* tsr_get_float also reads an int, as a double. */
    if ((st = tsr_get_float(vm, args[0], &x)) != TSR_SUCCESS) return st;
    if ((st = tsr_get_float(vm, args[1], &lo)) != TSR_SUCCESS) return st;
    if ((st = tsr_get_float(vm, args[2], &hi)) != TSR_SUCCESS) return st;
    if (lo > hi) {
      snprintf(message, sizeof message, "clamp: lo (%g) > hi (%g)", lo, hi);
      return tsr_raise(vm, message);
    }
    if (x < lo || x > hi) counters->clamped++;
    return tsr_new_float(vm, x < lo ? lo : x > hi ? hi : x, result);
  }
}

/* host_log(value): prints the value as print() would, on the host's stdout
 * (not through the VM's output callback). Returns nil (*result left {0}).
 * A host function may make and free values of its own. */
static tsr_status host_log(tsr_vm* vm, void* user, const tsr_value* args, size_t nargs,
                           tsr_value* result) {
  host_counters* counters = (host_counters*)user;
  tsr_value text = {0};
  const char* data;
  size_t len;
  tsr_status st;

  (void)nargs;
  (void)result;
  counters->log_calls++;
  st = tsr_value_to_str(vm, args[0], &text);
  if (st != TSR_SUCCESS) return st;
  st = tsr_get_str(vm, text, &data, &len);
  if (st == TSR_SUCCESS) printf("[host_log] %.*s\n", (int)len, data);
  tsr_value_free(vm, text);
  return st;
}

/* ---- The script ------------------------------------------------------------------ */

static const char script[] =
    "# Runs in the VM's one namespace: the host reads `total` and calls\n"
    "# `scale` and `bad` afterwards.\n"
    "let total = 0.0\n"
    "\n"
    "fn smooth(n) {\n"
    "  let acc = 0.0\n"
    "  for i in range(n) {\n"
    "    acc += clamp(sin(float(i) * 0.01) * 2.0, -1.0, 1.0)\n"
    "  }\n"
    "  return acc\n"
    "}\n"
    "\n"
    "fn scale(xs, k) {\n"
    "  let out = []\n"
    "  for x in xs { push(out, clamp(x * k, 0, 100)) }\n"
    "  return out\n"
    "}\n"
    "\n"
    "fn bad(lo, hi) {\n"
    "  return clamp(0.5, lo, hi)\n"
    "}\n"
    "\n"
    "total = smooth(10000)\n"
    "print(\"smooth(10000) =\", fmt(total, 6))\n"
    "host_log([1, 2.5, \"three\", nil])\n";

int main(void) {
  tsr_vm_options opts;
  tsr_vm* vm = NULL;
  host_counters counters = {0, 0, 0};
  line_writer out = {NULL, "[script] ", 1, 0};
  line_writer err = {NULL, "[vm-error] ", 1, 0};
  const char* const jit_params[] = {"hotloop=20"};
  tsr_value total = {0}, k = {0}, list = {0}, scaled = {0}, scaled_text = {0};
  tsr_value args[2];
  static const int64_t xs[4] = {5, 20, 40, 60};
  tsr_value items[4];
  double total_value;
  size_t n, i;
  const char* data;
  size_t len;
  int64_t stat;
  tsr_status st;

  out.to = stdout;
  err.to = stderr;
  printf("Tessera %s, ABI %u.%u (header %d.%d)\n", tsr_version_string(),
         (unsigned)(tsr_abi_version() >> 16), (unsigned)(tsr_abi_version() & 0xffffu),
         TSR_ABI_MAJOR, TSR_ABI_MINOR);

  /* 1. The VM. tsr_vm_options_init fills in the defaults and the ABI version
   * this program was built against; the library checks it (TSR_EVERSION). */
  tsr_vm_options_init(&opts);
  opts.out = write_prefixed;
  opts.out_user = &out;
  opts.err = write_prefixed;
  opts.err_user = &err;
  opts.jit_params = jit_params;
  opts.n_jit_params = sizeof jit_params / sizeof jit_params[0];
  CHECK(NULL, tsr_vm_create(&opts, &vm));

  /* 2. Host functions, registered before the script that calls them runs. */
  CHECK(vm, tsr_register_function(vm, "clamp", host_clamp, &counters, 3, 3));
  CHECK(vm, tsr_register_function(vm, "host_log", host_log, &counters, 1, 1));

  /* 3. Run the script. */
  CHECK(vm, tsr_run_source(vm, "host.tsb", script, strlen(script)));

  /* 4. Read a global back. */
  CHECK(vm, tsr_get_global(vm, "total", &total));
  CHECK(vm, tsr_get_float(vm, total, &total_value));
  printf("global total = %.6f\n", total_value);

  /* 5. Call a script function: scale([5, 20, 40, 60], 3). The list is made
   * of the items' values; the items' handles stay ours to free. */
  for (i = 0; i < 4; ++i) CHECK(vm, tsr_new_int(vm, xs[i], &items[i]));
  CHECK(vm, tsr_new_list(vm, items, 4, &list));
  for (i = 0; i < 4; ++i) CHECK(vm, tsr_value_free(vm, items[i]));
  CHECK(vm, tsr_new_int(vm, 3, &k));
  args[0] = list;
  args[1] = k;
  CHECK(vm, tsr_call_global(vm, "scale", args, 2, &scaled));

  CHECK(vm, tsr_value_to_str(vm, scaled, &scaled_text));
  CHECK(vm, tsr_get_str(vm, scaled_text, &data, &len));
  printf("scale([5, 20, 40, 60], 3) = %.*s\n", (int)len, data);
  CHECK(vm, tsr_list_len(vm, scaled, &n));
  printf("items:");
  for (i = 0; i < n; ++i) {
    tsr_value item;
    int64_t v;
    CHECK(vm, tsr_list_get(vm, scaled, i, &item)); /* a new handle: freed below */
    CHECK(vm, tsr_get_int(vm, item, &v));
    printf(" %" PRId64, v);
    CHECK(vm, tsr_value_free(vm, item));
  }
  printf(" (%zu items)\n", n);

  /* 6a. A runtime error raised by the host function: bad(2.0, 1.0) calls
   * clamp(0.5, 2.0, 1.0), which raises. The message and the traceback stay
   * readable until the next call on the VM; the message is printed before
   * tsr_last_traceback is called. */
  CHECK(vm, tsr_new_float(vm, 2.0, &args[0]));
  CHECK(vm, tsr_new_float(vm, 1.0, &args[1]));
  st = tsr_call_global(vm, "bad", args, 2, NULL);
  EXPECT(vm, st, TSR_ERUNTIME);
  printf("bad(2.0, 1.0) -> %s\n", tsr_status_name(st));
  printf("  message: %s\n", tsr_last_error(vm));
  printf("  traceback:\n%s\n", tsr_last_traceback(vm));
  CHECK(vm, tsr_value_free(vm, args[0]));
  CHECK(vm, tsr_value_free(vm, args[1]));

  /* 6b. A syntax error: the source does not run; the VM stays usable. */
  {
    static const char broken[] = "let x = (1 +\n";
    st = tsr_run_source(vm, "broken.tsb", broken, strlen(broken));
    EXPECT(vm, st, TSR_ESYNTAX);
    printf("broken.tsb -> %s: %s\n", tsr_status_name(st), tsr_last_error(vm));
  }

  /* 6c. No such global. */
  {
    tsr_value missing;
    st = tsr_get_global(vm, "no_such_name", &missing);
    EXPECT(vm, st, TSR_ENOTFOUND);
    printf("no_such_name -> %s\n", tsr_status_name(st));
  }

  /* 7. Counters: the host's and the VM's. */
  CHECK(vm, tsr_stat(vm, "host_function_calls", &stat));
  printf("host function calls: %" PRId64 " counted by the VM; clamp %" PRId64
         " (%" PRId64 " clamped), host_log %" PRId64 " counted by the host\n",
         stat, counters.clamp_calls, counters.clamped, counters.log_calls);
  CHECK(vm, tsr_stat(vm, "compiled_traces", &stat));
  printf("compiled traces: %" PRId64 "\n", stat);
  printf("script output: %zu bytes; error reports: %zu bytes\n", out.bytes, err.bytes);

  /* Free the handles still held (tsr_vm_destroy would free them too), then
   * destroy the VM (its errors, if any, are read with tsr_last_error(NULL):
   * the VM is gone). */
  CHECK(vm, tsr_value_free(vm, scaled_text));
  CHECK(vm, tsr_value_free(vm, scaled));
  CHECK(vm, tsr_value_free(vm, k));
  CHECK(vm, tsr_value_free(vm, list));
  CHECK(vm, tsr_value_free(vm, total));
  CHECK(NULL, tsr_vm_destroy(vm));
  return 0;
}
