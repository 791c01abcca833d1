// Plain NCCL all-reduces, called as nccl-tests' all_reduce_perf calls them:
// the baseline against which experiments/harness/run_nccl_bench.py sets
// Tessera's all_reduce of tensors the GPU holds (a benchmark, never a test).
//
//   mpirun -np N nccl_allreduce_bench [--sizes B,B,...] [--calls K] [--reps R] [--warmup W] [--json FILE]
//   nccl_allreduce_bench ...                      (no mpirun: one rank)
//
// One GPU per rank, the one device selection gives the rank (its local
// rank's, as tessera-vm's); libnccl loaded at run time as tessera-vm loads
// it (TESSERA_NCCL_LIBRARY, else libnccl.so.2 ...), and so is MPI, used only
// to bootstrap, as nccl-tests does: rank 0's ncclUniqueId broadcast, a
// barrier before each size, the slowest rank's times gathered. Without
// mpirun there is one rank and no MPI.
//
// Per size (f32 sum, out of place, buffers made once): W warm-up
// repetitions of K calls, the result checked element by element; then R repetitions, each K calls
// enqueued back to back on one stream and one wait (polling an event) for
// the last, timed on the host clock (nccl-tests' -n K with its default
// host timing). A call's time is the repetition's over K, the slowest
// rank's; per size the median over the repetitions, algorithm bandwidth =
// bytes / time and bus bandwidth = algbw * 2(n-1)/n (0 for one rank).
//
// On the host emulation (TESSERA_GPU_EMULATION=1 and --device=gpu's
// selection) with the NCCL test double (tests/runtime/comm/nccl_double.cpp)
// its figures mean nothing; it runs there so that CI checks the benchmark.
// The double insists on the ordering Tessera's transport gives each
// collective (its stream waits for the kernels' stream first), so only
// there each call is preceded by that wait.
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/micro/allreduce_pattern.h"
#include "runtime/comm/mpi_library.h"
#include "runtime/comm/nccl_library.h"
#include "runtime/comm/process_world.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/emulated_backend.h"
#ifndef TESSERA_NO_CUDA_HEADERS
#include "runtime/device/cuda_backend.h"
#endif

namespace {

using namespace tessera;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<size_t> sizes{size_t{1} << 10, size_t{1} << 20, size_t{16} << 20, size_t{256} << 20};
  int calls = 20, reps = 10, warmup = 5;
  std::string json_path;  // "" = stdout
};

void usage(std::ostream& os) {
  os << "usage: [mpirun -np N] nccl_allreduce_bench [--sizes B,B,...] [--calls K] [--reps R] [--warmup W]\n"
        "       [--json FILE]\n"
        "  sizes in bytes (f32 elements: multiples of 4); default 1 KB, 1 MB, 16 MB, 256 MB; K calls per\n"
        "  repetition (default 20), R timed repetitions (10) after W warm-up ones (5)\n";
}

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const size_t b = std::stoull(text.substr(at, comma - at));
    if (b < 4 || b % 4) throw std::invalid_argument("--sizes: " + std::to_string(b) + " is not a multiple of 4 bytes");
    out.push_back(b);
    at = comma + 1;
  }
  return out;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(std::cout);
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--sizes") o.sizes = parse_sizes(v);
    else if (a == "--calls") o.calls = std::stoi(v);
    else if (a == "--reps") o.reps = std::stoi(v);
    else if (a == "--warmup") o.warmup = std::stoi(v);
    else if (a == "--json") o.json_path = v;
    else throw std::invalid_argument("unknown option " + a);
  }
  if (o.calls < 1 || o.reps < 1 || o.warmup < 1) throw std::invalid_argument("--calls, --reps and --warmup must be >= 1");
  return o;
}

// MPI for the bootstrap only (none without mpirun).
struct Bootstrap {
  const comm::MpiLibrary* mpi = nullptr;
  int rank = 0, size = 1;

  Bootstrap() {
    const auto ranks = comm::launcher_ranks();
    if (!ranks) return;
    mpi = &comm::MpiLibrary::get();
    if (!mpi->available()) throw std::runtime_error("under mpirun, but MPI cannot be used: " + mpi->why_unavailable());
    int provided = 0;
    mpi->check(mpi->api().MPI_Init_thread(nullptr, nullptr, comm::kMpiThreadSerialized, &provided), "MPI_Init_thread");
    mpi->check(mpi->api().MPI_Comm_rank(mpi->comm_world, &rank), "MPI_Comm_rank");
    mpi->check(mpi->api().MPI_Comm_size(mpi->comm_world, &size), "MPI_Comm_size");
  }
  // After an error the process exits without finalizing, and mpirun ends the other ranks
  // (MPI_Finalize would wait for them).
  ~Bootstrap() {
    if (mpi && std::uncaught_exceptions() == 0) mpi->api().MPI_Finalize();
  }
  void broadcast(void* p, int bytes) const {
    if (mpi) mpi->check(mpi->api().MPI_Bcast(p, bytes, mpi->type_byte, 0, mpi->comm_world), "MPI_Bcast");
  }
  // A barrier (an all-reduce of nothing much).
  void barrier() const { slowest(0); }
  // The largest of every rank's `x`.
  int64_t slowest(int64_t x) const {
    int64_t out = x;
    if (mpi) mpi->check(mpi->api().MPI_Allreduce(&x, &out, 1, mpi->type_int64, mpi->op_max, mpi->comm_world), "MPI_Allreduce");
    return out;
  }
};

