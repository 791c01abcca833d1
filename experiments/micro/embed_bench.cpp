// What the embedding API costs a host (include/tessera/tessera.h, through
// libtessera.so as a host links it):
//  - a host→script call of a small function, compiled (a function trace)
//    and, for comparison, interpreted (jit off), and of a host function from
//    a compiled script loop (script→host);
//  - passing a 1M-element f32 tensor in and out: wrapped host memory, and a
//    DLPack import and export, with the bytes the VM copied as a counter
//    (tsr_stat "tensor_bytes_copied").
// experiments/harness/run_embed_bench.py runs it and writes the report.
#include <benchmark/benchmark.h>
#include <dlpack/dlpack.h>
#include <tessera/tessera.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(tsr_vm* vm, tsr_status st, const char* what) {
  if (st != TSR_SUCCESS) {
    std::fprintf(stderr, "%s: %s: %s\n", what, tsr_status_name(st), tsr_last_error(vm));
    std::exit(1);
  }
}

tsr_vm* make_vm(bool jit) {
  tsr_vm_options o;
  tsr_vm_options_init(&o);
  o.jit = jit ? 1 : 0;
  tsr_vm* vm = nullptr;
  check(nullptr, tsr_vm_create(&o, &vm), "tsr_vm_create");
  return vm;
}

void run(tsr_vm* vm, const std::string& src) { check(vm, tsr_run_source(vm, "bench.tsb", src.data(), src.size()), "run"); }

// f(x) = x * 2 + 1 called with an int; the handle of the result is freed
// each time, as a host that reads it would.
void BM_HostCall(benchmark::State& state) {
  const bool jit = state.range(0) != 0;
  tsr_vm* vm = make_vm(jit);
  run(vm, "fn f(x) { return x * 2 + 1 }\n");
  tsr_value f, arg, r;
  check(vm, tsr_get_global(vm, "f", &f), "f");
  check(vm, tsr_new_int(vm, 20, &arg), "arg");
  for (int i = 0; i < 10000; ++i) {  // warm up: the function trace is compiled
    check(vm, tsr_call(vm, f, &arg, 1, &r), "call");
    tsr_value_free(vm, r);
  }
  for (auto _ : state) {
    tsr_call(vm, f, &arg, 1, &r);
    tsr_value_free(vm, r);
  }
  int64_t traces = 0;
  tsr_stat(vm, "compiled_traces", &traces);
  state.counters["compiled_traces"] = static_cast<double>(traces);
  state.SetLabel(jit ? "jit on" : "jit off");
  tsr_vm_destroy(vm);
}
BENCHMARK(BM_HostCall)->Arg(1)->Arg(0);

tsr_status host_inc(tsr_vm* vm, void*, const tsr_value* args, size_t, tsr_value* result) {
  int64_t x;
  if (tsr_status st = tsr_get_int(vm, args[0], &x)) return st;
  return tsr_new_int(vm, x + 1, result);
}

// A compiled script loop calling a host function: the cost per call.
void BM_ScriptCallsHost(benchmark::State& state) {
  tsr_vm* vm = make_vm(true);
  check(vm, tsr_register_function(vm, "inc", host_inc, nullptr, 1, 1), "register");
  run(vm, "fn loop(n) { let s = 0\n for i in range(n) { s = inc(s) }\n return s }\n");
  tsr_value f, n, r;
  check(vm, tsr_get_global(vm, "loop", &f), "loop");
  check(vm, tsr_new_int(vm, 100000, &n), "n");
  for (auto _ : state) {
    check(vm, tsr_call(vm, f, &n, 1, &r), "call");
    tsr_value_free(vm, r);
  }
  state.SetItemsProcessed(state.iterations() * 100000);
  tsr_vm_destroy(vm);
}
BENCHMARK(BM_ScriptCallsHost)->Unit(benchmark::kMillisecond);

constexpr int64_t kElems = 1 << 20;

// A host buffer wrapped as a tensor, passed to a script function that
// writes one element and returns it, whose storage the host reads back.
void BM_TensorInOut(benchmark::State& state) {
  tsr_vm* vm = make_vm(true);
  run(vm, "fn touch(t) { t[0] = t[0] + 1.0\n return t }\n");
  std::vector<float> host(kElems, 0.0f);
  tsr_value f;
  check(vm, tsr_get_global(vm, "touch", &f), "touch");
  const int64_t shape[] = {kElems};
  for (auto _ : state) {
    tsr_value t, r;
    check(vm, tsr_wrap_tensor(vm, TSR_F32, shape, 1, host.data(), nullptr, nullptr, &t), "wrap");
    check(vm, tsr_call(vm, f, &t, 1, &r), "call");
    void* data;
    check(vm, tsr_tensor_data(vm, r, &data, nullptr), "data");
    benchmark::DoNotOptimize(data);
    if (data != host.data()) state.SkipWithError("the returned tensor is not the host's buffer");
    tsr_value_free(vm, t);
    tsr_value_free(vm, r);
  }
  int64_t copied = -1;
  tsr_stat(vm, "tensor_bytes_copied", &copied);
  state.counters["bytes_copied"] = static_cast<double>(copied);
  state.counters["tensor_bytes"] = static_cast<double>(kElems * 4);
  if (host[0] != static_cast<float>(state.iterations())) state.SkipWithError("the script's writes did not reach the host");
  tsr_vm_destroy(vm);
}
BENCHMARK(BM_TensorInOut);

// The same through DLPack: an import (taking over a producer's tensor) and
// an export of the result (the consumer's deleter call included).
void BM_DLPackInOut(benchmark::State& state) {
  tsr_vm* vm = make_vm(true);
  run(vm, "fn touch(t) { t[0] = t[0] + 1.0\n return t }\n");
  std::vector<float> host(kElems, 0.0f);
  int64_t shape[] = {kElems};
  tsr_value f;
  check(vm, tsr_get_global(vm, "touch", &f), "touch");
  for (auto _ : state) {
    DLManagedTensor in{};
    in.dl_tensor.data = host.data();
    in.dl_tensor.device = {kDLCPU, 0};
    in.dl_tensor.ndim = 1;
    in.dl_tensor.dtype = {kDLFloat, 32, 1};
    in.dl_tensor.shape = shape;
    tsr_value t, r;
    check(vm, tsr_tensor_from_dlpack(vm, &in, &t), "import");
    check(vm, tsr_call(vm, f, &t, 1, &r), "call");
    DLManagedTensor* out = nullptr;
    check(vm, tsr_tensor_to_dlpack(vm, r, &out), "export");
    if (out->dl_tensor.data != host.data()) state.SkipWithError("the export is not the producer's buffer");
    tsr_value_free(vm, t);
    tsr_value_free(vm, r);
    out->deleter(out);
  }
  int64_t copied = -1;
  tsr_stat(vm, "tensor_bytes_copied", &copied);
  state.counters["bytes_copied"] = static_cast<double>(copied);
  state.counters["tensor_bytes"] = static_cast<double>(kElems * 4);
  tsr_vm_destroy(vm);
}
BENCHMARK(BM_DLPackInOut);

}  // namespace

BENCHMARK_MAIN();
