/*
 * tessera.h: the C ABI for embedding Tessera VM in a host application.
 *
 * C99, no C++ types, no internal headers. A host includes this file, links
 * Tessera::tessera (CMake: find_package(Tessera 0.1)) and talks to the VM
 * only through the functions below. docs/embedding.md is the guide.
 *
 * Rules that hold for every function:
 *
 *  - Errors are values. Every function returns a tsr_status; TSR_SUCCESS is
 *    0. No function aborts the process on bad input: a null or destroyed VM,
 *    a null or freed handle, a handle from another VM, a value of the wrong
 *    type give TSR_EINVAL or TSR_ETYPE. The message of the last error (and,
 *    for a script's runtime error, its traceback) stays readable through
 *    tsr_last_error / tsr_last_traceback until the next call on that VM.
 *    Errors of calls that have no VM (tsr_vm_create) are kept per thread and
 *    read with tsr_last_error(NULL).
 *
 *  - No global state. VMs share nothing. A VM may be used by one thread at a
 *    time; different VMs may run on different threads at once. A host
 *    function runs on the thread that called into the VM; it must not call
 *    tsr_run_* or tsr_call* of the same VM (TSR_EBUSY): it may make and read
 *    values.
 *
 *  - Values are handles (tsr_value), owned by the host until freed with
 *    tsr_value_free; tsr_vm_destroy frees those still held. A handle keeps
 *    its value alive (a list or tensor the script drops stays valid while
 *    the host holds it). Handles are plain structs of one integer: copying
 *    one does not copy the value nor add an owner, and a handle whose value
 *    was freed is recognised as such (TSR_EINVAL), also when its slot has
 *    been reused.
 *
 *  - Strings are byte strings with a length; they need not end in NUL.
 *    Strings returned by the VM are NUL-terminated: tsr_get_str's while its
 *    handle lives, tsr_last_error's and tsr_last_traceback's until the next
 *    call on that VM (those two, tsr_status_name and tsr_abi_version change
 *    nothing; every other call sets the last error, to "" on success).
 *
 *  - After a failed call, what an `out` argument holds is unspecified
 *    (handles are set to {0} where the call got that far).
 *
 *  - Callbacks (output, host functions, a wrapped tensor's release, DLPack
 *    deleters of imported tensors) run on the thread that is calling into
 *    the VM at the time; the JIT's background threads never call them.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versioning ---------------------------------------------------------
 * The ABI version this header describes. A host built against another major
 * version, or a newer minor version than the library's, gets TSR_EVERSION
 * from tsr_vm_create (the version travels in tsr_vm_options, which
 * tsr_vm_options_init fills from these macros). */
#define TSR_ABI_MAJOR 0
#define TSR_ABI_MINOR 1

/* The library's ABI version, (major << 16) | minor. */
uint32_t tsr_abi_version(void);
/* The library's release, e.g. "0.1.0". Static storage. */
const char* tsr_version_string(void);

/* ---- Status codes ------------------------------------------------------- */
typedef enum tsr_status {
  TSR_SUCCESS = 0,
  TSR_EINVAL = 1,    /* a bad argument: null pointer, bad or foreign handle, bad name */
  TSR_ERUNTIME = 2,  /* the script raised a runtime error (message and traceback kept) */
  TSR_ESYNTAX = 3,   /* the source does not compile (message with line and column kept) */
  TSR_EOOM = 4,      /* out of memory */
  TSR_ETYPE = 5,     /* a value of another type than the call needs */
  TSR_ENOTFOUND = 6, /* no such global, or no such file */
  TSR_EIO = 7,       /* a file could not be read or written */
  TSR_EVERSION = 8,  /* the host was built against an incompatible ABI */
  TSR_EBUSY = 9,     /* the VM is running (a host function called back into it) or has run */
  TSR_ERANGE = 10,   /* an index or size out of range */
  TSR_EDEVICE = 11   /* the requested device cannot be used */
} tsr_status;

/* "TSR_EINVAL" for TSR_EINVAL, and so on. Static storage. */
const char* tsr_status_name(tsr_status status);

/* ---- VM lifecycle -------------------------------------------------------- */
typedef struct tsr_vm tsr_vm;