std::unique_ptr<device::DeviceBackend> open_device(device::DeviceSelection& sel) {
  sel = device::select_device(device::DeviceChoice::Gpu);
  if (sel.emulated) return std::make_unique<device::EmulatedBackend>();
#ifndef TESSERA_NO_CUDA_HEADERS
  return std::make_unique<device::CudaBackend>(sel);
#else
  throw std::runtime_error("built without the CUDA headers: no GPU backend");
#endif
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

class PlainAllReduce {
 public:
  PlainAllReduce(const Bootstrap& boot, device::DeviceBackend& dev, const comm::NcclLibrary& nccl)
      : boot_(boot), dev_(dev), nccl_(nccl) {
    stream_ = dev_.create_stream();
    ncclUniqueId id{};
    if (boot_.rank == 0) nccl_.check(nccl_.api().ncclGetUniqueId(&id), "ncclGetUniqueId");
    boot_.broadcast(&id, sizeof id);
    dev_.make_current();
    nccl_.check(nccl_.api().ncclCommInitRank(&comm_, boot_.size, id, boot_.rank), "ncclCommInitRank");
  }
  ~PlainAllReduce() {
    // Nothing is in flight by then; the loaded table (nccl_api.def) frees with ncclCommAbort.
    if (comm_) nccl_.api().ncclCommAbort(comm_);
  }

  // One size's figures (rank 0's are the slowest rank's).
  json measure(size_t bytes, const Options& o) {
    const size_t n = bytes / 4;
    device::DeviceAllocator& alloc = dev_.allocator();
    const device::DevicePtr in = alloc.allocate(bytes), out = alloc.allocate(bytes);
    std::vector<float> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = bench::input_value(boot_.rank, i);
    dev_.upload(in, host.data(), bytes);
    order_after_kernels();  // the upload, on the kernels' stream
    boot_.barrier();
    for (int w = 0; w < o.warmup * o.calls; ++w) call(in, out, n);
    wait();
    dev_.download(host.data(), out, bytes);
    bench::check_result(host.data(), n, boot_.size, "plain NCCL", bytes);
    std::vector<double> per_call_s;
    for (int r = 0; r < o.reps; ++r) {
      boot_.barrier();
      const auto t0 = Clock::now();
      for (int k = 0; k < o.calls; ++k) call(in, out, n);
      wait();
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
      per_call_s.push_back(static_cast<double>(boot_.slowest(ns)) / 1e9 / o.calls);
    }
    alloc.free(in);
    alloc.free(out);
    const double med = median(per_call_s);
    const double algbw = static_cast<double>(bytes) / med / 1e9;
    return {{"bytes", bytes},
            {"median_us", med * 1e6},
            {"min_us", *std::min_element(per_call_s.begin(), per_call_s.end()) * 1e6},
            {"max_us", *std::max_element(per_call_s.begin(), per_call_s.end()) * 1e6},
            {"algbw_gb_s", algbw},
            {"busbw_gb_s", algbw * 2.0 * (boot_.size - 1) / boot_.size},
            {"per_call_us", [&] {
               json a = json::array();
               for (double s : per_call_s) a.push_back(s * 1e6);
               return a;
             }()}};
  }

 private:
  // The calls' stream waits for the work on the kernels' stream so far.
  void order_after_kernels() {
    void* kernels = dev_.record_event(nullptr);
    dev_.stream_wait(stream_, kernels);
    dev_.destroy_event(kernels);
  }
  void call(device::DevicePtr in, device::DevicePtr out, size_t n) {
    if (dev_.host_memory()) order_after_kernels();  // the emulation's double checks it (header comment)
    nccl_.check(nccl_.api().ncclAllReduce(reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), n,
                                          ncclFloat32, ncclSum, comm_, static_cast<cudaStream_t>(stream_)),
                "ncclAllReduce", comm_);
  }
  // The host waits for the calls; the kernels' stream (the result's download, the next size's
  // upload into a reused block) is ordered after them too.
  void wait() {
    void* done = dev_.record_event(stream_);
    while (!dev_.event_done(done)) {
    }
    dev_.stream_wait(nullptr, done);
    dev_.destroy_event(done);
  }

  const Bootstrap& boot_;
  device::DeviceBackend& dev_;
  const comm::NcclLibrary& nccl_;
  void* stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

int run(int argc, char** argv) {
  const Options o = parse_args(argc, argv);
  Bootstrap boot;
  device::DeviceSelection sel;
  std::unique_ptr<device::DeviceBackend> dev = open_device(sel);
  const comm::NcclLibrary& nccl = comm::NcclLibrary::get();
  if (!nccl.available()) throw std::runtime_error(nccl.why_unavailable());
  json sizes = json::array();
  {
    PlainAllReduce bench(boot, *dev, nccl);
    for (size_t bytes : o.sizes) {
      if (boot.rank == 0) std::cerr << fmt::format("nccl_allreduce_bench: {} bytes\n", bytes);
      sizes.push_back(bench.measure(bytes, o));
    }
  }
  if (boot.rank != 0) return 0;
  const json doc = {{"benchmark", "nccl_allreduce_bench"},
                    {"ranks", boot.size},
                    {"device", sel.describe()},
                    {"nccl", nccl.describe()},
                    {"calls", o.calls},
                    {"reps", o.reps},
                    {"warmup", o.warmup},
                    {"sizes", sizes}};
  if (o.json_path.empty()) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::ofstream f(o.json_path);
    f << doc.dump(2) << "\n";
    if (!f) throw std::runtime_error("cannot write " + o.json_path);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "nccl_allreduce_bench: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nccl_allreduce_bench: " << e.what() << "\n";
    return 2;
  }
}
