// The C ABI (include/tessera/tessera.h) through the shared library a host
// links: every function with valid and invalid arguments, host functions,
// zero-copy tensors both ways, DLPack, JIT control, and VMs on threads.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tessera/tessera.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string last(const tsr_vm* vm) { return tsr_last_error(vm); }

// A VM whose print() output is kept in `out`.
struct TestVM {
  std::string out;
  tsr_vm* vm = nullptr;
  explicit TestVM(std::vector<const char*> params = {}, int jit = 1) {
    tsr_vm_options o;
    tsr_vm_options_init(&o);
    o.jit = jit;
    o.out = [](void* user, const char* data, size_t len) { static_cast<std::string*>(user)->append(data, len); };
    o.out_user = &out;
    o.jit_params = params.data();
    o.n_jit_params = params.size();
    EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_SUCCESS) << tsr_last_error(nullptr);
  }
  ~TestVM() { tsr_vm_destroy(vm); }
  tsr_status run(const std::string& src) { return tsr_run_source(vm, "test.tsb", src.data(), src.size()); }
  tsr_value integer(int64_t i) {
    tsr_value v{0};
    EXPECT_EQ(tsr_new_int(vm, i, &v), TSR_SUCCESS);
    return v;
  }
  int64_t as_int(tsr_value v) {
    int64_t i = -1;
    EXPECT_EQ(tsr_get_int(vm, v, &i), TSR_SUCCESS) << last(vm);
    return i;
  }
  tsr_value global(const char* name) {
    tsr_value v{0};
    EXPECT_EQ(tsr_get_global(vm, name, &v), TSR_SUCCESS) << last(vm);
    return v;
  }
};

TEST(CApiVersion, TheLibraryIsTheHeadersVersion) {
  EXPECT_EQ(tsr_abi_version(), (uint32_t{TSR_ABI_MAJOR} << 16) | TSR_ABI_MINOR);
  EXPECT_STREQ(tsr_version_string(), "0.1.0");
  EXPECT_STREQ(tsr_status_name(TSR_SUCCESS), "TSR_SUCCESS");
  EXPECT_STREQ(tsr_status_name(TSR_EDEVICE), "TSR_EDEVICE");
  EXPECT_STREQ(tsr_status_name(static_cast<tsr_status>(99)), "TSR_UNKNOWN");
}

TEST(CApiVersion, AnIncompatibleHostIsRefusedAtCreation) {
  tsr_vm_options o;
  tsr_vm_options_init(&o);
  tsr_vm* vm = reinterpret_cast<tsr_vm*>(1);
  o.abi_major = TSR_ABI_MAJOR + 1;
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EVERSION);
  EXPECT_EQ(vm, nullptr);
  EXPECT_NE(last(nullptr).find("rebuild the host"), std::string::npos) << last(nullptr);
  tsr_vm_options_init(&o);
  o.abi_minor = TSR_ABI_MINOR + 1;  // built against a newer library than this one
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EVERSION);
  tsr_vm_options_init(&o);
  o.struct_size = 8;
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EVERSION);
  std::memset(&o, 0, sizeof o);  // never initialised: major 0 minor 0 but no struct size
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EVERSION);
}

TEST(CApiVM, CreateChecksItsOptions) {
  tsr_vm* vm = nullptr;
  EXPECT_EQ(tsr_vm_create(nullptr, nullptr), TSR_EINVAL);
  ASSERT_EQ(tsr_vm_create(nullptr, &vm), TSR_SUCCESS);  // NULL options: the defaults
  EXPECT_EQ(tsr_vm_destroy(vm), TSR_SUCCESS);
  tsr_vm_options o;
  tsr_vm_options_init(&o);
  const char* bad[] = {"nosuchparam=1"};
  o.jit_params = bad;
  o.n_jit_params = 1;
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EINVAL);
  EXPECT_NE(last(nullptr).find("nosuchparam"), std::string::npos) << last(nullptr);
  o.jit_params = nullptr;
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EINVAL);
  tsr_vm_options_init(&o);
  o.device = "tpu";
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EINVAL);
  EXPECT_NE(last(nullptr).find("tpu"), std::string::npos);
  tsr_vm_options_init(&o);
  o.max_depth = -5;
  EXPECT_EQ(tsr_vm_create(&o, &vm), TSR_EINVAL);
}

TEST(CApiVM, GpuWithoutAGpuIsADeviceError) {
  if (std::getenv("TESSERA_GPU_EMULATION")) GTEST_SKIP() << "the GPU emulation is on";
  tsr_vm_options o;
  tsr_vm_options_init(&o);
  o.device = "gpu";
  tsr_vm* vm = nullptr;
  const tsr_status st = tsr_vm_create(&o, &vm);
  if (st == TSR_SUCCESS) {
    tsr_vm_destroy(vm);
    GTEST_SKIP() << "this machine has a usable GPU";
  }
  EXPECT_EQ(st, TSR_EDEVICE) << last(nullptr);
}