/* Receives what the script writes (print) or error reports, `len` bytes. */
typedef void (*tsr_write_fn)(void* user, const char* data, size_t len);

typedef struct tsr_vm_options {
  uint32_t abi_major;  /* set by tsr_vm_options_init: TSR_ABI_MAJOR */
  uint32_t abi_minor;  /* set by tsr_vm_options_init: TSR_ABI_MINOR */
  size_t struct_size;  /* set by tsr_vm_options_init: sizeof(tsr_vm_options) */
  int jit;             /* 1 (default): the trace JIT; 0: the interpreter alone */
  const char* device;  /* "auto" (default, NULL too), "cpu" or "gpu": where fused tensor kernels run */
  int max_depth;       /* call depth at which "stack overflow" is raised; 0: 10000 */
  /* JIT parameters, n_jit_params strings "NAME=VALUE" (docs/jit-params.md). */
  const char* const* jit_params;
  size_t n_jit_params;
  /* print() output; NULL: the process's stdout. */
  tsr_write_fn out;
  void* out_user;
  /* Error reports of tsr_run_* and tsr_call* (also kept for tsr_last_error);
   * NULL: not written anywhere. */
  tsr_write_fn err;
  void* err_user;
} tsr_vm_options;

/* Fills `opts` with the defaults and this header's ABI version. */
static inline void tsr_vm_options_init(tsr_vm_options* opts) {
  memset(opts, 0, sizeof *opts);
  opts->abi_major = TSR_ABI_MAJOR;
  opts->abi_minor = TSR_ABI_MINOR;
  opts->struct_size = sizeof(tsr_vm_options);
  opts->jit = 1;
}

/* Creates a VM. `opts` NULL: the defaults. On failure *out is NULL and
 * tsr_last_error(NULL) says why. */
tsr_status tsr_vm_create(const tsr_vm_options* opts, tsr_vm** out);
/* Destroys a VM and every handle it still holds. NULL is accepted. Using
 * the VM afterwards is detected (TSR_EINVAL) unless its address was reused
 * by a new VM. */
tsr_status tsr_vm_destroy(tsr_vm* vm);

/* The last error's message ("" when the last call succeeded): for a runtime
 * error the text after "runtime error: " (e.g. "division by zero"), for a
 * syntax error the whole report "NAME:LINE:COL: syntax error: ..." with the
 * source line and a caret. With vm NULL:
 * the calling thread's last error of a call that had no VM. Valid until the
 * next call on that VM (or thread). */
const char* tsr_last_error(const tsr_vm* vm);
/* The last runtime error's traceback, "  at f (file.tsb:3)" lines, innermost
 * last; a host function's frame reads "  at name (host function)". "" when
 * there is none. */
const char* tsr_last_traceback(const tsr_vm* vm);

/* ---- Running code ------------------------------------------------------------
 * All sources of a VM run in one namespace: a later source, tsr_call and
 * tsr_get_global see the globals (let, fn) of earlier ones. */
/* `name` (NULL: "<string>") is the file name errors and tracebacks show. */
tsr_status tsr_run_source(tsr_vm* vm, const char* name, const char* source, size_t len);
tsr_status tsr_run_file(tsr_vm* vm, const char* path);

/* ---- Values ---------------------------------------------------------------- */
typedef struct tsr_value {
  uint64_t id; /* 0: no value */
} tsr_value;

typedef enum tsr_type {
  TSR_TYPE_NIL = 0,
  TSR_TYPE_BOOL = 1,
  TSR_TYPE_INT = 2,
  TSR_TYPE_FLOAT = 3,
  TSR_TYPE_STR = 4,
  TSR_TYPE_LIST = 5,
  TSR_TYPE_TENSOR = 6,
  TSR_TYPE_FUNCTION = 7, /* a script function, built-in or host function */
  TSR_TYPE_DTYPE = 8
} tsr_type;

/* Freeing {0} does nothing (TSR_SUCCESS); freeing a freed handle is TSR_EINVAL. */
tsr_status tsr_value_free(tsr_vm* vm, tsr_value v);
/* Another handle to the same value (lists and tensors are shared, not copied). */
tsr_status tsr_value_dup(tsr_vm* vm, tsr_value v, tsr_value* out);
tsr_status tsr_value_type(tsr_vm* vm, tsr_value v, tsr_type* out);
/* The value as print() writes it, as a new str value. */
tsr_status tsr_value_to_str(tsr_vm* vm, tsr_value v, tsr_value* out);

