// All-reduce bus bandwidth of Tessera's collectives against plain MPI, in
// one run (a benchmark, never a test). Run under mpirun:
//
//   mpirun -np 2 build/experiments/micro/collectives_bench [--budget-s 3] [--json FILE]
//
// Each rank joins the world as tessera-vm does (comm::join_world), then for
// each size (f32, 1 KB to 256 MB in powers of --factor, default 4, which
// includes 1, 16, 64 and 256 MB) on tensors made once:
//   (a) Tessera: process_collectives().all_reduce(in, ReduceOp::Sum, out),
//       the call a script's all_reduce(t) makes, description exchange
//       included;
//   (b) plain MPI_Allreduce of the same buffers on MPI_COMM_WORLD (this
//       program links MPI; the VM never does, it loads libmpi at run time,
//       the same library this process already has).
// Warm-up calls of each (their results checked element by element), then
// timed iterations: as many as --budget-s (per size, both sides together)
// allows at the warm-up's mean time (its first calls left out), between
// --min-iters and --max-iters.
// Each iteration times one call of each side, the two in alternating order
// (ab, ba, ab, ...) so that a slow moment of the machine hits both, every
// call after an MPI_Barrier so that the ranks start it together. A call's
// time is the slowest rank's (as nccl-tests reports); per size and side:
// the median over the iterations, algorithm bandwidth = bytes / time, bus
// bandwidth = algbw * 2(n-1)/n (nccl-tests' all-reduce factor; 0 for one
// rank), and the ratio of Tessera's bus bandwidth over MPI's.
// Rank 0 prints one JSON document (stdout, or --json FILE);
// experiments/harness/run_collectives_bench.py runs it and writes the table.
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/micro/allreduce_pattern.h"
#include "runtime/comm/process_world.h"
#include "vm/graph/collectives.h"
#include "vm/tensor/tensor.h"

namespace {

using namespace tessera;
using json = nlohmann::json;
using bench::check_result;
using bench::input_value;
using Clock = std::chrono::steady_clock;

struct Options {
  size_t min_bytes = size_t{1} << 10;
  size_t max_bytes = size_t{256} << 20;
  size_t factor = 4;
  double budget_s = 3;  // timed iterations per size, both sides together
  int min_iters = 5, max_iters = 1000;
  double timeout_s = 600;  // each Tessera collective's deadline (commtimeout)
  std::string json_path;   // "" = stdout
};

void usage(std::ostream& os) {
  os << "usage: mpirun -np N collectives_bench [--min-bytes B] [--max-bytes B] [--factor F] [--budget-s S]\n"
        "       [--min-iters N] [--max-iters N] [--timeout-s S] [--json FILE]\n";
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
    if (a == "--min-bytes") o.min_bytes = std::stoull(v);
    else if (a == "--max-bytes") o.max_bytes = std::stoull(v);
    else if (a == "--factor") o.factor = std::stoull(v);
    else if (a == "--budget-s") o.budget_s = std::stod(v);
    else if (a == "--min-iters") o.min_iters = std::stoi(v);
    else if (a == "--max-iters") o.max_iters = std::stoi(v);
    else if (a == "--timeout-s") o.timeout_s = std::stod(v);
    else if (a == "--json") o.json_path = v;
    else throw std::invalid_argument("unknown option " + a);
  }
  if (o.factor < 2 || o.min_bytes < 4 || o.max_bytes < o.min_bytes || o.min_iters < 1 || o.max_iters < o.min_iters)
    throw std::invalid_argument("sizes need 4 <= min-bytes <= max-bytes and factor >= 2; 1 <= min-iters <= max-iters");
  return o;
}