TEST(CApiVM, ADestroyedVMIsRecognised) {
  tsr_vm* vm = nullptr;
  ASSERT_EQ(tsr_vm_create(nullptr, &vm), TSR_SUCCESS);
  ASSERT_EQ(tsr_vm_destroy(vm), TSR_SUCCESS);
  EXPECT_EQ(tsr_vm_destroy(vm), TSR_EINVAL);
  EXPECT_EQ(tsr_run_source(vm, "x", "1", 1), TSR_EINVAL);
  EXPECT_NE(last(vm).find("destroyed"), std::string::npos) << last(vm);
  EXPECT_STREQ(tsr_last_traceback(vm), "");
  tsr_value v;
  EXPECT_EQ(tsr_new_int(vm, 1, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_vm_destroy(nullptr), TSR_SUCCESS);
  EXPECT_EQ(tsr_run_source(nullptr, "x", "1", 1), TSR_EINVAL);
}

TEST(CApiRun, SourcesShareOneNamespaceAndPrintGoesToTheCallback) {
  TestVM t;
  ASSERT_EQ(t.run("let x = 40\nfn add(a, b) { return a + b }\n"), TSR_SUCCESS) << last(t.vm);
  ASSERT_EQ(t.run("x = add(x, 2)\nprint(x)\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "42\n");
  EXPECT_EQ(last(t.vm), "");
  // A later source rebinds a function; callers compiled earlier see it.
  ASSERT_EQ(t.run("fn twice() { return add(1, 1) }\n"), TSR_SUCCESS);
  ASSERT_EQ(t.run("fn add(a, b) { return a * b }\nprint(twice())\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "42\n1\n");
  EXPECT_EQ(tsr_run_source(t.vm, nullptr, "print(1)", 8), TSR_SUCCESS);  // name NULL: "<string>"
  EXPECT_EQ(tsr_run_source(t.vm, "n", nullptr, 3), TSR_EINVAL);
  EXPECT_EQ(tsr_run_source(t.vm, "n", nullptr, 0), TSR_SUCCESS);  // an empty source
}

TEST(CApiRun, ErrorsAreStatusesWithMessageAndTraceback) {
  TestVM t;
  EXPECT_EQ(t.run("let = 3\n"), TSR_ESYNTAX);
  EXPECT_NE(last(t.vm).find("test.tsb:1:5: syntax error"), std::string::npos) << last(t.vm);
  EXPECT_EQ(t.run("fn f(d) { return 1 // d }\nfn g() { return f(0) }\ng()\n"), TSR_ERUNTIME);
  EXPECT_EQ(last(t.vm), "division by zero");
  EXPECT_EQ(std::string(tsr_last_traceback(t.vm)),
            "  at <main> (test.tsb:3)\n  at g (test.tsb:2)\n  at f (test.tsb:1)\n");
  // The VM is still usable, its globals intact.
  EXPECT_EQ(t.run("print(f(2))\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "0\n");
  EXPECT_STREQ(tsr_last_traceback(t.vm), "");
}

TEST(CApiRun, RunFile) {
  TestVM t;
  EXPECT_EQ(tsr_run_file(t.vm, "/nonexistent/x.tsb"), TSR_ENOTFOUND);
  EXPECT_NE(last(t.vm).find("/nonexistent/x.tsb"), std::string::npos);
  EXPECT_EQ(tsr_run_file(t.vm, nullptr), TSR_EINVAL);
  const auto path = std::filesystem::temp_directory_path() / "tessera_c_api_run_file.tsb";
  std::ofstream(path) << "print(\"from a file\")\n";
  EXPECT_EQ(tsr_run_file(t.vm, path.c_str()), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "from a file\n");
  std::filesystem::remove(path);
  // A directory is an unreadable file, as for the CLI: never an empty program.
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(tsr_run_file(t.vm, dir.c_str()), TSR_EIO);
  EXPECT_EQ(last(t.vm), "cannot open '" + dir + "': Is a directory");
}

TEST(CApiValues, ScalarsAndStringsRoundTrip) {
  TestVM t;
  tsr_value v;
  tsr_type ty;
  ASSERT_EQ(tsr_new_nil(t.vm, &v), TSR_SUCCESS);
  ASSERT_EQ(tsr_value_type(t.vm, v, &ty), TSR_SUCCESS);
  EXPECT_EQ(ty, TSR_TYPE_NIL);
  EXPECT_EQ(tsr_value_free(t.vm, v), TSR_SUCCESS);

  ASSERT_EQ(tsr_new_bool(t.vm, 7, &v), TSR_SUCCESS);
  int b = 0;
  EXPECT_EQ(tsr_get_bool(t.vm, v, &b), TSR_SUCCESS);
  EXPECT_EQ(b, 1);
  int64_t i;
  EXPECT_EQ(tsr_get_int(t.vm, v, &i), TSR_ETYPE);
  EXPECT_EQ(last(t.vm), "expected int, got bool");
  tsr_value_free(t.vm, v);

  v = t.integer(INT64_MIN);
  EXPECT_EQ(t.as_int(v), INT64_MIN);
  double f = 0;
  EXPECT_EQ(tsr_get_float(t.vm, v, &f), TSR_SUCCESS);  // an int reads as a float too
  EXPECT_EQ(tsr_get_bool(t.vm, v, &b), TSR_ETYPE);
  tsr_value_free(t.vm, v);

  ASSERT_EQ(tsr_new_float(t.vm, 2.5, &v), TSR_SUCCESS);
  EXPECT_EQ(tsr_get_float(t.vm, v, &f), TSR_SUCCESS);
  EXPECT_EQ(f, 2.5);
  EXPECT_EQ(tsr_get_int(t.vm, v, &i), TSR_ETYPE);
  tsr_value_free(t.vm, v);

  const char bytes[] = {'a', '\0', 'b'};
  ASSERT_EQ(tsr_new_str(t.vm, bytes, 3, &v), TSR_SUCCESS);
  const char* data;
  size_t len;
  ASSERT_EQ(tsr_get_str(t.vm, v, &data, &len), TSR_SUCCESS);
  EXPECT_EQ(std::string(data, len), std::string(bytes, 3));
  EXPECT_EQ(data[len], '\0');
  EXPECT_EQ(tsr_get_str(t.vm, v, nullptr, &len), TSR_EINVAL);
  tsr_value s;
  ASSERT_EQ(tsr_value_to_str(t.vm, t.integer(12), &s), TSR_SUCCESS);
  ASSERT_EQ(tsr_get_str(t.vm, s, &data, nullptr), TSR_SUCCESS);
  EXPECT_STREQ(data, "12");
  EXPECT_EQ(tsr_new_str(t.vm, nullptr, 2, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_new_int(t.vm, 1, nullptr), TSR_EINVAL);
}

TEST(CApiValues, BadHandlesAreRecognised) {
  TestVM a, b;
  tsr_value v = a.integer(5);
  int64_t i;
  EXPECT_EQ(tsr_get_int(b.vm, v, &i), TSR_EINVAL);  // another VM's handle
  EXPECT_NE(last(b.vm).find("another VM"), std::string::npos) << last(b.vm);
  tsr_value copy = v;
  ASSERT_EQ(tsr_value_free(a.vm, v), TSR_SUCCESS);
  EXPECT_EQ(tsr_value_free(a.vm, copy), TSR_EINVAL);  // freed twice
  EXPECT_EQ(tsr_get_int(a.vm, copy, &i), TSR_EINVAL);
  tsr_value reuse = a.integer(6);  // takes the freed slot
  EXPECT_EQ(tsr_get_int(a.vm, copy, &i), TSR_EINVAL);  // the stale handle does not name it
  EXPECT_EQ(a.as_int(reuse), 6);
  EXPECT_EQ(tsr_value_free(a.vm, tsr_value{0}), TSR_SUCCESS);
  EXPECT_EQ(tsr_get_int(a.vm, tsr_value{0}, &i), TSR_EINVAL);
  EXPECT_EQ(tsr_get_int(a.vm, tsr_value{0x1234567890ull}, &i), TSR_EINVAL);
  tsr_value dup;
  ASSERT_EQ(tsr_value_dup(a.vm, reuse, &dup), TSR_SUCCESS);
  tsr_value_free(a.vm, reuse);
  EXPECT_EQ(a.as_int(dup), 6);
  int64_t live = -1;
  ASSERT_EQ(tsr_stat(a.vm, "live_handles", &live), TSR_SUCCESS);
  EXPECT_EQ(live, 1);
}

TEST(CApiValues, ListsAreSharedWithTheScript) {
  TestVM t;
  tsr_value items[2] = {t.integer(1), t.integer(2)};
  tsr_value list, bad;
  ASSERT_EQ(tsr_new_list(t.vm, items, 2, &list), TSR_SUCCESS);
  EXPECT_EQ(tsr_new_list(t.vm, nullptr, 2, &bad), TSR_EINVAL);
  ASSERT_EQ(tsr_list_push(t.vm, list, t.integer(3)), TSR_SUCCESS);
  ASSERT_EQ(tsr_set_global(t.vm, "l", list), TSR_SUCCESS) << last(t.vm);
  ASSERT_EQ(t.run("push(l, len(l) + 1)\nl[0] = 10\n"), TSR_SUCCESS) << last(t.vm);
  size_t n = 0;
  ASSERT_EQ(tsr_list_len(t.vm, list, &n), TSR_SUCCESS);
  EXPECT_EQ(n, 4u);  // the script's push is the host's list's
  tsr_value first;
  ASSERT_EQ(tsr_list_get(t.vm, list, 0, &first), TSR_SUCCESS);
  EXPECT_EQ(t.as_int(first), 10);
  tsr_value missing;
  EXPECT_EQ(tsr_list_get(t.vm, list, 4, &missing), TSR_ERANGE);
  EXPECT_EQ(tsr_list_set(t.vm, list, 9, first), TSR_ERANGE);
  ASSERT_EQ(tsr_list_set(t.vm, list, 1, t.integer(20)), TSR_SUCCESS);
  ASSERT_EQ(t.run("print(l)\n"), TSR_SUCCESS);
  EXPECT_EQ(t.out, "[10, 20, 3, 4]\n");
  EXPECT_EQ(tsr_list_len(t.vm, t.integer(1), &n), TSR_ETYPE);
  EXPECT_EQ(tsr_list_push(t.vm, list, tsr_value{0}), TSR_EINVAL);
}

TEST(CApiGlobals, LookUpSetAndCall) {
  TestVM t;
  ASSERT_EQ(t.run("let later = 1\nfn add3(a, b, c) { return a + b + c }\n"), TSR_SUCCESS);
  tsr_value v;
  EXPECT_EQ(tsr_get_global(t.vm, "nothere", &v), TSR_ENOTFOUND);
  EXPECT_EQ(last(t.vm), "name 'nothere' is not defined");
  EXPECT_EQ(tsr_get_global(t.vm, nullptr, &v), TSR_EINVAL);
  tsr_value len_fn = t.global("len");  // a built-in
  tsr_type ty;
  ASSERT_EQ(tsr_value_type(t.vm, len_fn, &ty), TSR_SUCCESS);
  EXPECT_EQ(ty, TSR_TYPE_FUNCTION);
  tsr_value s, r;
  tsr_new_str(t.vm, "abcd", 4, &s);
  ASSERT_EQ(tsr_call(t.vm, len_fn, &s, 1, &r), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.as_int(r), 4);

  tsr_value args[3] = {t.integer(1), t.integer(2), t.integer(3)};
  ASSERT_EQ(tsr_call_global(t.vm, "add3", args, 3, &r), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.as_int(r), 6);
  EXPECT_EQ(tsr_call_global(t.vm, "add3", args, 2, &r), TSR_ERUNTIME);
  EXPECT_EQ(last(t.vm), "add3() takes 3 arguments (2 given)");
  EXPECT_EQ(tsr_call_global(t.vm, "nothere", args, 3, &r), TSR_ENOTFOUND);
  EXPECT_EQ(tsr_call(t.vm, args[0], args, 0, &r), TSR_ETYPE);
  EXPECT_EQ(tsr_call(t.vm, tsr_value{0}, args, 0, &r), TSR_EINVAL);
  EXPECT_EQ(tsr_call_global(t.vm, "add3", nullptr, 3, &r), TSR_EINVAL);
  EXPECT_EQ(tsr_call_global(t.vm, "add3", args, 3, nullptr), TSR_SUCCESS);  // result not wanted

  ASSERT_EQ(tsr_set_global(t.vm, "later", t.integer(99)), TSR_SUCCESS);
  ASSERT_EQ(tsr_set_global(t.vm, "fresh", t.integer(7)), TSR_SUCCESS);
  ASSERT_EQ(t.run("print(later + fresh)\nfresh = 8\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "106\n");
  EXPECT_EQ(t.as_int(t.global("fresh")), 8);
  EXPECT_EQ(tsr_set_global(t.vm, "not a name", args[0]), TSR_EINVAL);
  // A keyword is no name a script can read: refused, as for the parser.
  for (const char* keyword : {"if", "nil", "while", "continue", "fn"}) {
    EXPECT_EQ(tsr_set_global(t.vm, keyword, args[0]), TSR_EINVAL) << keyword;
    EXPECT_EQ(last(t.vm), std::string("'") + keyword + "' is not a valid global name (it is a keyword)");
  }
  EXPECT_EQ(tsr_set_global(t.vm, "iffy", args[0]), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(tsr_set_global(t.vm, "x", tsr_value{0}), TSR_EINVAL);
}

TEST(CApiGlobals, ACallThatRaisesKeepsTheTraceback) {
  TestVM t;
  ASSERT_EQ(t.run("fn inner(x) { return x + \"s\" }\nfn outer(x) { return inner(x) }\n"), TSR_SUCCESS);
  tsr_value arg = t.integer(1), r{0};
  EXPECT_EQ(tsr_call_global(t.vm, "outer", &arg, 1, &r), TSR_ERUNTIME);
  EXPECT_EQ(r.id, 0u);
  EXPECT_NE(std::string(tsr_last_traceback(t.vm)).find("at inner (test.tsb:1)"), std::string::npos)
      << tsr_last_traceback(t.vm);
}

// Host functions: a counter (user data) and a function that raises.
struct Counter {
  int calls = 0;
};
tsr_status host_add(tsr_vm* vm, void* user, const tsr_value* args, size_t n, tsr_value* result) {
  ++static_cast<Counter*>(user)->calls;
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t x;
    if (tsr_status st = tsr_get_int(vm, args[i], &x)) return st;
    sum += x;
  }
  return tsr_new_int(vm, sum, result);
}
tsr_status host_fail(tsr_vm* vm, void*, const tsr_value*, size_t, tsr_value*) {
  return tsr_raise(vm, "the host says no");
}

TEST(CApiHostFunctions, ScriptsCallThemWithUserData) {
  TestVM t;
  Counter c;
  ASSERT_EQ(tsr_register_function(t.vm, "host_add", host_add, &c, 0, -1), TSR_SUCCESS);
  ASSERT_EQ(t.run("print(host_add(1, 2, 3))\nprint(host_add())\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "6\n0\n");
  EXPECT_EQ(c.calls, 2);
  // A wrong argument makes the host's status the script's error.
  EXPECT_EQ(t.run("host_add(1, \"x\")\n"), TSR_ERUNTIME);
  EXPECT_NE(last(t.vm).find("TSR_ETYPE"), std::string::npos) << last(t.vm);
  // The declared arity is checked before the host is called.
  ASSERT_EQ(tsr_register_function(t.vm, "two", host_add, &c, 2, 2), TSR_SUCCESS);
  const int before = c.calls;
  EXPECT_EQ(t.run("two(1)\n"), TSR_ERUNTIME);
  EXPECT_EQ(last(t.vm), "two() takes 2 arguments (1 given)");
  EXPECT_EQ(c.calls, before);
  // Registration checks its arguments.
  EXPECT_EQ(tsr_register_function(t.vm, "bad name", host_add, &c, 0, 1), TSR_EINVAL);
  EXPECT_EQ(tsr_register_function(t.vm, "return", host_add, &c, 0, 1), TSR_EINVAL);
  EXPECT_EQ(tsr_register_function(t.vm, "f", nullptr, &c, 0, 1), TSR_EINVAL);
  EXPECT_EQ(tsr_register_function(t.vm, "f", host_add, &c, 3, 1), TSR_EINVAL);
  EXPECT_EQ(tsr_register_function(t.vm, nullptr, host_add, &c, 0, 1), TSR_EINVAL);
}

TEST(CApiHostFunctions, ARaiseIsTheScriptsRuntimeErrorNamingTheHostFunction) {
  TestVM t;
  ASSERT_EQ(tsr_register_function(t.vm, "veto", host_fail, nullptr, 0, -1), TSR_SUCCESS);
  EXPECT_EQ(t.run("fn check(x) { veto(x) }\ncheck(1)\n"), TSR_ERUNTIME);
  EXPECT_EQ(last(t.vm), "the host says no");
  EXPECT_EQ(std::string(tsr_last_traceback(t.vm)),
            "  at <main> (test.tsb:2)\n  at check (test.tsb:1)\n  at veto (host function)\n");
}

// A host function whose status is none of the enum's (a C host may return
// any int), with a result it did not set.
tsr_status host_odd_status(tsr_vm*, void* user, const tsr_value*, size_t, tsr_value*) {
  const int raw = *static_cast<int*>(user);
  tsr_status st;
  std::memcpy(&st, &raw, sizeof st);
  return st;
}

TEST(CApiHostFunctions, AStatusOutsideTheEnumIsSaidToBeOne) {
  TestVM t;
  int raws[] = {42, -1, 12};
  for (int& raw : raws) {
    const std::string name = "odd" + std::to_string(&raw - raws);
    ASSERT_EQ(tsr_register_function(t.vm, name.c_str(), host_odd_status, &raw, 0, 0), TSR_SUCCESS);
    EXPECT_EQ(t.run(name + "()\n"), TSR_ERUNTIME);
    EXPECT_EQ(last(t.vm), "the host function returned status " + std::to_string(raw) +
                              ", which is not a tsr_status (TSR_SUCCESS or an error, 1 to 11)");
  }
}

tsr_status host_reenter(tsr_vm* vm, void* user, const tsr_value*, size_t, tsr_value* result) {
  *static_cast<tsr_status*>(user) = tsr_run_source(vm, "inner", "1", 1);
  tsr_value g;
  if (tsr_status st = tsr_get_global(vm, "outer_value", &g)) return st;  // reading is allowed
  *result = g;
  return TSR_SUCCESS;
}

TEST(CApiHostFunctions, AHostFunctionCannotRunCodeOfItsVM) {
  TestVM t;
  tsr_status inner = TSR_SUCCESS;
  ASSERT_EQ(tsr_register_function(t.vm, "reenter", host_reenter, &inner, 0, 0), TSR_SUCCESS);
  ASSERT_EQ(t.run("let outer_value = 5\nprint(reenter())\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(inner, TSR_EBUSY);
  EXPECT_EQ(t.out, "5\n");
}

// Returns an int on even calls and a float on odd ones: a compiled loop that
// expected an int exits, and the call must not be made twice.
tsr_status host_unstable(tsr_vm* vm, void* user, const tsr_value*, size_t, tsr_value* result) {
  int& calls = static_cast<Counter*>(user)->calls;
  ++calls;
  if (calls > 300 && calls % 7 == 0) return tsr_new_float(vm, 0.5, result);
  return tsr_new_int(vm, 1, result);
}

TEST(CApiHostFunctions, CompiledLoopsCallEachHostFunctionOncePerCall) {
  TestVM t({"hotloop=10"});
  Counter c;
  ASSERT_EQ(tsr_register_function(t.vm, "tick", host_unstable, &c, 0, 0), TSR_SUCCESS);
  ASSERT_EQ(t.run("let s = 0\nfor i in range(2000) { s = s + tick() }\nprint(s)\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(c.calls, 2000);
  int64_t traces = 0;
  ASSERT_EQ(tsr_stat(t.vm, "compiled_traces", &traces), TSR_SUCCESS);
  EXPECT_GT(traces, 0);
  // 2000 calls, those past 300 that are multiples of 7 gave 0.5.
  int halves = 0;
  for (int k = 301; k <= 2000; ++k) halves += k % 7 == 0;
  char expect[64];
  std::snprintf(expect, sizeof expect, "%.1f\n", (2000 - halves) + 0.5 * halves);
  EXPECT_EQ(t.out, expect);
}

tsr_status host_fail_late(tsr_vm* vm, void* user, const tsr_value*, size_t, tsr_value* result) {
  if (++static_cast<Counter*>(user)->calls == 500) return tsr_raise(vm, "late failure");
  return tsr_new_int(vm, 1, result);
}

TEST(CApiHostFunctions, ARaiseInsideACompiledLoopIsRaisedOnce) {
  TestVM t({"hotloop=10"});
  Counter c;
  ASSERT_EQ(tsr_register_function(t.vm, "tick", host_fail_late, &c, 0, 0), TSR_SUCCESS);
  EXPECT_EQ(t.run("let s = 0\nfor i in range(2000) { s = s + tick() }\n"), TSR_ERUNTIME);
  EXPECT_EQ(last(t.vm), "late failure");
  EXPECT_EQ(c.calls, 500);
  EXPECT_EQ(t.as_int(t.global("s")), 499);
}

TEST(CApiTensors, AWrappedBufferIsSharedBothWays) {
  TestVM t;
  std::vector<float> host(1000, 1.0f);
  bool released = false;
  const int64_t shape[] = {10, 100};
  tsr_value w;
  ASSERT_EQ(tsr_wrap_tensor(t.vm, TSR_F32, shape, 2, host.data(), [](void* r) { *static_cast<bool*>(r) = true; },
                            &released, &w),
            TSR_SUCCESS)
      << last(t.vm);
  void* data;
  size_t nbytes;
  ASSERT_EQ(tsr_tensor_data(t.vm, w, &data, &nbytes), TSR_SUCCESS);
  EXPECT_EQ(data, host.data());
  EXPECT_EQ(nbytes, 4000u);
  ASSERT_EQ(tsr_set_global(t.vm, "w", w), TSR_SUCCESS);
  ASSERT_EQ(t.run("w[3, 7] = 5.0\nw[0, 0] = w[3, 7] + 999.0\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(host[307], 5.0f);  // the script's write is the host's
  EXPECT_EQ(host[0], 1004.0f);
  host[999] = -2.0f;  // the host's write is the script's
  ASSERT_EQ(t.run("print(w[9, 99])\n"), TSR_SUCCESS);
  EXPECT_EQ(t.out, "-2.0\n");
  tsr_dtype dt;
  size_t rank;
  int64_t got[8];
  ASSERT_EQ(tsr_tensor_info(t.vm, w, &dt, &rank, got), TSR_SUCCESS);
  EXPECT_EQ(dt, TSR_F32);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(got[1], 100);
  int64_t copied = -1;
  ASSERT_EQ(tsr_stat(t.vm, "tensor_bytes_copied", &copied), TSR_SUCCESS);
  EXPECT_EQ(copied, 0);
  // The release comes when the last reference goes: the handle's and the global's.
  tsr_value_free(t.vm, w);
  EXPECT_FALSE(released);
  ASSERT_EQ(t.run("w = nil\n"), TSR_SUCCESS);
  EXPECT_TRUE(released);
}

TEST(CApiTensors, BadTensorsAreRefused) {
  TestVM t;
  const int64_t shape[] = {4};
  const int64_t negative[] = {-1};
  tsr_value v;
  float f[5];
  EXPECT_EQ(tsr_wrap_tensor(t.vm, TSR_F32, shape, 1, reinterpret_cast<char*>(f) + 1, nullptr, nullptr, &v),
            TSR_EINVAL);
  EXPECT_NE(last(t.vm).find("aligned"), std::string::npos);
  EXPECT_EQ(tsr_wrap_tensor(t.vm, TSR_F32, shape, 1, nullptr, nullptr, nullptr, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_new_tensor(t.vm, static_cast<tsr_dtype>(17), shape, 1, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_new_tensor(t.vm, TSR_F32, negative, 1, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_new_tensor(t.vm, TSR_F32, nullptr, 1, &v), TSR_EINVAL);
  EXPECT_EQ(tsr_new_tensor(t.vm, TSR_F32, shape, 9, &v), TSR_EINVAL);
  ASSERT_EQ(tsr_new_tensor(t.vm, TSR_I64, shape, 1, &v), TSR_SUCCESS);
  void* data;
  EXPECT_EQ(tsr_tensor_data(t.vm, t.integer(3), &data, nullptr), TSR_ETYPE);
  EXPECT_EQ(tsr_tensor_data(t.vm, v, nullptr, nullptr), TSR_EINVAL);
  ASSERT_EQ(tsr_tensor_data(t.vm, v, &data, nullptr), TSR_SUCCESS);
  EXPECT_EQ(static_cast<int64_t*>(data)[3], 0);  // zero-filled
}

// A DLPack tensor over a std::vector that records its deleter call.
struct Exported {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  bool* deleted;
};
DLManagedTensor* make_dlpack(std::vector<float> data, std::vector<int64_t> shape, std::vector<int64_t> strides,
                             bool* deleted) {
  auto* e = new Exported{std::move(data), std::move(shape), std::move(strides), {}, deleted};
  DLTensor& t = e->managed.dl_tensor;
  t.data = e->data.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = e->shape.data();
  t.strides = e->strides.empty() ? nullptr : e->strides.data();
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) {
    auto* ex = static_cast<Exported*>(self->manager_ctx);
    *ex->deleted = true;
    delete ex;
  };
  return &e->managed;
}

TEST(CApiDLPack, ImportIsZeroCopyAndTheDeleterRunsWhenTheTensorGoes) {
  TestVM t;
  bool deleted = false;
  DLManagedTensor* m = make_dlpack(std::vector<float>(6, 2.0f), {2, 3}, {3, 1}, &deleted);
  float* storage = static_cast<float*>(m->dl_tensor.data);
  tsr_value v;
  ASSERT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_SUCCESS) << last(t.vm);
  ASSERT_EQ(tsr_set_global(t.vm, "x", v), TSR_SUCCESS);
  ASSERT_EQ(t.run("x[1, 2] = 9.0\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(storage[5], 9.0f);
  int64_t copied = -1;
  tsr_stat(t.vm, "tensor_bytes_copied", &copied);
  EXPECT_EQ(copied, 0);
  tsr_value_free(t.vm, v);
  EXPECT_FALSE(deleted);
  ASSERT_EQ(t.run("x = nil\n"), TSR_SUCCESS);
  EXPECT_TRUE(deleted);
}

TEST(CApiDLPack, StridedTensorsAreCopiedAndCounted) {
  TestVM t;
  bool deleted = false;
  // A 2x3 view of a 3x2 buffer (transposed): column-major strides.
  DLManagedTensor* m = make_dlpack({0, 1, 2, 3, 4, 5}, {2, 3}, {1, 2}, &deleted);
  tsr_value v;
  ASSERT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_SUCCESS) << last(t.vm);
  EXPECT_TRUE(deleted);  // copied, so given back at once
  ASSERT_EQ(tsr_set_global(t.vm, "x", v), TSR_SUCCESS);
  ASSERT_EQ(t.run("print(x[0, 1], x[1, 0])\n"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(t.out, "2.0 1.0\n");
  int64_t copied = 0;
  tsr_stat(t.vm, "tensor_bytes_copied", &copied);
  EXPECT_EQ(copied, 24);
}

TEST(CApiDLPack, RefusedTensorsStayTheCallers) {
  TestVM t;
  bool deleted = false;
  DLManagedTensor* m = make_dlpack({1, 2}, {2}, {}, &deleted);
  tsr_value v;
  m->dl_tensor.dtype = {kDLFloat, 64, 1};
  EXPECT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_ETYPE);
  EXPECT_NE(last(t.vm).find("not a Tessera dtype"), std::string::npos);
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.device = {kDLCUDA, 0};
  EXPECT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_EINVAL);
  EXPECT_FALSE(deleted);
  EXPECT_EQ(tsr_tensor_from_dlpack(t.vm, nullptr, &v), TSR_EINVAL);
  m->deleter(m);
  EXPECT_TRUE(deleted);
}

// 8-bit unsigned data (and DLPack 0.8's bool code) are bools by value only:
// bytes of 0 and 1 import, any other byte is refused and stays the caller's.
TEST(CApiDLPack, EightBitUnsignedIsABoolOnlyByValue) {
  TestVM t;
  for (uint8_t code : {uint8_t{kDLUInt}, uint8_t{6}}) {
    for (bool valid : {true, false}) {
      bool deleted = false;
      DLManagedTensor* m = make_dlpack(std::vector<float>(2, 0.0f), {8}, {}, &deleted);
      const uint8_t bytes[8] = {0, 1, 1, 0, 1, 0, 0, static_cast<uint8_t>(valid ? 1 : 255)};
      std::memcpy(m->dl_tensor.data, bytes, sizeof bytes);
      m->dl_tensor.dtype = {code, 8, 1};
      tsr_value v{0};
      if (valid) {
        ASSERT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_SUCCESS) << last(t.vm);
        ASSERT_EQ(tsr_set_global(t.vm, "flags", v), TSR_SUCCESS);
        t.out.clear();
        ASSERT_EQ(t.run("print(item(sum(cast(flags, i32))))\nflags = nil\n"), TSR_SUCCESS) << last(t.vm);
        EXPECT_EQ(t.out, "4\n");
        tsr_value_free(t.vm, v);
        EXPECT_TRUE(deleted);
      } else {
        EXPECT_EQ(tsr_tensor_from_dlpack(t.vm, m, &v), TSR_ETYPE);
        EXPECT_NE(last(t.vm).find("element 7 is 255"), std::string::npos) << last(t.vm);
        EXPECT_NE(last(t.vm).find("f32 f16 bf16 i32 i64 bool"), std::string::npos) << last(t.vm);
        EXPECT_FALSE(deleted);
        m->deleter(m);
      }
    }
  }
}

TEST(CApiDLPack, ExportSharesStorageAndOutlivesTheVM) {
  DLManagedTensor* out = nullptr;
  {
    TestVM t;
    ASSERT_EQ(t.run("let z = zeros([4], f32)\n"), TSR_SUCCESS) << last(t.vm);
    tsr_value z = t.global("z");
    DLManagedTensor* none = nullptr;
    EXPECT_EQ(tsr_tensor_to_dlpack(t.vm, t.integer(1), &none), TSR_ETYPE);
    ASSERT_EQ(tsr_tensor_to_dlpack(t.vm, z, &out), TSR_SUCCESS);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->dl_tensor.ndim, 1);
    EXPECT_EQ(out->dl_tensor.shape[0], 4);
    EXPECT_EQ(out->dl_tensor.dtype.bits, 32);
    static_cast<float*>(out->dl_tensor.data)[2] = 7.0f;  // the consumer's write
    ASSERT_EQ(t.run("print(z[2])\nz[1] = 3.0\n"), TSR_SUCCESS);
    EXPECT_EQ(t.out, "7.0\n");
    EXPECT_EQ(static_cast<float*>(out->dl_tensor.data)[1], 3.0f);  // the script's
  }
  // The VM is gone; the exported storage is still valid until the deleter.
  EXPECT_EQ(static_cast<float*>(out->dl_tensor.data)[1], 3.0f);
  out->deleter(out);
}

TEST(CApiJit, ParametersBeforeTheFirstRunStatsAfter) {
  TestVM t;
  tsr_value early;
  ASSERT_EQ(tsr_stats(t.vm, TSR_STATS_TEXT, &early), TSR_SUCCESS);  // reading does not fix the parameters
  EXPECT_EQ(tsr_set_jit_param(t.vm, "hotloop", "5"), TSR_SUCCESS) << last(t.vm);
  EXPECT_EQ(tsr_set_jit_param(t.vm, "hotloop", "many"), TSR_EINVAL);
  EXPECT_EQ(tsr_set_jit_param(t.vm, "nosuch", "1"), TSR_EINVAL);
  EXPECT_EQ(tsr_set_jit_param(t.vm, nullptr, "1"), TSR_EINVAL);
  ASSERT_EQ(t.run("let s = 0\nfor i in range(100) { s = s + i }\n"), TSR_SUCCESS);
  EXPECT_EQ(tsr_set_jit_param(t.vm, "hotloop", "7"), TSR_EBUSY);
  EXPECT_EQ(tsr_enable_dump(t.vm, "/tmp/x"), TSR_EBUSY);
  tsr_value text, json;
  ASSERT_EQ(tsr_stats(t.vm, TSR_STATS_TEXT, &text), TSR_SUCCESS) << last(t.vm);
  const char* s;
  tsr_get_str(t.vm, text, &s, nullptr);
  EXPECT_NE(std::string(s).find("hotloop=5"), std::string::npos) << s;
  EXPECT_NE(std::string(s).find("embedding:"), std::string::npos) << s;
  ASSERT_EQ(tsr_stats(t.vm, TSR_STATS_JSON, &json), TSR_SUCCESS) << last(t.vm);
  tsr_get_str(t.vm, json, &s, nullptr);
  const auto j = nlohmann::json::parse(s);
  EXPECT_GE(j.at("run").at("traces").at("compiled").get<int>(), 1) << s;
  EXPECT_EQ(j.at("embedding").at("tensor_bytes_copied").get<int>(), 0);
  EXPECT_EQ(tsr_stats(t.vm, static_cast<tsr_stats_format>(5), &json), TSR_EINVAL);
  int64_t n;
  EXPECT_EQ(tsr_stat(t.vm, "nosuch", &n), TSR_ENOTFOUND);
  EXPECT_EQ(tsr_stat(t.vm, "traces", nullptr), TSR_EINVAL);
}

// The report names each source by the name the host gave it, and its wall
// time covers the calls the host made after the run.
TEST(CApiJit, StatsNameTheHostsSourcesAndTheirWallTimeCoversTheCalls) {
  TestVM t({"hotloop=5", "hotcall=5"});
  const std::string loop = "let s = 0\nfor i in range(100) { s = s + i }\n";
  ASSERT_EQ(tsr_run_source(t.vm, "model.tsb", loop.data(), loop.size()), TSR_SUCCESS) << last(t.vm);
  const std::string fn = "\nfn slow(n) {\n  let s = 0\n  for i in range(n) { s = s + i % 7 }\n  return s\n}\n";
  ASSERT_EQ(tsr_run_source(t.vm, "helpers.tsb", fn.data(), fn.size()), TSR_SUCCESS) << last(t.vm);
  tsr_value f = t.global("slow");
  const auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) {
    tsr_value n = t.integer(200000), r;
    ASSERT_EQ(tsr_call(t.vm, f, &n, 1, &r), TSR_SUCCESS) << last(t.vm);
    tsr_value_free(t.vm, r);
    tsr_value_free(t.vm, n);
  }
  const double calls_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
  tsr_value text;
  ASSERT_EQ(tsr_stats(t.vm, TSR_STATS_TEXT, &text), TSR_SUCCESS) << last(t.vm);
  const char* s;
  tsr_get_str(t.vm, text, &s, nullptr);
  const std::string report = s;
  EXPECT_NE(report.find("model.tsb:2  in <main>"), std::string::npos) << report;
  EXPECT_NE(report.find("helpers.tsb:4  in slow"), std::string::npos) << report;
  EXPECT_NE(report.find("helpers.tsb:2  slow"), std::string::npos) << report;  // the hot function
  EXPECT_EQ(report.find("<embedded>"), std::string::npos) << report;
  const size_t at = report.find("wall time: ");
  ASSERT_NE(at, std::string::npos) << report;
  EXPECT_GE(std::stod(report.substr(at + 11)), calls_ms) << report;
  EXPECT_NE(report.find("the host's runs and 40 calls"), std::string::npos) << report;
}

TEST(CApiJit, DumpsGoToTheDirectory) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_c_api_dump";
  std::filesystem::remove_all(dir);
  {
    TestVM t({"hotloop=5"});
    ASSERT_EQ(tsr_enable_dump(t.vm, dir.c_str()), TSR_SUCCESS) << last(t.vm);
    ASSERT_EQ(t.run("let s = 0\nfor i in range(100) { s = s + i }\n"), TSR_SUCCESS);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "events.jsonl"));
  bool has_ir = false;
  for (const auto& e : std::filesystem::directory_iterator(dir)) has_ir |= e.path().extension() == ".ir";
  EXPECT_TRUE(has_ir);
  std::filesystem::remove_all(dir);
  TestVM t;
  EXPECT_EQ(tsr_enable_dump(t.vm, "/proc/self/status/x"), TSR_EIO);
  // The same plain words as the CLI's --dump: what is in the way.
  EXPECT_NE(std::string(tsr_last_error(t.vm)).find("dump directory /proc/self/status/x: cannot make this directory: "
                                                   "/proc/self/status is a file, not a directory"),
            std::string::npos)
      << tsr_last_error(t.vm);
  EXPECT_EQ(tsr_enable_dump(t.vm, nullptr), TSR_EINVAL);
}

TEST(CApiJit, AHotFunctionCalledFromTheHostIsCompiled) {
  TestVM t({"hotcall=20"});
  ASSERT_EQ(t.run("fn axpy(a, x, y) { return a * x + y }\n"), TSR_SUCCESS);
  tsr_value f = t.global("axpy");
  double acc = 0;
  for (int i = 0; i < 200; ++i) {
    tsr_value args[3], r;
    tsr_new_float(t.vm, 2.0, &args[0]);
    tsr_new_float(t.vm, static_cast<double>(i), &args[1]);
    tsr_new_float(t.vm, 1.0, &args[2]);
    ASSERT_EQ(tsr_call(t.vm, f, args, 3, &r), TSR_SUCCESS) << last(t.vm);
    double x;
    ASSERT_EQ(tsr_get_float(t.vm, r, &x), TSR_SUCCESS);
    acc += x;
    for (tsr_value a : args) tsr_value_free(t.vm, a);
    tsr_value_free(t.vm, r);
  }
  EXPECT_EQ(acc, 2.0 * (199 * 200 / 2) + 200);
  int64_t compiled = 0, calls = 0, live = -1;
  tsr_stat(t.vm, "compiled_traces", &compiled);
  tsr_stat(t.vm, "host_calls", &calls);
  tsr_stat(t.vm, "live_handles", &live);
  EXPECT_GE(compiled, 1);
  EXPECT_EQ(calls, 200);
  EXPECT_EQ(live, 1);  // f
}

// A function trace that a host's call runs to its RET returns to the host
// without an exit (no exit counted, no side trace tried), with the result,
// an object included, and the callee's registers released; a call that
// leaves the trace early (another argument type) still gives the
// interpreter's result.
TEST(CApiJit, AFunctionTraceReturnsToTheHostWithoutAnExit) {
  TestVM t({"hotcall=5", "hotexit=1"});
  ASSERT_EQ(t.run("fn pair(x) { let l = [x, x * 2]\n return l }\n"
                  "fn twice(x) { return x * 2 + 1 }\n"),
            TSR_SUCCESS);
  tsr_value pair = t.global("pair"), twice = t.global("twice");
  for (int i = 0; i < 100; ++i) {
    tsr_value a, r;
    tsr_new_int(t.vm, i, &a);
    ASSERT_EQ(tsr_call(t.vm, twice, &a, 1, &r), TSR_SUCCESS) << last(t.vm);
    int64_t x = 0;
    ASSERT_EQ(tsr_get_int(t.vm, r, &x), TSR_SUCCESS);
    EXPECT_EQ(x, 2 * i + 1);
    tsr_value_free(t.vm, r);
    ASSERT_EQ(tsr_call(t.vm, pair, &a, 1, &r), TSR_SUCCESS) << last(t.vm);
    tsr_value second;
    ASSERT_EQ(tsr_list_get(t.vm, r, 1, &second), TSR_SUCCESS) << last(t.vm);
    ASSERT_EQ(tsr_get_int(t.vm, second, &x), TSR_SUCCESS);
    EXPECT_EQ(x, 2 * i);
    for (tsr_value v : {a, r, second}) tsr_value_free(t.vm, v);
  }
  int64_t compiled = 0, exits = -1;
  tsr_stat(t.vm, "compiled_traces", &compiled);
  tsr_stat(t.vm, "trace_exits", &exits);
  EXPECT_GE(compiled, 2);
  EXPECT_EQ(exits, 0);
  // A float: the trace's entry guard fails, the interpreter runs the call.
  tsr_value a, r;
  tsr_new_float(t.vm, 1.5, &a);
  ASSERT_EQ(tsr_call(t.vm, twice, &a, 1, &r), TSR_SUCCESS) << last(t.vm);
  double y = 0;
  ASSERT_EQ(tsr_get_float(t.vm, r, &y), TSR_SUCCESS);
  EXPECT_EQ(y, 4.0);
  tsr_stat(t.vm, "trace_exits", &exits);
  EXPECT_GE(exits, 1);
  for (tsr_value v : {a, r}) tsr_value_free(t.vm, v);
}

// Two VMs on two threads at once, each a hot loop, with different JIT
// parameters (one interpreted): neither sees the other.
TEST(CApiThreads, TwoVMsRunHotLoopsAtOnce) {
  auto work = [](std::vector<const char*> params, int jit, int64_t* result, std::string* error) {
    TestVM t(params, jit);
    const std::string src =
        "fn collatz(n) { let steps = 0\n while n != 1 { if n % 2 == 0 { n = n // 2 } else { n = 3 * n + 1 }\n"
        " steps = steps + 1 }\n return steps }\n"
        "let total = 0\nfor i in range(1, 3000) { total = total + collatz(i) }\n";
    if (t.run(src) != TSR_SUCCESS) *error = last(t.vm);
    tsr_value v;
    if (tsr_get_global(t.vm, "total", &v) == TSR_SUCCESS) tsr_get_int(t.vm, v, result);
  };
  int64_t a = 0, b = 0, c = 0;
  std::string ea, eb, ec;
  std::thread ta(work, std::vector<const char*>{"hotloop=7", "tier=1"}, 1, &a, &ea);
  std::thread tb(work, std::vector<const char*>{"hotloop=50", "tier=2"}, 1, &b, &eb);
  std::thread tc(work, std::vector<const char*>{}, 0, &c, &ec);
  ta.join();
  tb.join();
  tc.join();
  EXPECT_EQ(ea, "");
  EXPECT_EQ(eb, "");
  EXPECT_EQ(ec, "");
  EXPECT_GT(c, 0);
  EXPECT_EQ(a, c);
  EXPECT_EQ(b, c);
}

}  // namespace