tsr_status tsr_new_nil(tsr_vm* vm, tsr_value* out);
tsr_status tsr_new_bool(tsr_vm* vm, int b, tsr_value* out);
tsr_status tsr_new_int(tsr_vm* vm, int64_t i, tsr_value* out);
tsr_status tsr_new_float(tsr_vm* vm, double f, tsr_value* out);
tsr_status tsr_new_str(tsr_vm* vm, const char* data, size_t len, tsr_value* out);
/* A list of the items' values (the items' handles stay the host's). */
tsr_status tsr_new_list(tsr_vm* vm, const tsr_value* items, size_t n, tsr_value* out);

tsr_status tsr_get_bool(tsr_vm* vm, tsr_value v, int* out);
tsr_status tsr_get_int(tsr_vm* vm, tsr_value v, int64_t* out);
/* A float, or an int converted to double. */
tsr_status tsr_get_float(tsr_vm* vm, tsr_value v, double* out);
/* The bytes of a str, NUL-terminated; valid while the handle is. */
tsr_status tsr_get_str(tsr_vm* vm, tsr_value v, const char** data, size_t* len);
tsr_status tsr_list_len(tsr_vm* vm, tsr_value list, size_t* out);
/* Item i as a new handle. */
tsr_status tsr_list_get(tsr_vm* vm, tsr_value list, size_t i, tsr_value* out);
tsr_status tsr_list_set(tsr_vm* vm, tsr_value list, size_t i, tsr_value item);
tsr_status tsr_list_push(tsr_vm* vm, tsr_value list, tsr_value item);

/* ---- Globals and calls ------------------------------------------------------- */
/* A global (a let or fn of a source run so far, a built-in, a host
 * function) as a new handle; TSR_ENOTFOUND when there is none. */
tsr_status tsr_get_global(tsr_vm* vm, const char* name, tsr_value* out);
/* Binds a global; scripts run afterwards see it (and traces compiled
 * assuming its old value are dropped). */
tsr_status tsr_set_global(tsr_vm* vm, const char* name, tsr_value v);
/* Calls a function value with n arguments. *result (may be NULL) gets the
 * return value as a new handle. A runtime error is TSR_ERUNTIME with the
 * message and traceback kept. Hot functions are compiled as from a script. */
tsr_status tsr_call(tsr_vm* vm, tsr_value fn, const tsr_value* args, size_t n, tsr_value* result);
/* tsr_get_global + tsr_call. */
tsr_status tsr_call_global(tsr_vm* vm, const char* name, const tsr_value* args, size_t n, tsr_value* result);

/* ---- Host functions ------------------------------------------------------------
 * A C callback callable from scripts as a global built-in. It gets the
 * arguments as handles the VM owns (valid during the call; do not free
 * them) and returns its result by setting *result to a handle it made (the
 * VM takes it over; left {0}: nil). To raise a runtime error it returns
 * tsr_raise(vm, "message"): the script sees "runtime error: message" and the
 * traceback names the host function. Any other non-success status is raised
 * with the VM's last error message, and *result is then dropped. A host
 * function may make, read and free values and read globals of its VM, but
 * not run or call script code of it (TSR_EBUSY), nor bind globals or
 * register functions. It takes positional arguments only. Registering the
 * name of a built-in (print, len, ...) shadows it for sources run later. */
typedef tsr_status (*tsr_host_fn)(tsr_vm* vm, void* user, const tsr_value* args, size_t nargs,
                                  tsr_value* result);
/* Registers `fn` as the global `name`, called with min_args..max_args
 * arguments (max_args -1: any number). Registering a name again rebinds it. */
tsr_status tsr_register_function(tsr_vm* vm, const char* name, tsr_host_fn fn, void* user,
                                 int min_args, int max_args);
/* Sets the error a host function raises; returns TSR_ERUNTIME. */
tsr_status tsr_raise(tsr_vm* vm, const char* message);