// min_bytes * factor^k up to max_bytes, and 1, 16, 64 and 256 MB where in range;
// each rounded down to whole f32 elements.
std::vector<size_t> sizes_of(const Options& o) {
  std::vector<size_t> s;
  for (size_t b = o.min_bytes; b <= o.max_bytes; b *= o.factor) s.push_back(b / 4 * 4);
  for (size_t mb : {1, 16, 64, 256})
    if ((mb << 20) >= o.min_bytes && (mb << 20) <= o.max_bytes) s.push_back(mb << 20);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(fmt::format("{} failed ({})", what, code));
}

// What a view's tensor owns of the buffers it is over: nothing.
struct View : ExternalStorage {};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double percentile(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  const double at = p / 100 * static_cast<double>(xs.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (at - static_cast<double>(lo));
}

// One side's figures at one size from the slowest rank's time of each iteration.
json side_figures(const std::vector<double>& times_s, size_t bytes, int ranks) {
  const double med = percentile(times_s, 50);
  const double algbw = static_cast<double>(bytes) / med / 1e9;
  const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
  return {{"median_us", med * 1e6},
          {"p10_us", percentile(times_s, 10) * 1e6},
          {"p90_us", percentile(times_s, 90) * 1e6},
          {"min_us", *std::min_element(times_s.begin(), times_s.end()) * 1e6},
          {"algbw_gb_s", algbw},
          {"busbw_gb_s", busbw}};
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  check_mpi(MPI_Get_library_version(text, &len), "MPI_Get_library_version");
  std::string v(text, static_cast<size_t>(len));
  while (!v.empty() && (v.back() == '\n' || v.back() == '\0')) v.pop_back();
  return v;
}

int run(const Options& o) {
  // Buckets off: each call is timed to its result (a bucketed all_reduce
  // returns before it, its elements pending until read).
  comm::join_world(o.timeout_s, 0);
  Collectives& coll = process_collectives();
  int rank = 0, ranks = 1;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &ranks), "MPI_Comm_size");
  if (!coll.distributed() || coll.size() != ranks || coll.rank() != rank)
    throw std::runtime_error("Tessera's collectives did not join MPI's world (run this under mpirun)");

  const std::vector<size_t> sizes = sizes_of(o);
  const size_t max_count = sizes.back() / 4;
  // One pair of tensors at the largest size, made once and touched; every
  // size uses their first elements (a view of `count` elements over them).
  Value in_buf = make_tensor(DType::F32, {static_cast<int64_t>(max_count)}, false);
  Value out_buf = make_tensor(DType::F32, {static_cast<int64_t>(max_count)}, true);
  float* in_data = in_buf.as_tensor()->ptr<float>();
  float* out_data = out_buf.as_tensor()->ptr<float>();
  for (size_t i = 0; i < max_count; ++i) in_data[i] = input_value(rank, i);

  json rows = json::array();
  const auto start = Clock::now();
  for (const size_t bytes : sizes) {
    const size_t count = bytes / 4;
    // Tensors of `count` elements over the shared buffers.
    TensorObj in(DType::F32, {static_cast<int64_t>(count)}, in_data, std::make_unique<View>());
    TensorObj out(DType::F32, {static_cast<int64_t>(count)}, out_data, std::make_unique<View>());

    auto tessera_call = [&] { coll.all_reduce(in, ReduceOp::Sum, out); };
    auto mpi_call = [&] {
      check_mpi(MPI_Allreduce(in_data, out_data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
    };
    auto timed = [&](auto&& call) {
      check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      const auto t0 = Clock::now();
      call();
      return seconds_since(t0);
    };

    // Warm-up: fewer calls at the large sizes; each side's result checked.
    const int warmup = bytes < (size_t{1} << 20) ? 20 : bytes < (size_t{64} << 20) ? 5 : 2;
    double warm_s = 0;  // both sides' calls after the first (which also touches the pages)
    for (int i = 0; i < warmup; ++i) {
      std::memset(out_data, 0, bytes);
      const double a = timed(tessera_call);
      if (i == 0) check_result(out_data, count, ranks, "Tessera", bytes);
      std::memset(out_data, 0, bytes);
      const double b = timed(mpi_call);
      if (i == 0) check_result(out_data, count, ranks, "MPI", bytes);
      if (i > 0) warm_s += a + b;
    }
    // Rank 0 sizes the timed loop from its warm-up calls; every rank runs that many.
    const double per_iteration = std::max(warm_s / (warmup - 1), 1e-9);
    int iters = std::clamp(static_cast<int>(o.budget_s / per_iteration), o.min_iters, o.max_iters);
    check_mpi(MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");

    std::vector<double> ta(static_cast<size_t>(iters)), tb(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (i % 2 == 0) {
        ta[k] = timed(tessera_call);
        tb[k] = timed(mpi_call);
      } else {
        tb[k] = timed(mpi_call);
        ta[k] = timed(tessera_call);
      }
    }
    // Each iteration's time is its slowest rank's.
    std::vector<double> ma(ta.size()), mb(tb.size());
    check_mpi(MPI_Reduce(ta.data(), ma.data(), iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    check_mpi(MPI_Reduce(tb.data(), mb.data(), iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (rank == 0) {
      json a = side_figures(ma, bytes, ranks), b = side_figures(mb, bytes, ranks);
      const double ratio = b["busbw_gb_s"].get<double>() > 0
                               ? a["busbw_gb_s"].get<double>() / b["busbw_gb_s"].get<double>()
                               : a["algbw_gb_s"].get<double>() / b["algbw_gb_s"].get<double>();
      std::cerr << fmt::format("collectives_bench: {:>10} bytes, {:4} iterations: MPI {:8.3f} GB/s, Tessera {:8.3f} GB/s "
                               "(bus bandwidth), ratio {:.3f}\n",
                               bytes, iters, b["busbw_gb_s"].get<double>(), a["busbw_gb_s"].get<double>(), ratio);
      rows.push_back({{"bytes", bytes},
                      {"count", count},
                      {"warmup", warmup},
                      {"iterations", iters},
                      {"tessera", a},
                      {"mpi", b},
                      {"ratio", ratio}});
    }
  }

  if (rank == 0) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    json doc = {
        {"benchmark", "collectives_bench"},
        {"operation", "all_reduce, f32, sum"},
        {"np", ranks},
        {"hostname", host},
        {"mpi_library", library_version()},
        {"tessera_transport", coll.describe()},
        {"protocol",
         {{"sizes", "min-bytes * factor^k up to max-bytes, and 1, 16, 64, 256 MB"},
          {"min_bytes", o.min_bytes},
          {"max_bytes", o.max_bytes},
          {"factor", o.factor},
          {"budget_s_per_size", o.budget_s},
          {"min_iters", o.min_iters},
          {"max_iters", o.max_iters},
          {"warmup", "20 calls of each side below 1 MB, 5 below 64 MB, 2 from 64 MB"},
          {"order", "per iteration one call of each side, alternating ab, ba; an MPI_Barrier before every call"},
          {"time", "per iteration the slowest rank's time of the call; the median over the iterations"},
          {"busbw", "algbw * 2(n-1)/n, algbw = bytes / time (GB/s, 1e9 bytes)"},
          {"ratio", "Tessera's bus bandwidth / MPI's (algorithm bandwidths for one rank)"}}},
        {"seconds", seconds_since(start)},
        {"sizes", rows}};
    const std::string text = doc.dump(2) + "\n";
    if (o.json_path.empty()) {
      std::cout << text;
    } else {
      std::ofstream f(o.json_path);
      f << text;
      if (!f) throw std::runtime_error("cannot write " + o.json_path);
    }
  }
  comm::leave_world();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_args(argc, argv);
  } catch (const std::exception& e) {  // a bad option, or a number std::sto* cannot read
    std::cerr << "collectives_bench: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "collectives_bench: " << e.what() << "\n";
    // The other ranks may be waiting in a collective: mpirun ends them too.
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