/* ---- Tensors --------------------------------------------------------------------
 * Tensors are contiguous, row-major, on the host. The dtypes are the
 * language's; the enumerators' order is fixed. */
typedef enum tsr_dtype {
  TSR_F32 = 0,
  TSR_F16 = 1,
  TSR_BF16 = 2,
  TSR_I32 = 3,
  TSR_I64 = 4,
  TSR_BOOL = 5 /* one byte per element, 0 or 1 */
} tsr_dtype;

/* A new zero-filled tensor the VM owns. */
tsr_status tsr_new_tensor(tsr_vm* vm, tsr_dtype dtype, const int64_t* shape, size_t rank, tsr_value* out);

/* A tensor over host memory, without copying: the script's reads and
 * writes go to `data`, the host's writes are seen by the script. `data` must
 * hold the product of `shape` elements of `dtype`, aligned to the element
 * size, and stay valid until the VM calls release(release_user) (when the
 * last reference, the script's or a handle, goes; release may be NULL). */
tsr_status tsr_wrap_tensor(tsr_vm* vm, tsr_dtype dtype, const int64_t* shape, size_t rank, void* data,
                           void (*release)(void* release_user), void* release_user, tsr_value* out);

/* The tensor's dtype, rank, and shape (`shape` may be NULL; else room for
 * rank <= 8 entries). */
tsr_status tsr_tensor_info(tsr_vm* vm, tsr_value t, tsr_dtype* dtype, size_t* rank, int64_t* shape);
/* The elements' storage (nbytes may be NULL), valid while the handle is and
 * the script does not run. Writes through it are the tensor's. */
tsr_status tsr_tensor_data(tsr_vm* vm, tsr_value t, void** data, size_t* nbytes);

/* DLPack (dlpack/dlpack.h, the convention NumPy, PyTorch, JAX and CuPy
 * share). Import: takes over `tensor` on success (its deleter is called when
 * the VM's last reference goes); on failure the caller keeps it. Only
 * kDLCPU tensors of the dtypes above, compact row-major (strides NULL or
 * row-major) and element-aligned are imported without a copy; other strides
 * are copied (tsr_stat "tensor_bytes_copied" counts them), and then the
 * DLPack deleter is called at once. byte_offset is honoured. Another device
 * or dtype is refused (TSR_EINVAL, TSR_ETYPE) and the caller keeps the
 * tensor. DLPack 0.6 has no bool code: bool tensors travel as uint8 0/1. */
struct DLManagedTensor;
tsr_status tsr_tensor_from_dlpack(tsr_vm* vm, struct DLManagedTensor* tensor, tsr_value* out);
/* Export without a copy: *out shares the tensor's storage and keeps it alive
 * (also after the VM is destroyed) until its deleter is called, which the
 * consumer must do once. */
tsr_status tsr_tensor_to_dlpack(tsr_vm* vm, tsr_value t, struct DLManagedTensor** out);

/* ---- JIT control and statistics ------------------------------------------------ */
/* Sets a JIT parameter ("hotloop", "maxtrace", ...: docs/jit-params.md) by
 * name. Before the VM first runs code; afterwards TSR_EBUSY. */
tsr_status tsr_set_jit_param(tsr_vm* vm, const char* name, const char* value);
/* Writes each compiled trace's IR and code, the fused kernels, and the JIT's
 * events (events.jsonl) to `dir`, as the CLI's --dump does. Before the VM
 * first runs code; afterwards TSR_EBUSY. */
tsr_status tsr_enable_dump(tsr_vm* vm, const char* dir);

typedef enum tsr_stats_format {
  TSR_STATS_TEXT = 0, /* the CLI's --stats report */
  TSR_STATS_JSON = 1  /* one JSON object: run, loops, embedding counters */
} tsr_stats_format;
/* The statistics so far as a new str value. */
tsr_status tsr_stats(tsr_vm* vm, tsr_stats_format format, tsr_value* out);
/* One counter by name: "host_calls", "host_function_calls",
 * "tensor_bytes_copied", "tensors_wrapped", "tensors_exported", "traces",
 * "compiled_traces", "trace_exits"; TSR_ENOTFOUND for others. */
tsr_status tsr_stat(tsr_vm* vm, const char* name, int64_t* out);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_H */
